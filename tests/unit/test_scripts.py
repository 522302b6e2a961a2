"""The shell scripts behind the README's two commands."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bash(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_sourcing_setup_keeps_the_callers_errexit_so_failures_stop_demo_and_tests() -> None:
    stopped = _bash("set -euo pipefail; . scripts/setup.sh >/dev/null; false; echo reached")
    assert stopped.returncode != 0 and "reached" not in stopped.stdout


def test_sourcing_setup_leaves_a_caller_without_errexit_as_it_was() -> None:
    going_on = _bash(". scripts/setup.sh >/dev/null; false; echo reached; shopt -qo pipefail || echo no-pipefail")
    assert going_on.returncode == 0 and going_on.stdout.split() == ["reached", "no-pipefail"]
