"""Open transactions read from ``SHOW ENGINE INNODB STATUS`` (MariaDB 10.11's text): the oldest writer's
age bound, this session's own transaction and transactions that changed nothing left out, and None
where the text cannot tell."""

from __future__ import annotations

from datetime import timedelta

from snaprepl.dialects.innodb_status import oldest_writer_age

STATUS = """
------------
TRANSACTIONS
------------
Trx id counter 28920
Purge done for trx's n:o < 28919 undo n:o < 0 state: running but idle
History list length 0
LIST OF TRANSACTIONS FOR EACH SESSION:
---TRANSACTION 421, not started
0 lock struct(s), heap size 1128, 0 row lock(s)
---TRANSACTION 28919, ACTIVE 1 sec
1 lock struct(s), heap size 1128, 0 row lock(s), undo log entries 1
MariaDB thread id 8432, OS thread handle 140166863144640, query id 265723 127.0.0.1 root
---TRANSACTION 28917, ACTIVE 7 sec
1 lock struct(s), heap size 1128, 0 row lock(s)
MariaDB thread id 8440, OS thread handle 140166863144641, query id 265724 127.0.0.1 root
---TRANSACTION 28915, ACTIVE (PREPARED) 12 sec
2 lock struct(s), heap size 1128, 1 row lock(s), undo log entries 3
MariaDB thread id 8001, OS thread handle 140166863144642, query id 265725 127.0.0.1 root
--------
FILE I/O
--------
Pending flushes (fsync): 0
"""


def test_the_oldest_writer_other_than_this_session_bounds_the_cap() -> None:
    assert oldest_writer_age(STATUS, own_thread=1) == timedelta(seconds=13), "12 s is 12 to 13 s"
    assert oldest_writer_age(STATUS, own_thread=8001) == timedelta(seconds=2), "its own left out"
    no_writer = STATUS.replace("undo log entries 3", "").replace("undo log entries 1", "")
    assert oldest_writer_age(no_writer, own_thread=1) == timedelta(0), "read-only transactions write no entries"


def test_a_text_that_cannot_tell_gives_none() -> None:
    assert oldest_writer_age("no transactions section", own_thread=1) is None
    cut = STATUS.replace("---TRANSACTION 28917", "...truncated...\n---TRANSACTION 28917")
    assert oldest_writer_age(cut, own_thread=1) is None
