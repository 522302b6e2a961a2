"""The supervisor of a local Spark Connect server (``snaprepl spark-server start`` runs it).

``python -m snaprepl.submit.supervisor <state dir> -- <server command line>`` runs the server's
command and starts it again when it dies after it had been up :data:`STEADY_SECONDS` (a JVM killed by
the kernel's OOM killer, a ``kill -9``): a restarted server listens on the same port with the same
token (its environment), so the Airflow connection defined once stays valid. A server that dies sooner
is not restarted (a wrong setting would only fail again): the supervisor exits with its code, and
``snaprepl spark-server start`` shows the log's end. More than :data:`MAX_RESTARTS` restarts within
:data:`RESTART_WINDOW` seconds give up the same way. SIGTERM (``snaprepl spark-server stop``) stops
both. Each start of the server is noted in ``process.json`` (``server_pid``, ``restarts``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

#: A server up at least this long is restarted when it dies.
STEADY_SECONDS = 10.0
#: Most restarts within :data:`RESTART_WINDOW` seconds.
MAX_RESTARTS = 5
RESTART_WINDOW = 600.0


#: The state directory's file that names the server's current process.
PROCESS_FILE = "process.json"


def note(directory: Path, **values: object) -> None:
    """Write ``values`` to the state directory's :data:`PROCESS_FILE` (replaced in one step)."""
    path = directory / PROCESS_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(values))
    tmp.replace(path)


def supervise(directory: Path, command: Sequence[str]) -> int:
    """Run ``command`` until SIGTERM, restarting it as the module says; the exit code."""
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    restarts: list[float] = []
    while True:
        started = time.monotonic()
        server = subprocess.Popen(list(command), stdin=subprocess.DEVNULL)  # its output: this one's (the log)
        note(directory, server_pid=server.pid, restarts=len(restarts), started_at=time.time())
        while server.poll() is None and not stopping.wait(0.5):
            pass
        if stopping.is_set():
            server.terminate()
            return server.wait()
        code = server.returncode
        now = time.monotonic()
        restarts = [t for t in restarts if now - t < RESTART_WINDOW]
        if now - started < STEADY_SECONDS or len(restarts) >= MAX_RESTARTS:
            print(f"snaprepl: the Spark Connect server exited with code {code}: not restarted", flush=True)
            return code or 1
        print(f"snaprepl: the Spark Connect server (pid {server.pid}) exited with code {code}: restarting", flush=True)
        restarts.append(now)
        time.sleep(1)


def main(argv: Sequence[str]) -> int:
    directory, separator, *command = argv
    if separator != "--" or not command:
        print("usage: python -m snaprepl.submit.supervisor <state dir> -- <command ...>", file=sys.stderr)
        return 2
    return supervise(Path(directory), command)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
