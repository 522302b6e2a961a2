"""What ``snaprepl status`` says about each log's watermarks: how its readers bound them (transaction
ids, SNAPTIME capped by the source's open transactions, or SNAPTIME with the tolerance window where
those cannot be seen), and the source transactions open longer than
``[snaprepl] long_transaction_warn_minutes``, which hold the watermarks back (see
:mod:`snaprepl.dialects.watermarks`)."""

from __future__ import annotations

from typing import Any

from snaprepl.catalog.records import LogRecord
from snaprepl.database.sessions import Database
from snaprepl.settings import Settings

BY_XIDS = "exact: transaction ids"
CAPPED = "exact: SNAPTIME capped by open transactions"
TOLERANCE = "not exact: SNAPTIME with the tolerance window"


def log_watermarks(record: LogRecord, settings: Settings) -> dict[str, Any]:
    """``{"mode", "note", "long_transactions", "error"}`` of the log ``record``, read from its source."""
    try:
        database = Database.for_conn_id(record.snl_conn)
        dialect = database.dialect
        with database.session() as session:
            high = dialect.high_water(session)
            xids = dialect.logs_xids and dialect.log_has_xids(session, record.snl_schema, record.objects.rlog)
            minutes = settings.long_transaction_warn_minutes
            found = dialect.open_transactions(session, minutes) if minutes else []
    except Exception as err:  # an unreachable source must not hide the rest of the report
        return {"mode": None, "note": None, "long_transactions": [], "error": f"{type(err).__name__}: {err}"}
    mode = BY_XIDS if xids else CAPPED if high.exact else TOLERANCE
    return {
        "mode": mode,
        "note": high.note,
        "long_transactions": [t.describe() for t in found or []],
        "error": None,
    }
