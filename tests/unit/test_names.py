"""Generated names: folding per dialect, deterministic shortening, trigger names per the seed."""

from __future__ import annotations

import random
import string

import pytest

from snaprepl.common.table_names import Ident, ResolvedTable, shorten, underscored, validate_conn_id, with_suffix
from snaprepl.dialects import DIALECTS, get_dialect
from snaprepl.errors import InvalidName


def test_unquoted_names_fold_by_dialect_and_quoted_names_do_not() -> None:
    assert get_dialect("postgres").fold(Ident("Orders")) == "orders"
    assert get_dialect("oracle").fold(Ident("Orders")) == "ORDERS"
    assert get_dialect("db2").fold(Ident("Orders")) == "ORDERS"
    assert get_dialect("mysql").fold(Ident("Orders")) == "Orders"
    assert get_dialect("postgres").fold(Ident("Orders", quoted=True)) == "Orders"


def test_unquoted_names_must_be_plain() -> None:
    with pytest.raises(InvalidName, match="quote it"):
        get_dialect("postgres").fold(Ident("a b"))


def test_qualified_names_become_underscored_as_in_the_seed() -> None:
    assert underscored("DB", "DBA", "Orders") == "DB_DBA_Orders"
    assert underscored("", "Orders") == "Orders"


def test_shortening_is_deterministic_and_fits() -> None:
    long = "x" * 100
    assert shorten(long, 63) == shorten(long, 63)
    assert len(shorten(long, 63)) == 63
    assert shorten("short", 63) == "short"
    assert shorten("a" * 70, 63) != shorten("a" * 71, 63)
    named = with_suffix("y" * 100, "_I_log", 63)
    assert named.endswith("_I_log") and len(named) == 63


def test_log_names_are_shortened_per_dialect_limit() -> None:
    table = ResolvedTable("c", "public", "t" * 70)
    objects = get_dialect("postgres").log_objects(table, ["k" * 70])
    assert all(
        len(n.encode()) <= 63 for n in (objects.rlog, *objects.triggers, *objects.functions, *objects.key_columns)
    )
    assert objects.triggers[0].endswith("_I_log")
    oracle = get_dialect("oracle").log_objects(ResolvedTable("c", "S", "ORDERS_WITH_A_LONG_NAME"), ["ID"])
    assert all(len(n) <= 30 for n in (oracle.rlog, *oracle.triggers))


def test_seed_trigger_names_per_dialect() -> None:
    table = ResolvedTable("c", "dbo", "Orders")
    assert get_dialect("mssql").log_objects(table, ["id"]).triggers == ("Orders_I_log", "Orders_U_log", "Orders_D_log")
    assert get_dialect("db2").log_objects(table, ["id"]).triggers == ("Orders_I", "Orders_U", "Orders_D")
    informix = get_dialect("informix").log_objects(table, ["id"])
    assert informix.functions == ("Orders_R_proc", "Orders_U_proc") and informix.sequences == ("opl_seq_rowguid",)
    assert get_dialect("postgres").log_objects(table, ["id"]).triggers == (
        "dbo_Orders_I_log",
        "dbo_Orders_U_log",
        "dbo_Orders_D_log",
    )


@pytest.mark.parametrize("conn_id", ["", "a b", "x;y", "@x", "a" * 251])
def test_bad_connection_ids(conn_id: str) -> None:
    with pytest.raises(InvalidName):
        validate_conn_id(conn_id)


def test_quoting_escapes_embedded_quotes() -> None:
    assert get_dialect("postgres").quote('a"b') == '"a""b"'
    assert get_dialect("mysql").quote("a`b") == "`a``b`"
    assert get_dialect("mssql").quote("a]b") == "[a]]b]"


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_quoting_is_sqlglots_for_any_name(dialect: str) -> None:
    """Each dialect quotes identifiers itself (sqlglot is too slow to load for every statement's
    path); for names of every awkward character it writes what sqlglot writes."""
    from sqlglot import exp

    d, rng = DIALECTS[dialect], random.Random(dialect)
    alphabet = string.ascii_letters + "\"`[]' \\ éß\n\t.-_0"
    for _ in range(2000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        assert d.quote(name) == exp.to_identifier(name, quoted=True).sql(dialect=d.sqlglot_dialect or None), name
