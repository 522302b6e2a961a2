"""``snaprepl status``: the catalog as a readable report, or as JSON for machines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from snaprepl.catalog.store import Catalog, LogRecord
from snaprepl.db import Database
from snaprepl.errors import SnapreplError
from snaprepl.settings import Settings


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(sep=" ", timespec="microseconds") if value else None


def _log_backlog(record: LogRecord) -> dict[str, Any]:
    """Rows in the log and the newest SNAPTIME, read from the source database."""
    try:
        database = Database.for_conn_id(record.snl_conn)
        dialect = database.dialect
        rlog = dialect.qualified(record.snl_schema, record.snl_rlog)
        snaptime = dialect.quote(dialect.log_columns.snaptime)
        with database.session() as session:
            rows, newest = session.query(f"SELECT COUNT(*), MAX({snaptime}) FROM {rlog}")[0]
        return {"rows": int(rows), "newest_snaptime": _iso(dialect.snaptime_value(newest)), "error": None}
    except SnapreplError as err:
        return {"rows": None, "newest_snaptime": None, "error": str(err)}
    except Exception as err:  # an unreachable or broken source must not hide the rest of the report
        return {
            "rows": None,
            "newest_snaptime": None,
            "error": f"{type(err).__name__}: {str(err).splitlines()[0]}",
        }


def collect_status(catalog: Catalog, settings: Settings, *, probe: bool = True) -> dict[str, Any]:
    """The whole catalog as plain data.

    :param probe: also connect to sources to count pending log rows.
    """
    catalog.ensure_ready()
    logs = []
    for record in catalog.logs():
        objects = record.objects
        entry: dict[str, Any] = {
            "source": record.snl_source,
            "dialect": record.snl_dialect,
            "kind": record.snl_kind,
            "rlog": objects.rlog,
            "key_columns": record.key_columns,
            "triggers": list(objects.triggers),
            "created_at": _iso(record.snl_created_at),
            "purged_before": _iso(record.snl_purged_before),
            "last_purge_at": _iso(record.snl_last_purge_at),
        }
        if probe:
            entry["backlog"] = _log_backlog(record)
        logs.append(entry)
    return {
        "catalog": catalog.describe(),
        "settings": {
            "snp_repl_tolerance_offset": settings.snp_repl_tolerance_offset,
            "snp_repl_purge_offset": settings.snp_repl_purge_offset,
        },
        "snapshot_logs": logs,
    }


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    if not rows:
        return f"{title}: none"
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = "  ".join("-" * w for w in widths)
    out = [f"{title}:", "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)), line]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(out)


def render_text(status: dict[str, Any]) -> str:
    parts = [f"catalog: {status['catalog']}"]
    log_rows = []
    for entry in status["snapshot_logs"]:
        backlog = entry.get("backlog") or {}
        pending = backlog.get("error") or backlog.get("rows")
        log_rows.append(
            [
                entry["source"],
                entry["kind"],
                entry["rlog"],
                ", ".join(entry["key_columns"]),
                pending,
                backlog.get("newest_snaptime"),
                entry["purged_before"],
            ]
        )
    parts.append(
        _table(
            "snapshot logs",
            ["source", "kind", "log table", "key", "rows", "newest SNAPTIME", "purged before"],
            log_rows,
        )
    )
    return "\n\n".join(parts)


def render_json(status: dict[str, Any]) -> str:
    return json.dumps(status, indent=2, sort_keys=True)
