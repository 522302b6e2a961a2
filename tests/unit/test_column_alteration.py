"""Whether a destination column holds its source's type now (issue 25, item 3), and each dialect's
statements that add and widen a destination's columns."""

from __future__ import annotations

import pytest

from snaprepl.dialects import Column, get_dialect
from snaprepl.dialects.alter import HOLDS, NARROWER, OTHER_KIND, holds
from snaprepl.dialects.types import GenericType, to_generic


@pytest.mark.parametrize(
    ("held", "needed", "verdict"),
    [
        ("int", "bigint", NARROWER),
        ("bigint", "int", HOLDS),
        ("smallint", "int", NARROWER),
        ("varchar(40)", "varchar(200)", NARROWER),
        ("varchar(200)", "varchar(40)", HOLDS),
        ("varchar(40)", "text", NARROWER),
        ("text", "varchar(4000)", HOLDS),
        ("numeric(8, 2)", "numeric(12, 2)", NARROWER),
        ("numeric(12, 2)", "numeric(12, 4)", NARROWER),
        ("numeric(12, 2)", "int", HOLDS),
        ("numeric(6, 0)", "bigint", NARROWER),
        ("numeric", "numeric(30, 10)", HOLDS),
        ("real", "double precision", NARROWER),
        ("int", "text", OTHER_KIND),
        ("int", "double precision", OTHER_KIND),
        ("date", "timestamp", HOLDS),  # not compared: the dialects' own mappings differ there
        ("boolean", "smallint", HOLDS),
    ],
)
def test_holds(held: str, needed: str, verdict: str) -> None:
    assert holds(to_generic(held, "postgres"), to_generic(needed, "postgres")) == verdict


def test_each_dialect_adds_and_widens_in_its_own_terms() -> None:
    column = Column("c", "bigint", False)
    pg, my, lite = get_dialect("postgres"), get_dialect("mysql"), get_dialect("sqlite")
    assert pg.add_column_sql("s", "t", column) == 'ALTER TABLE "s"."t" ADD COLUMN "c" bigint'
    assert pg.widen_column_sql("s", "t", column) == 'ALTER TABLE "s"."t" ALTER COLUMN "c" TYPE bigint'
    assert my.add_column_sql("s", "t", column) == "ALTER TABLE `s`.`t` ADD COLUMN `c` bigint NULL"
    assert my.widen_column_sql("s", "t", column) == "ALTER TABLE `s`.`t` MODIFY COLUMN `c` bigint NOT NULL"
    assert lite.widen_column_sql("s", "t", column) is None and lite.types_flexible
    assert lite.held_type(GenericType("integer")) == GenericType("bigint"), "SQLite keeps 64-bit integers"
    assert pg.held_type(GenericType("integer")) == GenericType("integer")
