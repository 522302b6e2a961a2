"""Bi-directional replication test helpers: the servers, reading replicas, and a reference model of
SEMANTICS section 6 written from the text, independently of snaprepl's own code."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tests.support.databases import RealDatabase


@dataclass(frozen=True)
class Servers:
    """The publisher (PostgreSQL) and the two subscribers (MariaDB, SQLite), with their replication names."""

    pub: RealDatabase
    my: RealDatabase
    lite: RealDatabase
    names: dict[str, str]

    def name(self, db: RealDatabase) -> str:
        return self.names[db.conn_id]

    @property
    def subscribers(self) -> tuple[RealDatabase, RealDatabase]:
        return (self.my, self.lite)

    @property
    def all(self) -> tuple[RealDatabase, RealDatabase, RealDatabase]:
        return (self.pub, self.my, self.lite)


def price(value: Any) -> Decimal | None:
    """A price as a comparable Decimal (SQLite keeps NUMERIC values as integers or reals)."""
    return None if value is None else Decimal(str(value)).quantize(Decimal("0.01"))


def table_of(db: RealDatabase, table: str, schema: str | None = None) -> str:
    return f"{db.q(schema)}.{db.q(table)}" if schema else db.q(table)


def item_rows(
    db: RealDatabase, table: str, schema: str | None = None
) -> dict[int, tuple[str | None, Decimal | None, str]]:
    """``{item_id: (name, price, ROWGUID)}`` of an items-shaped table, read with the database's own driver."""
    rows = db.rows(f"SELECT item_id, name, price, {db.q('ROWGUID')} FROM {table_of(db, table, schema)}")
    return {int(r[0]): (r[1], price(r[2]), r[3]) for r in rows}


def placeholder(db: RealDatabase) -> str:
    return "?" if db.dialect == "sqlite" else "%s"


def change(db: RealDatabase, statement: str, *params: Any) -> None:
    """Run one statement written with ``?`` placeholders on ``db``."""
    db.run(statement.replace("?", placeholder(db)), params=list(params))


# ---------------------------------------------------------------------- reference model


Row = tuple[str | None, Decimal | None, str]  # name, price, ROWGUID


@dataclass(frozen=True)
class ModelConflict:
    kind: str  # 'I', 'U' or 'D'
    key: int
    origin: str
    decision: int


@dataclass
class Pending:
    """A subscriber's pending log entry for one key: the folded operation and the version it was based on."""

    op: str
    old: str | None


def fold(pending: Pending | None, op: str, old: str | None) -> Pending | None:
    """SEMANTICS: I+U -> I, U+U -> U, U+D -> D, D+I -> U, I+D -> nothing; OLD_ROWGUID as of the last sync."""
    if pending is None:
        return Pending(op, old if op != "I" else None)
    match pending.op, op:
        case "I", "U":
            return pending
        case "I", "D":
            return None
        case "U", "U":
            return pending
        case "U", "D":
            return Pending("D", pending.old)
        case "D", "I":
            return Pending("U", pending.old)
    raise AssertionError(f"impossible sequence {pending.op} then {op}")


#: A model resolver: (incoming row, publisher's row) -> decision 0-4.
ModelResolver = Callable[[Row | None, Row | None], int]

DEFAULTS = {"I": 3, "U": 3, "D": 4}


def by_price(smaller_wins: bool) -> ModelResolver:
    """The generated ``min`` resolver by price (or ``max``)."""

    def resolve(incoming: Row | None, current: Row | None) -> int:
        if incoming is None or current is None:
            return 0
        mine, theirs = current[1], incoming[1]
        if mine is None or theirs is None or mine == theirs:
            return 0
        publisher_better = mine < theirs if smaller_wins else mine > theirs
        return 3 if publisher_better else 1

    return resolve


@dataclass
class Model:
    """Replicas as dicts key -> row, subscribers' pending logs, and the conflicts a sync should meet.

    A sync with no concurrent writes pulls each subscriber in name order and then leaves every
    subscriber equal to the publisher (the push)."""

    publisher: str
    subscribers: list[str]
    resolvers: dict[str, list[ModelResolver]] = field(default_factory=dict)
    rows: dict[str, dict[int, Row]] = field(default_factory=dict)
    pending: dict[str, dict[int, Pending]] = field(default_factory=dict)
    conflicts: list[ModelConflict] = field(default_factory=list)

    def __post_init__(self) -> None:
        for server in [self.publisher, *self.subscribers]:
            self.rows.setdefault(server, {})
        for server in self.subscribers:
            self.pending.setdefault(server, {})

    def load(self, rows: dict[int, Row]) -> None:
        """The initial state: every replica loaded with the publisher's rows."""
        for server in self.rows:
            self.rows[server] = dict(rows)

    def local(self, server: str, op: str, key: int, row: Row | None) -> None:
        """A user's insert, update or delete on ``server`` (``row`` as read back after it)."""
        before = self.rows[server].get(key)
        old = before[2] if before else None
        if row is None:
            self.rows[server].pop(key, None)
        else:
            self.rows[server][key] = row
        if server in self.pending:
            folded = fold(self.pending[server].get(key), op, old)
            if folded is None:
                self.pending[server].pop(key, None)
            else:
                self.pending[server][key] = folded

    def _decide(self, kind: str, incoming: Row | None, current: Row | None) -> int:
        for resolver in self.resolvers.get(kind, []):
            decision = resolver(incoming, current)
            if decision:
                return decision
        return DEFAULTS[kind]

    def _pull_one(self, server: str, key: int, entry: Pending) -> None:
        publisher = self.rows[self.publisher]
        current = publisher.get(key)
        incoming = self.rows[server].get(key)
        op = entry.op
        if op in {"I", "U"}:
            assert incoming is not None
            if current is not None and current[2] == incoming[2]:
                return
            if current is None and op == "I":
                publisher[key] = incoming
                return
            if current is not None and op == "U" and current[2] == entry.old:
                publisher[key] = incoming
                return
            kind = "D" if current is None else op
        else:
            if current is not None and current[2] == entry.old:
                del publisher[key]
                return
            kind = "D"
        decision = self._decide(kind, incoming if kind != "D" else None, current)
        self.conflicts.append(ModelConflict(kind, key, server, decision))
        if decision == 1:
            if op == "D":
                publisher.pop(key, None)
            else:
                assert incoming is not None
                publisher[key] = incoming
        # 3: the publisher's row stands and is sent to everyone; 4: the change is dropped.

    def sync(self) -> None:
        for server in sorted(self.subscribers):
            for key, entry in sorted(self.pending[server].items()):
                self._pull_one(server, key, entry)
            self.pending[server].clear()
        for server in self.subscribers:
            self.rows[server] = copy.copy(self.rows[self.publisher])
