"""A throw-away PostgreSQL server of a test's own (``initdb`` + ``pg_ctl`` on a free loopback port,
trust authentication), which the test may stop, kill and start again: a catalog or a source whose
server dies in the middle of a run. Stopped (killed if need be) and removed when the context ends.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.tls_postgres import _as_server_user, _bin, _free_port, _stop, run_psql


@dataclass(frozen=True)
class OwnPostgres:
    port: int
    directory: Path

    @property
    def data(self) -> Path:
        return self.directory / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        return run_psql(self.directory, self.port, database, sql)

    def _pg_ctl(self, *args: str) -> None:
        subprocess.run(
            _as_server_user([_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.directory / "server.log"), *args]),
            check=True,
            capture_output=True,
            timeout=120,
        )

    def start(self) -> None:
        self._pg_ctl("-w", "start")

    def stop(self) -> None:
        """Stop at once (``-m immediate``: every connection is cut, as when the server crashes)."""
        self._pg_ctl("-m", "immediate", "-w", "stop")

    def pid(self) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.data / "postmaster.pid").read_text().splitlines()[0])
        return None


@contextlib.contextmanager
def own_postgres() -> Iterator[OwnPostgres]:
    directory = Path(tempfile.mkdtemp(prefix="snaprepl-own-pg-"))
    server = OwnPostgres(_free_port(), directory)
    try:
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chmod(directory, 0o755)
            os.chown(directory, account.pw_uid, account.pw_gid)
        subprocess.run(
            _as_server_user([_bin("initdb"), "-D", str(server.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"]),
            check=True,
            capture_output=True,
            timeout=120,
        )
        with (server.data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"port = {server.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{directory}'\n"
                "fsync = off\nshared_buffers = 16MB\nmax_connections = 40\n"
            )
        server.start()
        yield server
    finally:
        _stop(server.data, server.pid())
        shutil.rmtree(directory, ignore_errors=True)
