"""The ``snaprepl`` command: :mod:`snaprepl.cli.command` parses and runs it; :mod:`snaprepl.cli.ddl` is ``ddl``.

``main`` and ``run`` (the console script's entry point) are importable from here.
"""

from __future__ import annotations

from snaprepl.cli.command import main, run

__all__ = ["main", "run"]
