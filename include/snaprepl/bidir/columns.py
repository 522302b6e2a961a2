"""A published table whose columns change (issue 25, item 3), checked before every pull and push.

- A column added to the publisher's table (``ALTER TABLE ... ADD COLUMN``) is added to the
  subscriber's replica (nullable, the portable type) and filled there with the publisher's values,
  as replicated writes its triggers do not log (the row's version is moved away and back, in one
  transaction), before any change is pulled from or pushed to it. The logs and their triggers need
  nothing: they log keys and versions only.
- Any other change is refused in one line naming the column: a column the publisher lost (the
  replica's would be pulled into nothing and pushed as NULL), or one whose type the replica cannot
  hold any more.
"""

from __future__ import annotations

from typing import Any

from snaprepl.bidir.sides import Side
from snaprepl.dialects import Column
from snaprepl.dialects.alter import HOLDS, holds
from snaprepl.dialects.base import BIDIR
from snaprepl.dialects.model import DELETE_MARK
from snaprepl.dialects.types import to_generic
from snaprepl.errors import InvalidArgument, ReplicationError


def follow_publisher(item: str, publisher: Side, sub: Side) -> list[str]:
    """Give ``sub`` the columns ``publisher``'s table gained, filled; the names added.

    :raises ReplicationError: another change of the published table, naming the column.
    """
    _refuse_other_changes(item, publisher, sub)
    added = [c for c in publisher.columns if not any(sub.dialect.same_name(s.name, c.name) for s in sub.columns)]
    if not added:
        return []
    mapped = [Column(c.name, sub.dialect.map_type(c.type_sql, publisher.dialect), True) for c in added]
    schema, table = sub.log.snl_schema, sub.log.snl_table
    with sub.db.session() as session:
        for column in mapped:
            session.execute(sub.dialect.add_column_sql(schema, table, column))
    _fill(publisher, sub, mapped)
    return [c.name for c in added]


def _refuse_other_changes(item: str, publisher: Side, sub: Side) -> None:
    for column in sub.columns:
        held = next((p for p in publisher.columns if sub.dialect.same_name(column.name, p.name)), None)
        if held is None:
            raise ReplicationError(
                f"column {column.name} of {sub.name}'s replica of {item} is not in the publisher's table any more: "
                "a published table only takes ADD COLUMN",
                f"add column {column.name} back on the publisher, or drop the publication and publish the table again",
            )
        if not sub.dialect.types_flexible and not _holds(sub, column, publisher, held):
            raise ReplicationError(
                f"column {column.name} of published table {item} is now {held.type_sql} on the publisher, which "
                f"{sub.name}'s {column.type_sql} cannot hold: a published table only takes ADD COLUMN",
                "give the publisher's column its type back, or drop the publication and publish the table again",
            )


def _holds(sub: Side, column: Column, publisher: Side, held: Column) -> bool:
    try:
        needed = to_generic(sub.dialect.map_type(held.type_sql, publisher.dialect), sub.dialect.name)
        have = to_generic(column.type_sql, sub.dialect.name)
    except InvalidArgument:
        return True  # not compared, as when the table was published
    return needed == have or holds(have, needed) == HOLDS


def _fill(publisher: Side, sub: Side, added: list[Column]) -> None:
    """Copy the publisher's values of the ``added`` columns into ``sub``'s rows of the same key, as
    replicated writes: each row's version is set to a mark and back, which its triggers skip."""
    p, d = publisher.dialect, sub.dialect
    key = sub.key
    names = [*key, *(c.name for c in added)]
    with publisher.db.session() as session:
        rows = session.query(f"SELECT {', '.join(p.quote(n) for n in names)} FROM {publisher.table}")
    if not rows:
        return
    guid = d.quote(BIDIR.rowguid)
    match = " AND ".join(f"{d.quote(k)} = :k{i}" for i, k in enumerate(key))
    sets = ", ".join(f"{d.quote(c.name)} = :v{i}" for i, c in enumerate(added))
    with sub.db.session() as session:
        versions = _versions(session, sub)
        for row in rows:
            own = sub.as_own_values(dict(zip(names, row, strict=True))) or {}
            version = versions.get(tuple(own[k] for k in key))
            if version is None:
                continue  # not in the replica (yet): the next push brings it whole
            params: dict[str, Any] = {f"k{i}": d.python_param(own[k]) for i, k in enumerate(key)}
            params |= {f"v{i}": d.python_param(own[c.name]) for i, c in enumerate(added)}
            session.execute(f"UPDATE {sub.table} SET {guid} = {d.literal(DELETE_MARK)}, {sets} WHERE {match}", params)
            session.execute(f"UPDATE {sub.table} SET {guid} = :g WHERE {match}", {**params, "g": version})


def _versions(session: Any, sub: Side) -> dict[tuple[Any, ...], str]:
    """The replica's rows' versions by key, locked until the fill commits."""
    d = sub.dialect
    key = ", ".join(d.quote(k) for k in sub.key)
    rows = session.query(f"SELECT {key}, {d.quote(BIDIR.rowguid)} FROM {sub.table}{d.for_update}")
    return {tuple(r[: len(sub.key)]): r[-1] for r in rows}
