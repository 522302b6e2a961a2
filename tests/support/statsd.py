"""A StatsD server for tests: a UDP socket on a free port of 127.0.0.1 that keeps what it receives."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable


class StatsdListener:
    """Receives StatsD datagrams in a thread until closed; :meth:`lines` are the metrics received."""

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.settimeout(0.5)
        self.port: int = self.socket.getsockname()[1]
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, name="statsd-listener", daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.socket.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._lines.extend(line for line in data.decode(errors="replace").splitlines() if line)

    def lines(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.socket.close()


def send_metrics(code: str, until: Callable[[list[str]], bool] = bool) -> list[str]:
    """Run Python ``code`` in a new interpreter whose Airflow ``[metrics]`` send StatsD (InfluxDB tags)
    to a listener of this test; the lines received once ``until`` says they are all there (at most 10 s)."""
    listener = StatsdListener()
    try:
        env = {
            **os.environ,
            "AIRFLOW__METRICS__STATSD_ON": "True",
            "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
            "AIRFLOW__METRICS__STATSD_PORT": str(listener.port),
            "AIRFLOW__METRICS__STATSD_INFLUXDB_ENABLED": "True",
        }
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not until(listener.lines()):
            time.sleep(0.1)
        return listener.lines()
    finally:
        listener.close()
