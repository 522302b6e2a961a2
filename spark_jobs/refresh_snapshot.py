"""spark-submit entrypoint: refresh one snapshot (see snaprepl.refresh.job)."""

import sys

from snaprepl.refresh.job import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
