"""``python -m snaprepl``."""

from snaprepl.cli import run

run()
