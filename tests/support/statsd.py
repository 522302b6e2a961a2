"""A StatsD server for tests: a UDP socket on a free port of 127.0.0.1 that keeps what it receives."""

from __future__ import annotations

import socket
import threading


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
