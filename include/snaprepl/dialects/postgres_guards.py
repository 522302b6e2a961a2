"""PostgreSQL's guards of a log's row triggers (see :mod:`snaprepl.dialects.guards`).

* The row triggers are enabled ``ALWAYS``: they fire in ``session_replication_role = replica``
  sessions too (snaprepl's own replicated writes never rely on that role: bi-directional logs skip
  them by their ROWGUID, in the triggers' WHEN clauses).
* A statement-level ``TRUNCATE`` trigger records each truncation in ``rlog_snaprepl_guard``, a small table in
  the log's schema, in the truncating transaction.
* With a superuser at the log's creation, event triggers (one pair per schema, ``ENABLE ALWAYS``)
  record when a log trigger is disabled, enabled for some sessions only, renamed or dropped, so a
  trigger off between two refreshes and back on by the next one is still caught. Their functions
  catch every error (a warning), so they never break anyone's DDL.
* ``rlog_snaprepl_guard`` also lists the triggers it watches (rows with event ``watch``); the schema's
  guard objects go with its last log.
"""

from __future__ import annotations

from typing import Any

from snaprepl.common.table_names import ResolvedTable, underscored, with_suffix
from snaprepl.dialects.guards import GuardFindings, LogGuards, missing_triggers
from snaprepl.dialects.model import DdlStep, LogObjects, SqlSession, TableInfo

GUARD_TABLE = "rlog_snaprepl_guard"
TRUNCATE_FUNCTION = "snaprepl_guard_truncate"
DDL_FUNCTION = "snaprepl_guard_ddl"
DROP_FUNCTION = "snaprepl_guard_drop"
_STATES = {
    "D": "disabled",
    "O": "enabled for ordinary sessions only (not ALWAYS)",
    "R": "enabled for replica sessions only",
}


