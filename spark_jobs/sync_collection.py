"""spark-submit entrypoint: init, pull, push or sync one publication of a collection (see snaprepl.collections.job)."""

import sys

from snaprepl.collections.job import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
