"""``python -m snaprepl``."""

import sys

from snaprepl.cli import main

sys.exit(main())
