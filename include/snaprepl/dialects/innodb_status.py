"""Open InnoDB transactions as ``SHOW ENGINE INNODB STATUS`` reports them, made fresh on every call.

``information_schema.INNODB_TRX`` is served from a cache InnoDB fills again only when its last read is
more than 0.1 s old, so a transaction begun since can be missing from it: a watermark capped by it
alone could pass that transaction's entries (MariaDB stamps them with their statements' times), and
they would never be applied. The status text is made when asked; it gives each transaction's age in
whole seconds (``ACTIVE n sec``), its undo log entries (rows it changed) and its session.
"""

from __future__ import annotations

import re
from datetime import timedelta

_TRANSACTION = re.compile(r"^---TRANSACTION \d+, ACTIVE (?:\(PREPARED\) )?(\d+) sec", re.MULTILINE)
_UNDO = re.compile(r"undo log entries (\d+)")
_THREAD = re.compile(r"thread id (\d+)")
_SECTION = "LIST OF TRANSACTIONS FOR EACH SESSION:"


def oldest_writer_age(status: str, own_thread: int) -> timedelta | None:
    """The age bound of the oldest open transaction that changed rows, other than session
    ``own_thread``'s, in ``status`` (the text of ``SHOW ENGINE INNODB STATUS``): its whole seconds plus
    one (``ACTIVE 1 sec`` is 1 to 2 s), ``timedelta(0)`` when there is none.

    :return: None when the text cannot tell (no transaction list, or a list InnoDB truncated).
    """
    start = status.find(_SECTION)
    if start < 0:
        return None
    section = status[start:]
    end = section.find("\n--------")
    section = section if end < 0 else section[:end]
    if "truncated" in section.lower():
        return None
    ages = [timedelta(0)]
    matches = list(_TRANSACTION.finditer(section))
    for i, found in enumerate(matches):
        block = section[found.end() : matches[i + 1].start() if i + 1 < len(matches) else len(section)]
        undo, thread = _UNDO.search(block), _THREAD.search(block)
        if undo is None or int(undo.group(1)) == 0 or (thread is not None and int(thread.group(1)) == own_thread):
            continue
        ages.append(timedelta(seconds=int(found.group(1)) + 1))
    return max(ages)
