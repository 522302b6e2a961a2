#!/usr/bin/env bash
# ensure_services: PostgreSQL (127.0.0.1:5432) and MariaDB (127.0.0.1:3306) must answer; start them
# where this machine can (Debian packages), else say how. Tests never skip a missing database.

_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

_wait_port() {
  for _ in $(seq 1 60); do _port_open "$1" && return 0; sleep 1; done
  return 1
}

ensure_services() {
  if ! _port_open 5432; then
    echo "services: PostgreSQL is not answering on 127.0.0.1:5432; starting it" >&2
    if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
      pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
    fi
    _wait_port 5432 || { echo "services: error: PostgreSQL is needed on 127.0.0.1:5432 (trust auth, user postgres); start it, e.g. pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql) main start" >&2; return 1; }
  fi
  if ! _port_open 3306; then
    echo "services: MariaDB is not answering on 127.0.0.1:3306; starting it" >&2
    if [ -x /usr/sbin/mariadbd ]; then
      start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
    fi
    _wait_port 3306 || { echo "services: error: MariaDB is needed on 127.0.0.1:3306 (root, no password); start it, e.g. start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd" >&2; return 1; }
  fi
}
