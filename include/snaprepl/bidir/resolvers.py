"""Conflict resolvers: Python callables named by import path, run in CR_ORDER.

A resolver is ``resolver(row, origin, current) -> int``:

* ``row``: the incoming row as a dict (every column with ROWGUID for 'I' and 'U' conflicts, the key
  for 'D' ones); the resolver may change it (code 2 applies the changed row);
* ``origin``: the replication name of the subscriber the change came from;
* ``current``: the publisher's current row (a dict, or None if it has none); read it, do not change it.

It returns a :class:`Decision`. :func:`build` makes the seed's generated classes (``min``, ``max``,
``ave``, ``pub_wins``, ``sub_wins``); any other class is an import path ``package.module:function``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from decimal import Decimal
from enum import IntEnum
from typing import Any, cast

from snaprepl.errors import InvalidArgument

Resolver = Callable[[dict[str, Any], str, "dict[str, Any] | None"], int]


class Decision(IntEnum):
    """The seed's return codes."""

    UNDECIDED = 0
    SUBSCRIBER_WINS = 1  # apply the incoming row; everyone but the originator receives it
    SUBSCRIBER_WINS_CHANGED = 2  # apply the row as the resolver changed it; origin becomes the publisher
    PUBLISHER_WINS = 3  # the publisher's row is sent to everyone, the originator too
    IGNORE = 4  # the change is dropped


DEFAULT = {"I": Decision.PUBLISHER_WINS, "U": Decision.PUBLISHER_WINS, "D": Decision.IGNORE}
GENERATED = ("min", "max", "ave", "pub_wins", "sub_wins")


def pub_wins(row: dict[str, Any], origin: str, current: dict[str, Any] | None) -> int:
    return Decision.PUBLISHER_WINS


def sub_wins(row: dict[str, Any], origin: str, current: dict[str, Any] | None) -> int:
    return Decision.SUBSCRIBER_WINS


def by_min(column: str) -> Resolver:
    """The smaller value of ``column`` wins (the seed's minimal-price resolver); equal is undecided."""

    def resolve(row: dict[str, Any], origin: str, current: dict[str, Any] | None) -> int:
        mine, theirs = (current or {}).get(column), row.get(column)
        if mine is None or theirs is None or mine == theirs:
            return Decision.UNDECIDED
        return Decision.PUBLISHER_WINS if mine < theirs else Decision.SUBSCRIBER_WINS

    return resolve


def by_max(column: str) -> Resolver:
    """The larger value of ``column`` wins; equal is undecided."""

    def resolve(row: dict[str, Any], origin: str, current: dict[str, Any] | None) -> int:
        mine, theirs = (current or {}).get(column), row.get(column)
        if mine is None or theirs is None or mine == theirs:
            return Decision.UNDECIDED
        return Decision.PUBLISHER_WINS if mine > theirs else Decision.SUBSCRIBER_WINS

    return resolve


def average(column: str) -> Resolver:
    """Both sides' values of ``column`` are averaged into the incoming row, which then wins (code 2)."""

    def resolve(row: dict[str, Any], origin: str, current: dict[str, Any] | None) -> int:
        mine, theirs = (current or {}).get(column), row.get(column)
        if mine is None or theirs is None:
            return Decision.UNDECIDED
        mean = (Decimal(str(mine)) + Decimal(str(theirs))) / 2
        row[column] = int(mean.to_integral_value()) if isinstance(theirs, int) else type(theirs)(mean)
        return Decision.SUBSCRIBER_WINS_CHANGED

    return resolve


def build(klass: str | None, proc: str, column: str | None) -> Resolver:
    """The resolver a SYS_SNAPSHOT_CR row describes."""
    if klass == "pub_wins":
        return pub_wins
    if klass == "sub_wins":
        return sub_wins
    if klass in {"min", "max", "ave"}:
        if not column:
            raise InvalidArgument(f"resolver class {klass} needs a column")
        return {"min": by_min, "max": by_max, "ave": average}[klass](column)
    return load(proc)


def load(path: str) -> Resolver:
    """Import ``package.module:function``.

    :raises InvalidArgument: not importable or not callable.
    """
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise InvalidArgument(
            f"resolver {path!r} is neither a generated class ({', '.join(GENERATED)}) nor package.module:function"
        )
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as err:
        raise InvalidArgument(
            f"resolver {path!r} cannot be imported: {err}",
            "install its module where the sync jobs run, or put it on PYTHONPATH",
        ) from None
    if not callable(target):
        raise InvalidArgument(f"resolver {path!r} is not callable")
    return cast(Resolver, target)  # a callable the user named: its signature is the resolver's contract


def decide(
    resolvers: list[tuple[str, Resolver]], row: dict[str, Any], origin: str, current: dict[str, Any] | None, kind: str
) -> tuple[Decision, str]:
    """Run resolvers in order until one decides; else the default of conflicts of ``kind``.

    :return: the decision and the name of the resolver that made it ('default' when none did).
    """
    for name, resolver in resolvers:
        code = resolver(row, origin, current)
        try:
            decision = Decision(int(code))
        except (TypeError, ValueError):
            raise InvalidArgument(f"resolver {name} returned {code!r}, not a code 0-4") from None
        if decision is not Decision.UNDECIDED:
            return decision, name
    return DEFAULT[kind], "default"