class PostgresGuards(LogGuards):
    catches_truncate = True

    def truncate_trigger(self, table: ResolvedTable) -> str:
        return with_suffix(underscored(table.schema, table.table), "_T_log", 63)

    def event_triggers(self, schema: str) -> tuple[str, str]:
        return (
            with_suffix(f"snaprepl_guard_{schema}", "_ddl", 63),
            with_suffix(f"snaprepl_guard_{schema}", "_drop", 63),
        )

    def ddl_guard_possible(self, session: SqlSession) -> bool:
        return bool(session.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0][0])

    def guard_steps(self, info: TableInfo, objects: LogObjects, *, ddl_guard: bool) -> list[DdlStep]:
        table = info.table
        schema, source = table.schema, self.qualified(table.schema, table.table)
        guard = self.qualified(schema, GUARD_TABLE)
        truncate = self.truncate_trigger(table)
        watched = [*objects.triggers, truncate]
        steps = [
            DdlStep(
                f"CREATE TABLE IF NOT EXISTS {guard} (id bigserial PRIMARY KEY, tbl text NOT NULL, trg text, "
                "event text NOT NULL, detail text, "
                "at timestamp(6) NOT NULL DEFAULT (clock_timestamp() AT TIME ZONE 'UTC'))"
            ),
            DdlStep(
                # SECURITY DEFINER: whoever may truncate the table has its truncation recorded, without
                # rights on the guard table; recorded only for tables of this schema.
                f"CREATE OR REPLACE FUNCTION {self.qualified(schema, TRUNCATE_FUNCTION)}() RETURNS trigger "
                "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $snaprepl$\nBEGIN\n"
                f"  IF TG_TABLE_SCHEMA = {self.literal(schema)} THEN\n"
                f"    INSERT INTO {guard} (tbl, trg, event, detail) "
                "VALUES (TG_TABLE_NAME, TG_NAME, 'TRUNCATE', 'by ' || session_user);\n  END IF;\n"
                "  RETURN NULL;\nEND\n$snaprepl$"
            ),
            DdlStep(f"REVOKE ALL ON FUNCTION {self.qualified(schema, TRUNCATE_FUNCTION)}() FROM PUBLIC"),
            DdlStep(
                f"CREATE TRIGGER {self.quote(truncate)} AFTER TRUNCATE ON {source} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {self.qualified(schema, TRUNCATE_FUNCTION)}()",
                f"DROP TRIGGER IF EXISTS {self.quote(truncate)} ON {source}",
            ),
            *(DdlStep(f"ALTER TABLE {source} ENABLE ALWAYS TRIGGER {self.quote(t)}") for t in watched),
            DdlStep(f"DELETE FROM {guard} WHERE tbl = {self.literal(table.table)}"),
            DdlStep(
                f"INSERT INTO {guard} (tbl, trg, event) VALUES "
                + ", ".join(f"({self.literal(table.table)}, {self.literal(t)}, 'watch')" for t in watched)
            ),
        ]
        return [*steps, *self._ddl_guard_steps(schema)] if ddl_guard else steps

    def _ddl_guard_steps(self, schema: str) -> list[DdlStep]:
        guard = self.qualified(schema, GUARD_TABLE)
        s = self.literal(schema)
        warn = (
            "EXCEPTION WHEN OTHERS THEN\n"
            "  RAISE WARNING USING MESSAGE = 'snaprepl could not record a change to a log trigger: ' || SQLERRM;"
        )
        changed = f"""BEGIN
  INSERT INTO {guard} (tbl, trg, event, detail)
  SELECT w.tbl, w.trg, 'TRIGGER', tg_tag || ' left it ' || coalesce(CASE g.tgenabled
           WHEN 'D' THEN 'disabled' WHEN 'O' THEN 'enabled for ordinary sessions only'
           WHEN 'R' THEN 'enabled for replica sessions only' END, 'missing')
    FROM {guard} w
    LEFT JOIN pg_catalog.pg_trigger g
      ON g.tgname = w.trg
     AND g.tgrelid = pg_catalog.to_regclass(pg_catalog.quote_ident({s}) || '.' || pg_catalog.quote_ident(w.tbl))
   WHERE w.event = 'watch' AND (g.oid IS NULL OR g.tgenabled <> 'A')
     AND w.tbl IN (SELECT c.relname FROM pg_catalog.pg_event_trigger_ddl_commands() d
                     JOIN pg_catalog.pg_class c ON c.oid = CASE WHEN d.object_type = 'trigger'
                          THEN (SELECT t.tgrelid FROM pg_catalog.pg_trigger t WHERE t.oid = d.objid) ELSE d.objid END
                    WHERE c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = {s}));
{warn}
END"""
        dropped = f"""BEGIN
  INSERT INTO {guard} (tbl, trg, event, detail)
  SELECT w.tbl, w.trg, 'TRIGGER', tg_tag || ' dropped it'
    FROM pg_catalog.pg_event_trigger_dropped_objects() d
    JOIN {guard} w ON w.event = 'watch' AND w.tbl = d.address_names[2] AND w.trg = d.address_names[3]
   WHERE d.object_type = 'trigger' AND d.address_names[1] = {s};
{warn}
END"""
        ddl, drop = self.event_triggers(schema)
        steps = []
        for function, body in ((DDL_FUNCTION, changed), (DROP_FUNCTION, dropped)):
            steps.append(
                DdlStep(
                    f"CREATE OR REPLACE FUNCTION {self.qualified(schema, function)}() RETURNS event_trigger "
                    "LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp "
                    f"AS $snaprepl$\n{body}\n$snaprepl$"
                )
            )
        for name, event, function in ((ddl, "ddl_command_end", DDL_FUNCTION), (drop, "sql_drop", DROP_FUNCTION)):
            when = (
                " WHEN TAG IN ('ALTER TABLE', 'ALTER TRIGGER', 'CREATE TRIGGER')" if event == "ddl_command_end" else ""
            )
            steps.append(
                DdlStep(
                    "DO $snaprepl$ BEGIN IF NOT EXISTS "
                    f"(SELECT 1 FROM pg_event_trigger WHERE evtname = {self.literal(name)}) "
                    f"THEN CREATE EVENT TRIGGER {self.quote(name)} ON {event}{when} "
                    f"EXECUTE FUNCTION {self.qualified(schema, function)}(); "
                    f"ALTER EVENT TRIGGER {self.quote(name)} ENABLE ALWAYS; END IF; END $snaprepl$"
                )
            )
        return steps

    def guard_drop_sql(self, table: ResolvedTable, objects: LogObjects, *, source_exists: bool) -> list[str]:
        schema, guard = table.schema, self.qualified(table.schema, GUARD_TABLE)
        statements = []
        if source_exists:
            truncate = self.quote(self.truncate_trigger(table))
            statements.append(f"DROP TRIGGER IF EXISTS {truncate} ON {self.qualified(schema, table.table)}")
        ddl, drop = self.event_triggers(schema)
        s, t = self.literal(schema), self.literal(table.table)
        # Dropping event triggers needs their owner (a superuser): a failure leaves them, warned, to
        # record nothing (they find no watched trigger) until a superuser drops them.
        statements.append(
            f"""DO $snaprepl$
BEGIN
  IF pg_catalog.to_regclass({self.literal(guard)}) IS NULL THEN RETURN; END IF;
  DELETE FROM {guard} WHERE tbl = {t} OR tbl NOT IN (SELECT c.relname FROM pg_catalog.pg_class c
    WHERE c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = {s}));
  IF EXISTS (SELECT 1 FROM {guard} WHERE event = 'watch') THEN RETURN; END IF;
  BEGIN
    DROP EVENT TRIGGER IF EXISTS {self.quote(ddl)};
    DROP EVENT TRIGGER IF EXISTS {self.quote(drop)};
  EXCEPTION WHEN OTHERS THEN
    RAISE WARNING USING MESSAGE = 'snaprepl could not drop its event triggers: ' || SQLERRM;
    RETURN;
  END;
  DROP FUNCTION IF EXISTS {self.qualified(schema, DDL_FUNCTION)}();
  DROP FUNCTION IF EXISTS {self.qualified(schema, DROP_FUNCTION)}();
  DROP FUNCTION IF EXISTS {self.qualified(schema, TRUNCATE_FUNCTION)}() CASCADE;
  DROP TABLE {guard};
END $snaprepl$"""
        )
        return statements

    def guard_state(
        self, session: SqlSession, table: ResolvedTable, objects: LogObjects, *, ddl_guard: bool
    ) -> dict[str, Any]:
        seen = session.query(f"SELECT coalesce(max(id), 0) FROM {self.qualified(table.schema, GUARD_TABLE)}")[0][0]
        return {"v": 1, "seen": int(seen), "ddl_guard": ddl_guard}

    def guard_notes(self, state: dict[str, Any]) -> list[str]:
        if state.get("v") and not state.get("ddl_guard"):
            return [
                "no event trigger (it needs a superuser when the log is created): a log trigger disabled and "
                "enabled ALWAYS again between two refreshes is not caught; each refresh checks the triggers"
            ]
        return []

    def guard_check(
        self, session: SqlSession, table: ResolvedTable, objects: LogObjects, state: dict[str, Any] | None
    ) -> GuardFindings:
        recorded = dict(state or {})
        guarded = bool(recorded.get("v"))
        expected = [*objects.triggers, self.truncate_trigger(table)] if guarded else list(objects.triggers)
        names = ", ".join(self.literal(t) for t in expected)
        sql = (
            "SELECT 'trigger', tgname::text, tgenabled::text, 0::bigint FROM pg_trigger "
            f"WHERE tgrelid = to_regclass(:source) AND tgname IN ({names})"
        )
        if guarded:
            sql += (
                " UNION ALL SELECT 'event', coalesce(trg, ''), event || ' (' || coalesce(detail, '') || ') at ' "
                "|| to_char(at, 'YYYY-MM-DD HH24:MI:SS') || ' UTC', id "
                f"FROM {self.qualified(table.schema, GUARD_TABLE)} "
                "WHERE tbl = :table AND event <> 'watch' AND id > :seen"
            )
        params = {
            "source": self.qualified(table.schema, table.table),
            "table": table.table,
            "seen": recorded.get("seen", 0),
        }
        rows = session.query(sql, params)
        where = f"{table.schema}.{table.table}"
        found = {name: state_ for kind, name, state_, _ in rows if kind == "trigger"}
        broken = missing_triggers(table, expected, list(found))
        allowed = {"A"} if guarded else {"A", "O"}
        broken += [f"trigger {n} of table {where} is {_STATES.get(s, s)}" for n, s in found.items() if s not in allowed]
        events = [
            f"table {where} was truncated: {what}"
            if what.startswith("TRUNCATE")
            else f"trigger {name} of table {where}: {what}"
            for kind, name, what, _ in rows
            if kind == "event"
        ]
        seen = max([recorded.get("seen", 0), *(int(i) for kind, _, _, i in rows if kind == "event")])
        return GuardFindings(
            tuple(broken), tuple(dict.fromkeys(events)), {**recorded, "seen": seen} if guarded else recorded
        )
