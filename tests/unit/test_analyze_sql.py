"""The statistics a refresh gathers on a staging table (issue 24): PostgreSQL's of the columns the
apply filters and joins on only (a tenth of ANALYZE's time goes to each column); SQLite's ANALYZE
takes no column list, so it gets none."""

from __future__ import annotations

from snaprepl.dialects import DIALECTS


def test_postgres_gathers_the_named_columns_only() -> None:
    sql = DIALECTS["postgres"].analyze_sql("public", "stage", ["SNAPREPL_BATCH", "SNAPREPL_OP", "id"])
    assert sql == 'ANALYZE "public"."stage" ("SNAPREPL_BATCH", "SNAPREPL_OP", "id")'
    assert DIALECTS["postgres"].analyze_sql("public", "stage") == 'ANALYZE "public"."stage"'


def test_sqlite_gets_no_column_list() -> None:
    assert DIALECTS["sqlite"].analyze_sql("main", "stage", ["SNAPREPL_BATCH", "id"]) == 'ANALYZE "main"."stage"'
