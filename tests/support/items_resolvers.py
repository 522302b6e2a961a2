"""Python equivalents of the seed's conflict resolver procedures for its ``items`` table.

A resolver gets the incoming row (a dict it may change), the origin server's replication name and
the publisher's current row (the seed's procedures read it with ``select price into p from items``).
"""

from __future__ import annotations

from typing import Any


def publisher_wins(row: dict[str, Any], origin: str, current: dict[str, Any] | None) -> int:
    """``create procedure items_cr(...) { return 3; }``"""
    return 3


def minimal_price(row: dict[str, Any], origin: str, current: dict[str, Any] | None) -> int:
    """The lower price wins; equal prices leave the decision to the next resolver."""
    p = current["price"] if current else None
    if p is None or row["price"] is None:
        return 0
    if p < row["price"]:
        return 3  # publisher wins
    if p > row["price"]:
        return 1  # subscriber wins
    return 0  # can't decide


def change_to_minimal_price(row: dict[str, Any], origin: str, current: dict[str, Any] | None) -> int:
    """The incoming row wins, with the lower of the two prices."""
    p = current["price"] if current else None
    if p is not None and row["price"] is not None and p < row["price"]:
        row["price"] = p
        return 2  # publisher wins, change origin
    return 1  # subscriber wins


def broken(row: dict[str, Any], origin: str, current: dict[str, Any] | None) -> int:
    return 7
