"""Small helpers of the test Airflow deployment: free ports and readable task logs."""

from __future__ import annotations

import json
import socket
from pathlib import Path


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a text file, or why there are none."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return "(no such file)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty)"


def render_task_log(text: str) -> str:
    """A task log (one JSON object per line) as ``time level event`` lines, with any error details."""
    out = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if not isinstance(item, dict):
            out.append(line)
            continue
        out.append(f"{str(item.get('timestamp', ''))[11:19]} {item.get('level', '')} {item.get('event', '')}")
        for detail in item.get("error_detail") or []:
            if isinstance(detail, dict):
                out.append(f"    {detail.get('exc_type')}: {detail.get('exc_value')}")
    return "\n".join(out)
