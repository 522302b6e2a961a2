"""spark-submit entrypoint: verify (or repair) one snapshot (see snaprepl.verify.job)."""

import sys

from snaprepl.verify.job import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
