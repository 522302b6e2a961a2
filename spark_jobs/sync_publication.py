"""spark-submit entrypoint: init, pull, push or sync one publication (see snaprepl.bidir.job)."""

import sys

from snaprepl.bidir.job import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
