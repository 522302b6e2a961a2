"""Functions a snapshot query may call where the database has no read-only transactions (SQLite).

PostgreSQL and MariaDB run snapshot queries in read-only transactions, which refuse any write a
function attempts. SQLite has no such mode (``PRAGMA query_only`` stops writes to tables, not
``load_extension``), so there a query may call only functions snaprepl can vouch for: those sqlglot
knows as standard SQL functions, and SQLite's own built-ins listed here. Anything else (a
user-defined function, ``load_extension``, ``fts3_tokenizer``, the shell's ``writefile``) is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from snaprepl.errors import InvalidCondition

if TYPE_CHECKING:
    from sqlglot import exp

#: SQLite's built-in scalar, date, math, aggregate, window and JSON functions that sqlglot parses as
#: unknown (Anonymous) functions.
_SQLITE_FUNCTION_NAMES = """
    abs changes char coalesce concat concat_ws format glob hex ifnull iif instr last_insert_rowid length
    like likelihood likely lower ltrim max min nullif octet_length printf quote random randomblob replace
    round rtrim sign soundex sqlite_source_id sqlite_version substr substring total_changes trim typeof
    unhex unicode unlikely upper zeroblob
    date time datetime julianday unixepoch strftime timediff
    acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2 mod
    pi pow power radians sin sinh sqrt tan tanh trunc
    avg count group_concat string_agg sum total
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
    json json_array json_array_length json_error_position json_extract json_insert json_object json_patch
    json_pretty json_remove json_replace json_set json_type json_valid json_quote json_group_array
    json_group_object jsonb jsonb_array jsonb_extract jsonb_insert jsonb_object jsonb_patch jsonb_remove
    jsonb_replace jsonb_set jsonb_group_array jsonb_group_object
"""
SQLITE_FUNCTIONS = frozenset(_SQLITE_FUNCTION_NAMES.split())


def refuse_unknown_functions(tree: exp.Expression) -> None:
    """:raises InvalidCondition: ``tree`` calls a function that is neither standard nor SQLite's own."""
    from sqlglot import exp

    for node in tree.find_all(exp.Anonymous):
        name = str(node.name).lower()
        if name not in SQLITE_FUNCTIONS:
            raise InvalidCondition(
                f"the snapshot's SQL calls {node.name}(), which snaprepl cannot vouch for on SQLite: SQLite has no "
                "read-only transactions, so snapshot queries there may call only SQLite's built-in functions",
                "compute the value in a view or a column instead, or read the data from a database with "
                "read-only transactions",
            )
