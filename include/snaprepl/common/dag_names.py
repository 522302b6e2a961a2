"""Names of snaprepl's generated DAGs, tasks and Assets (importable without Airflow).

Every name here is ASCII and injective: a catalog key made only of plain parts (letters, digits and
single inner underscores) keeps its readable form, e.g. ``snaprepl_refresh__src__public__orders``;
any other key (spaces, unicode, quotes, dots, double underscores, a very long name) gets a readable
slug plus ``__h`` and a hash of the exact key, so ``"with space"@myx`` and ``with_space@myx`` stay
two DAGs. Two different keys can then share a DAG id only by a hash collision, which
:func:`dag_id_collision` refuses at creation.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from typing import Any

RPLOG_PURGE_DAG = "snaprepl_purge_replay_logs"
LOG_PURGE_DAG = "snaprepl_purge_snapshot_logs"
URPLOG_PURGE_DAG = "snaprepl_purge_update_replay_logs"
SNAPSHOT_PREFIX = "snaprepl_refresh"
VERIFY_PREFIX = "snaprepl_verify"
PUBLICATION_PREFIX = "snaprepl_sync"
#: Airflow's limit on DAG and task ids.
MAX_ID = 250
_PLAIN = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*")


def slug(text: str) -> str:
    """``text`` with every run of characters other than letters, digits and ``_`` made one ``_``."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")[:200]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def safe_id(key: str, parts: list[str], prefix: str = "") -> str:
    """``prefix__part1__part2...`` when every part is plain and the id fits; otherwise the parts'
    slugs and ``__h<hash of key>`` (an id with one more ``__`` field than any plain id)."""
    head = [prefix] if prefix else []
    if all(_PLAIN.fullmatch(p) for p in parts):
        plain = "__".join([*head, *parts])
        if len(plain) <= MAX_ID:
            return plain
    suffix = f"__h{digest(key)}"
    readable = "__".join([*head, *(slug(p) or "x" for p in parts)])
    return readable[: MAX_ID - len(suffix)] + suffix


def _key_parts(name: str) -> list[str]:
    table, _, conn = name.rpartition("@")
    schema, _, table = table.partition(".")
    return [conn, schema, table]


def snapshot_dag_id(name: str) -> str:
    """DAG id of a snapshot's refresh DAG: ``snaprepl_refresh__<conn>__<schema>__<table>``."""
    return safe_id(name, _key_parts(name), SNAPSHOT_PREFIX)


def verify_dag_id(name: str) -> str:
    """DAG id of a snapshot's verify DAG (when it has a verify schedule): ``snaprepl_verify__...``."""
    return safe_id(name, _key_parts(name), VERIFY_PREFIX)


def publication_verify_dag_id(item: str) -> str:
    """DAG id of a publication's verify DAG (its replicas, when it has a verify schedule):
    ``snaprepl_verify_pub__...``."""
    return safe_id(item, _key_parts(item), f"{VERIFY_PREFIX}_pub")


def publication_dag_id(item: str) -> str:
    """DAG id of a publication's sync DAG: ``snaprepl_sync__<conn>__<schema>__<table>``."""
    return safe_id(item, _key_parts(item), PUBLICATION_PREFIX)


def task_key(text: str) -> str:
    """The part of a task id naming a log source or a server (injective, like the DAG ids)."""
    return safe_id(text, [text])


def asset_uri(conn_id: str, schema: str, table: str) -> str:
    """``snaprepl://<conn>/<schema>/<table>``, each part percent-encoded (ASCII and injective)."""
    return "snaprepl://" + "/".join(urllib.parse.quote(p, safe="") for p in (conn_id, schema, table))


def dag_id_collision(catalog: Any, name: str, *, publication: bool = False) -> str | None:
    """The catalog's other snapshot (or publication) whose DAG id equals ``name``'s, if any.

    A creation path calls it before adding ``name`` and refuses the name when it returns one.
    """
    if publication:
        wanted, others = publication_dag_id(name), [p.sp_item for p in catalog.publications()]
        return next((o for o in others if o != name and publication_dag_id(o) == wanted), None)
    wanted = snapshot_dag_id(name)
    others = [s.sn_name for s in catalog.snapshots()]
    return next((o for o in others if o != name and snapshot_dag_id(o) == wanted), None)


GROUP_PREFIX = "snaprepl_group"


def group_dag_id(name: str) -> str:
    """DAG id of a snapshot group's DAG: ``snaprepl_group__<conn>__<name>``."""
    group, _, conn = name.rpartition("@")
    return safe_id(name, [conn, group], GROUP_PREFIX)
