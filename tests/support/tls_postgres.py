"""A throw-away PostgreSQL server that accepts TLS connections only, for the TLS tests.

``initdb`` in a temporary directory, a self-signed CA and a server certificate for 127.0.0.1 and
localhost made with ``openssl``, ``ssl = on``, and ``hostssl`` lines only in pg_hba.conf (no
``host`` line: a connection without TLS is refused). It listens on a free loopback port and is
stopped (killed if need be) when the context ends, whatever happened.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PASSWORD = "Tls-s3cret-pw"
#: The role that logs in with a client certificate (pg_hba ``cert``), no password.
CERT_USER = "certuser"


@dataclass(frozen=True)
class TlsServer:
    port: int
    ca_cert: Path
    other_ca_cert: Path
    directory: Path

    def conn_json(self, database: str, login: str = "postgres", password: str | None = PASSWORD, **extra: str) -> str:
        """An ``AIRFLOW_CONN_*`` value (JSON) for ``database`` with the given extras."""
        import json

        fields = {"conn_type": "postgres", "host": "127.0.0.1", "port": self.port, "login": login, "schema": database}
        return json.dumps({**fields, "password": password, "extra": extra})

    def psql(self, database: str, sql: str) -> str:
        """Run SQL over the server's Unix socket (trusted locally), return psql's output."""
        return run_psql(self.directory, self.port, database, sql)


def run_psql(socket_dir: Path, port: int, database: str, sql: str) -> str:
    """Run SQL as ``postgres`` over a test server's Unix socket (trusted locally), return psql's output."""
    where = ["-h", str(socket_dir), "-p", str(port), "-U", "postgres", "-d", database]
    result = subprocess.run(
        [_bin("psql"), *where, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return result.stdout.strip()


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError(f"{name} not found under /usr/lib/postgresql/*/bin: install postgresql")
    return found[-1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _make_certificates(directory: Path) -> None:
    """A CA, a server certificate it signed (SAN 127.0.0.1 and localhost), and an unrelated CA."""
    for ca in ("ca", "other_ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN=snaprepl test {ca}",
                 "-keyout", f"{ca}.key", "-out", f"{ca}.crt", cwd=directory)  # fmt: skip
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key",
             "-out", "server.csr", cwd=directory)  # fmt: skip
    (directory / "san.ext").write_text("subjectAltName = IP:127.0.0.1, DNS:localhost\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "2", "-extfile", "san.ext", "-out", "server.crt", cwd=directory)  # fmt: skip
    # A client certificate for CERT_USER; its key as PEM (libpq) and as PKCS-8 DER beside it (pgjdbc).
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={CERT_USER}", "-keyout", "client.key",
             "-out", "client.csr", cwd=directory)  # fmt: skip
    _openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "2", "-out", "client.crt", cwd=directory)  # fmt: skip
    _openssl("pkcs8", "-topk8", "-inform", "PEM", "-outform", "DER", "-nocrypt", "-in", "client.key",
             "-out", "client.key.pk8", cwd=directory)  # fmt: skip
    (directory / "client.key").chmod(0o600)


def _as_server_user(command: list[str]) -> list[str]:
    """initdb and pg_ctl refuse to run as root: run them as the postgres account then."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextlib.contextmanager
def tls_only_postgres() -> Iterator[TlsServer]:
    directory = Path(tempfile.mkdtemp(prefix="snaprepl-tls-"))
    data = directory / "data"
    proc_pid: int | None = None
    try:
        _make_certificates(directory)
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chmod(directory, 0o755)
            for name in ("server.key", "server.crt", "ca.crt"):
                os.chown(directory / name, account.pw_uid, account.pw_gid)
            os.chown(directory, account.pw_uid, account.pw_gid)
        (directory / "server.key").chmod(0o600)
        port = _free_port()
        subprocess.run(
            _as_server_user([_bin("initdb"), "-D", str(data), "-U", "postgres", "--auth-local=trust", "-E", "UTF8"]),
            check=True,
            capture_output=True,
            timeout=120,
        )
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{directory}'\n"
                f"ssl = on\nssl_cert_file = '{directory}/server.crt'\nssl_key_file = '{directory}/server.key'\n"
                f"ssl_ca_file = '{directory}/ca.crt'\n"
                "fsync = off\nshared_buffers = 16MB\nmax_connections = 40\nlog_connections = on\n"
            )
        (data / "pg_hba.conf").write_text(
            f"local all all trust\nhostssl all {CERT_USER} 127.0.0.1/32 cert\n"
            "hostssl all all 127.0.0.1/32 scram-sha-256\nhostssl all all ::1/128 scram-sha-256\n"
        )
        subprocess.run(
            _as_server_user([_bin("pg_ctl"), "-D", str(data), "-l", str(directory / "server.log"), "-w", "start"]),
            check=True,
            capture_output=True,
            timeout=120,
        )
        proc_pid = int((data / "postmaster.pid").read_text().splitlines()[0])
        server = TlsServer(port, directory / "ca.crt", directory / "other_ca.crt", directory)
        server.psql("postgres", f"ALTER USER postgres PASSWORD '{PASSWORD}'")
        server.psql("postgres", f"CREATE ROLE {CERT_USER} LOGIN")
        yield server
    finally:
        _stop(data, proc_pid)
        shutil.rmtree(directory, ignore_errors=True)


def _stop(data: Path, pid: int | None) -> None:
    if pid is None:
        return
    subprocess.run(
        _as_server_user([_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
        capture_output=True,
        timeout=60,
    )
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def tls_database(server: TlsServer, conn_id: str, name: str) -> Any:
    """A :class:`RealDatabase` on the TLS-only server: the tests' own reads and writes verify it too."""
    from tests.support.databases import RealDatabase

    @dataclass(frozen=True)
    class TlsDatabase(RealDatabase):
        @contextlib.contextmanager
        def connect(self) -> Iterator[Any]:
            import psycopg2

            conn = psycopg2.connect(
                host="127.0.0.1",
                port=server.port,
                user="postgres",
                password=PASSWORD,
                dbname=self.name,
                sslmode="verify-full",
                sslrootcert=str(server.ca_cert),
            )
            conn.autocommit = True
            try:
                yield conn
            finally:
                conn.close()

    return TlsDatabase("postgres", conn_id, name)
