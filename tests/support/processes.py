"""Processes of a Spark job, found through /proc: the CLI's spark-submit JVM, its Python driver, and
anything else that still names the job in its command line or environment."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path


def _read(pid: int, what: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/{what}").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return b""


def cmdline(pid: int) -> str:
    return _read(pid, "cmdline").replace(b"\0", b" ").decode(errors="replace")


def parent_of(pid: int) -> int | None:
    stat = _read(pid, "stat").decode(errors="replace")
    if not stat:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    stat = _read(pid, "stat").decode(errors="replace")
    return bool(stat) and stat.rsplit(")", 1)[1].split()[0] != "Z"


def pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def children(pid: int) -> list[int]:
    return [p for p in pids() if parent_of(p) == pid]


def descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = [pid]
    while todo:
        found = children(todo.pop())
        out += found
        todo += found
    return out


def mentioning(marker: str) -> list[int]:
    """Live processes (not this one) whose command line or environment contains ``marker``."""
    me = os.getpid()
    needle = marker.encode()
    return [
        p for p in pids() if p != me and alive(p) and (needle in _read(p, "cmdline") or needle in _read(p, "environ"))
    ]


def wait_for(check: Callable[[], object], timeout: float, interval: float = 0.1) -> object:
    """The first truthy result of ``check()`` within ``timeout`` seconds, else the last falsy one."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(interval)


def job_processes(cli_pid: int) -> tuple[int | None, int | None]:
    """(JVM, Python driver) under a CLI process, once both are there (else None for the missing)."""
    # argv[0] itself: spark-submit's bash script names java jars in its arguments before it execs java.
    jvm = next((p for p in children(cli_pid) if Path(cmdline(p).split(" ")[0]).name == "java"), None)
    driver = next((p for p in children(jvm) if "python" in cmdline(p)), None) if jvm else None
    return jvm, driver


def kill_quietly(pid: int, signal_number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal_number)
