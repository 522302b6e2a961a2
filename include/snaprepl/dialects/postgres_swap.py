"""PostgreSQL's table swap for a complete refresh: when it may replace the destination, and what of the
destination's definition it carries over to the staging table (mixed into the PostgreSQL dialect).

The swap (``DROP TABLE`` + rename, in one transaction) is the fast path for big tables. It is taken
only where nothing hangs on the destination that the staging table cannot cheaply get as well:

- carried over (cheap, before the swap, in its transaction): CHECK constraints (validated on the
  staging table, a scan of it while readers still see the old table), column defaults, comments on the
  table and its columns, storage parameters (reloptions, the TOAST table's included), row-level
  security switched on or forced;
- the key-difference apply (:mod:`snaprepl.dialects.replace`) instead, where a swap would lose or break
  something: views and rules, foreign keys, triggers, extra indexes, policies, table or column grants,
  inheritance and partitions, membership of a publication (subscribers would never see the new table's
  rows), sequences the table owns (serial and identity columns: dropping the table drops them),
  another owner than the refreshing role, a tablespace of its own, extended statistics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from snaprepl.dialects.model import SqlSession

_HANGING_SQL = """
WITH t AS (SELECT to_regclass(:name) AS oid)
SELECT NOT (
    EXISTS (SELECT 1 FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid, t
             WHERE d.refobjid = t.oid AND r.ev_class <> t.oid)
 OR EXISTS (SELECT 1 FROM pg_constraint c, t WHERE c.contype = 'f' AND (c.conrelid = t.oid OR c.confrelid = t.oid))
 OR EXISTS (SELECT 1 FROM pg_trigger g, t WHERE g.tgrelid = t.oid AND NOT g.tgisinternal)
 OR EXISTS (SELECT 1 FROM pg_index i, t WHERE i.indrelid = t.oid AND NOT i.indisprimary)
 OR EXISTS (SELECT 1 FROM pg_policy p, t WHERE p.polrelid = t.oid)
 OR EXISTS (SELECT 1 FROM pg_class c, t WHERE c.oid = t.oid AND (c.relacl IS NOT NULL OR c.reltablespace <> 0
             OR c.relowner <> (SELECT r.oid FROM pg_roles r WHERE r.rolname = current_user)))
 OR EXISTS (SELECT 1 FROM pg_attribute a, t WHERE a.attrelid = t.oid AND a.attnum > 0 AND a.attacl IS NOT NULL)
 OR EXISTS (SELECT 1 FROM pg_inherits h, t WHERE h.inhparent = t.oid OR h.inhrelid = t.oid)
 OR EXISTS (SELECT 1 FROM pg_publication_tables p WHERE p.schemaname = :schema AND p.tablename = :table)
 OR EXISTS (SELECT 1 FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S', t
             WHERE d.classid = 'pg_class'::regclass AND d.refobjid = t.oid AND d.deptype IN ('a', 'i'))
 OR EXISTS (SELECT 1 FROM pg_statistic_ext x, t WHERE x.stxrelid = t.oid)
)
"""

# Statements that give the staging table (:staging, already quoted) the destination's definition,
# written by the server itself (format's %I and %L quote names and texts).
_CARRY_OVER_SQL = """
WITH t AS (SELECT c.oid, c.reloptions, c.reltoastrelid, c.relrowsecurity, c.relforcerowsecurity
             FROM pg_class c WHERE c.oid = to_regclass(:name)),
options AS (
    SELECT o FROM t, unnest(t.reloptions) o
    UNION ALL SELECT 'toast.' || o FROM t JOIN pg_class x ON x.oid = t.reltoastrelid, unnest(x.reloptions) o)
SELECT 1 AS step,
       format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', :staging, a.attname, pg_get_expr(d.adbin, d.adrelid))
       AS statement
  FROM t JOIN pg_attrdef d ON d.adrelid = t.oid
  JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum AND a.attgenerated = ''
UNION ALL
SELECT 2, format('ALTER TABLE %s ADD CONSTRAINT %I %s', :staging, k.conname, pg_get_constraintdef(k.oid))
  FROM t JOIN pg_constraint k ON k.conrelid = t.oid AND k.contype = 'c'
UNION ALL
SELECT 3, format('COMMENT ON TABLE %s IS %L', :staging, obj_description(t.oid, 'pg_class'))
  FROM t WHERE obj_description(t.oid, 'pg_class') IS NOT NULL
UNION ALL
SELECT 4, format('COMMENT ON COLUMN %s.%I IS %L', :staging, a.attname, col_description(t.oid, a.attnum))
  FROM t JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
 WHERE col_description(t.oid, a.attnum) IS NOT NULL
UNION ALL
SELECT 5, format('ALTER TABLE %s SET (%s)', :staging,
                 string_agg(format('%s = %L', split_part(o, '=', 1), substr(o, strpos(o, '=') + 1)), ', '))
  FROM options HAVING COUNT(*) > 0
UNION ALL
SELECT 6, format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', :staging) FROM t WHERE t.relrowsecurity
UNION ALL
SELECT 7, format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', :staging) FROM t WHERE t.relforcerowsecurity
"""
_CARRIED = "snaprepl_carried_definition"


class PostgresTableSwap:
    """:meth:`is_plain_table` and :meth:`swap_table_steps` of PostgreSQL (see the module's text)."""

    if TYPE_CHECKING:

        def quote(self, name: str) -> str: ...

        def qualified(self, schema: str | None, table: str) -> str: ...

        def shorten(self, name: str) -> str: ...

    def is_plain_table(self, session: SqlSession, schema: str, table: str) -> bool:
        rows = session.query(_HANGING_SQL, {"name": self.qualified(schema, table), "schema": schema, "table": table})
        return bool(rows[0][0])

    def swap_table_steps(self, session: SqlSession, schema: str, dest: str, staging: str) -> list[str]:
        target = self.qualified(schema, dest)
        # The carried-over statements hold the owner's texts (comments): the server keeps them and runs
        # them (the DO step), so no client-side quoting or placeholder syntax ever sees them.
        # (An INSERT, not CREATE TABLE AS: only plannable statements take parameters on every driver.)
        session.execute(f"CREATE TEMP TABLE {_CARRIED} (step int, statement text) ON COMMIT DROP")
        session.execute(
            f"INSERT INTO pg_temp.{_CARRIED} (step, statement) {_CARRY_OVER_SQL}",
            {"name": target, "staging": self.qualified(schema, staging)},
        )
        steps = [
            f"DO $snaprepl$ DECLARE s text; BEGIN FOR s IN SELECT statement FROM pg_temp.{_CARRIED} ORDER BY step, "
            f"statement LOOP EXECUTE s; END LOOP; END $snaprepl$",
            f"DROP TABLE pg_temp.{_CARRIED}",
            f"DROP TABLE {target}",
            f"ALTER TABLE {self.qualified(schema, staging)} RENAME TO {self.quote(dest)}",
        ]
        constraint = session.query(
            "SELECT conname FROM pg_constraint WHERE conrelid = to_regclass(:name) AND contype = 'p'", {"name": target}
        )
        staged_key = self.shorten(f"{staging}_pkey")
        if constraint and constraint[0][0] != staged_key:
            steps.append(
                f"ALTER TABLE {target} RENAME CONSTRAINT {self.quote(staged_key)} TO {self.quote(constraint[0][0])}"
            )
        return steps
