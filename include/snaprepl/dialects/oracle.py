"""Oracle: generated DDL only (triggers ``<name>_I_log`` ..., and the seed's ``OPL_GETUTCDATE()``)."""

from __future__ import annotations

from collections.abc import Sequence

from snaprepl.common.table_names import ResolvedTable, with_suffix
from snaprepl.dialects.base import BIDIR, DELETE_MARK, DdlStep, Dialect, LogObjects, TableInfo

UTC_FUNCTION = "OPL_GETUTCDATE"


class OracleDialect(Dialect):
    name = "oracle"
    first_rows = "{select} FETCH FIRST {rows} ROWS ONLY"
    sqlglot_dialect = "oracle"
    # 30 bytes before Oracle 12.2; generated names must work on every version the seed lists.
    max_identifier_length = 30
    transactional_ddl = False
    jdbc_driver = "oracle.jdbc.OracleDriver"
    jdbc_url_prefixes = ("jdbc:oracle:",)
    snaptime_type = "TIMESTAMP(6)"
    dmltype_type = "CHAR(1)"
    rowguid_type = "VARCHAR2(255)"

    def fold_unquoted(self, text: str) -> str:
        return super().fold_unquoted(text).upper()

    def utc_now_sql(self) -> str:
        return f"{UTC_FUNCTION}()"

    def uuid_sql(self) -> str:
        return "RAWTOHEX(SYS_GUID())"

    def log_objects(self, table: ResolvedTable, key_columns: Sequence[str]) -> LogObjects:
        return LogObjects(
            rlog=self.shorten(f"RLOG_{table.table}"),
            key_columns=self._log_key_columns(key_columns),
            triggers=tuple(
                with_suffix(table.table, f"_{op}_log", self.max_identifier_length) for op in ("I", "U", "D")
            ),
        )

    def _merge(self, rlog: str, objects: LogObjects, row: str, keys: list[str], dmltype: str) -> str:
        cols = self.log_columns
        aliases = [f"k{i}" for i in range(1, len(keys) + 1)]
        selected = ", ".join(f"{row}.{self.quote(k)} AS {a}" for k, a in zip(keys, aliases, strict=True))
        on = " AND ".join(f"l.{self.quote(lk)} = s.{a}" for lk, a in zip(objects.key_columns, aliases, strict=True))
        now, guid = self.utc_now_sql(), self.uuid_sql()
        values = ", ".join([*(f"s.{a}" for a in aliases), now, f"'{dmltype}'", guid])
        return (
            f"MERGE INTO {rlog} l USING (SELECT {selected} FROM dual) s ON ({on})\n"
            f"    WHEN MATCHED THEN UPDATE SET l.{self.quote(cols.snaptime)} = {now}, "
            f"l.{self.quote(cols.dmltype)} = '{dmltype}', l.{self.quote(cols.rowguid)} = {guid}\n"
            f"    WHEN NOT MATCHED THEN INSERT ({self._log_column_list(objects)}) VALUES ({values});"
        )

    def render_script(self, statements: Sequence[str]) -> str:
        # SQL*Plus: PL/SQL units end with '/', plain statements with ';'.
        parts = [f"{s}\n/\n" if s.rstrip().endswith("END;") else f"{s};\n" for s in statements]
        return "\n".join(parts)

    def create_log_ddl(self, info: TableInfo, objects: LogObjects) -> list[DdlStep]:
        table = info.table
        source = self.qualified(table.schema, table.table)
        rlog = self.qualified(table.schema, objects.rlog)
        keys = [c.name for c in info.primary_key]
        key_changed = " OR ".join(f":OLD.{self.quote(k)} <> :NEW.{self.quote(k)}" for k in keys)
        trig_i, trig_u, trig_d = (self.qualified(table.schema, t) for t in objects.triggers)
        return [
            DdlStep(self.create_log_table_sql(info, objects), f"DROP TABLE {rlog}"),
            # Shared by every log of the schema, so never dropped with one of them.
            DdlStep(
                f"CREATE OR REPLACE FUNCTION {self.qualified(table.schema, UTC_FUNCTION)} RETURN TIMESTAMP AS\n"
                "BEGIN\n  RETURN SYS_EXTRACT_UTC(SYSTIMESTAMP);\nEND;"
            ),
            DdlStep(
                f"CREATE OR REPLACE TRIGGER {trig_i} AFTER INSERT ON {source} FOR EACH ROW\nBEGIN\n"
                f"  {self._merge(rlog, objects, ':NEW', keys, 'I')}\nEND;",
                f"DROP TRIGGER {trig_i}",
            ),
            DdlStep(
                f"CREATE OR REPLACE TRIGGER {trig_u} AFTER UPDATE ON {source} FOR EACH ROW\nBEGIN\n"
                f"  IF {key_changed} THEN\n"
                f"    {self._merge(rlog, objects, ':OLD', keys, 'D')}\n"
                f"    {self._merge(rlog, objects, ':NEW', keys, 'I')}\n"
                f"  ELSE\n"
                f"    {self._merge(rlog, objects, ':NEW', keys, 'U')}\n"
                f"  END IF;\nEND;",
                f"DROP TRIGGER {trig_u}",
            ),
            DdlStep(
                f"CREATE OR REPLACE TRIGGER {trig_d} AFTER DELETE ON {source} FOR EACH ROW\nBEGIN\n"
                f"  {self._merge(rlog, objects, ':OLD', keys, 'D')}\nEND;",
                f"DROP TRIGGER {trig_d}",
            ),
        ]

    def drop_log_ddl(self, table: ResolvedTable, objects: LogObjects, *, source_exists: bool) -> list[str]:
        statements = []
        if source_exists:
            statements += [f"DROP TRIGGER {self.qualified(table.schema, t)}" for t in objects.triggers]
        statements += [f"DROP TABLE {self.qualified(table.schema, t)}" for t in objects.tables]
        statements.append(f"DROP TABLE {self.qualified(table.schema, objects.rlog)}")
        return statements

    # ------------------------------------------------------------------ bi-directional logs
    #
    # Oracle checks a unique key at the end of a statement, so an update that shifts keys
    # (SET id = id + 1) may reach the row triggers as "insert 2" before "delete 2". Row triggers
    # therefore version the rows and buffer their changes in the global temporary table DLOG_<name>;
    # statement triggers replay the buffer into the log, deletes before inserts. Oracle reads '' as
    # NULL: the pending SYNC_ID and a user's ORIGIN are a single space here.

    empty_text = "' '"

    def bidir_log_objects(self, table: ResolvedTable, key_columns: Sequence[str]) -> LogObjects:
        suffixes = ("_I_log", "_IR_log", "_U_log", "_UR_log", "_UD_log", "_UDR_log", "_D_log")
        return LogObjects(
            rlog=self.shorten(f"RLOG_{table.table}"),
            key_columns=self._log_key_columns(key_columns),
            triggers=tuple(with_suffix(table.table, s, self.max_identifier_length) for s in suffixes),
            tables=(self.shorten(f"DLOG_{table.table}"),),
        )

    def _replay(self, rlog: str, dlog: str, objects: LogObjects, op: str, *, publisher: bool) -> str:
        """Fold the buffered changes ``op`` into the log (one MERGE: a key is buffered once per op)."""
        q, cols, bidir = self.quote, self.log_columns, BIDIR
        keys = [f"s.{q(k)}" for k in objects.key_columns]
        parts = self._put_parts(
            rlog,
            objects,
            op,
            keys,
            (f"s.{q(cols.rowguid)}", f"s.{q(bidir.old_rowguid)}", self.empty_text, None),
            existing="l.",
            publisher=publisher,
            when=None,
        )
        on = " AND ".join(f"l.{q(k)} = s.{q(k)}" for k in objects.key_columns)
        folded, forget = parts.type, ""
        if op == "D" and not publisher:
            # MERGE's DELETE WHERE sees the updated row: an insert not yet synced is marked 'X' by the
            # update, then deleted (insert + delete: nothing to tell anyone).
            folded = f"CASE WHEN l.{q(cols.dmltype)} = 'I' THEN 'X' ELSE 'D' END"
            forget = f"\n      DELETE WHERE l.{q(cols.dmltype)} = 'X'"
        return (
            f"MERGE INTO {rlog} l USING (SELECT * FROM {dlog} WHERE {q(cols.dmltype)} = '{op}') s\n"
            f"      ON ({on} AND l.{q(bidir.sync_id)} = {self.empty_text})\n"
            f"    WHEN MATCHED THEN UPDATE SET l.{q(cols.snaptime)} = {self.utc_now_sql()}, "
            f"l.{q(cols.rowguid)} = s.{q(cols.rowguid)}, l.{q(bidir.origin)} = {self.empty_text}, "
            f"l.{q(cols.dmltype)} = {folded}, l.{q(bidir.old_rowguid)} = {parts.old}{forget}\n"
            f"    WHEN NOT MATCHED THEN INSERT ({parts.columns}) VALUES ({parts.values});"
        )

    def create_bidir_log_ddl(
        self, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool
    ) -> list[DdlStep]:
        schema = info.table.schema
        t = _OracleBidirTriggers(self, info, objects, server, publisher=publisher)
        trig_i, trig_ir, trig_u, trig_ur, trig_ud, trig_udr, trig_d = (
            self.qualified(schema, name) for name in objects.triggers
        )
        return [
            DdlStep(self.create_bidir_log_table_sql(info, objects), f"DROP TABLE {t.rlog}"),
            DdlStep(self._bidir_buffer_table_sql(info, objects, t.dlog), f"DROP TABLE {t.dlog}"),
            DdlStep(
                f"CREATE OR REPLACE FUNCTION {self.qualified(schema, UTC_FUNCTION)} RETURN TIMESTAMP AS\n"
                "BEGIN\n  RETURN SYS_EXTRACT_UTC(SYSTIMESTAMP);\nEND;"
            ),
            DdlStep(t.insert_trigger(trig_i), f"DROP TRIGGER {trig_i}"),
            DdlStep(t.replay_trigger(trig_ir, "INSERT", "I"), f"DROP TRIGGER {trig_ir}"),
            DdlStep(t.update_trigger(trig_u), f"DROP TRIGGER {trig_u}"),
            DdlStep(t.replay_trigger(trig_ur, "UPDATE", "U"), f"DROP TRIGGER {trig_ur}"),
            DdlStep(t.key_update_trigger(trig_ud), f"DROP TRIGGER {trig_ud}"),
            DdlStep(t.replay_trigger(trig_udr, "UPDATE", "D", "I"), f"DROP TRIGGER {trig_udr}"),
            DdlStep(t.delete_trigger(trig_d), f"DROP TRIGGER {trig_d}"),
        ]

    def _bidir_buffer_table_sql(self, info: TableInfo, objects: LogObjects, dlog: str) -> str:
        """The global temporary table DLOG_<name> the row triggers buffer a statement's changes in."""
        q, cols = self.quote, self.log_columns
        key_defs = ",\n  ".join(
            f"{q(lk)} {c.type_sql} NOT NULL" for lk, c in zip(objects.key_columns, info.primary_key, strict=True)
        )
        return (
            f"CREATE GLOBAL TEMPORARY TABLE {dlog} (\n  {key_defs},\n"
            f"  {q(cols.dmltype)} {self.dmltype_type} NOT NULL,\n"
            f"  {q(cols.rowguid)} {self.rowguid_type} NOT NULL,\n"
            f"  {q(BIDIR.old_rowguid)} {self.rowguid_type}\n) ON COMMIT DELETE ROWS"
        )


class _OracleBidirTriggers:
    """The row triggers (buffering into DLOG_<name>) and statement triggers (replaying it) of one table."""

    def __init__(
        self, dialect: OracleDialect, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool
    ) -> None:
        self.dialect, self.objects, self.publisher = dialect, objects, publisher
        q, schema = dialect.quote, info.table.schema
        self.source = dialect.qualified(schema, info.table.table)
        self.rlog = dialect.qualified(schema, objects.rlog)
        self.dlog = dialect.qualified(schema, objects.tables[0])
        self.keys = [c.name for c in info.primary_key]
        self.rowguid, self.version = q(BIDIR.rowguid), dialect.new_version_sql(server)
        cols = dialect.log_columns
        self.buffer_columns = ", ".join(
            q(c) for c in (*objects.key_columns, cols.dmltype, cols.rowguid, BIDIR.old_rowguid)
        )

    def buffer(self, op: str, row: str, guid: str, old: str) -> str:
        """Buffer change ``op`` of ``row`` (``:NEW`` or ``:OLD``) with its version and the one it replaces."""
        q = self.dialect.quote
        values = ", ".join([*(f"{row}.{q(k)}" for k in self.keys), f"'{op}'", guid, old])
        return f"INSERT INTO {self.dlog} ({self.buffer_columns}) VALUES ({values});"

    def replay(self, op: str) -> str:
        """Fold the buffered changes ``op`` into the log."""
        return self.dialect._replay(self.rlog, self.dlog, self.objects, op, publisher=self.publisher)

    def replay_trigger(self, trigger: str, event: str, *ops: str) -> str:
        """The statement trigger after ``event`` that replays the buffer's ``ops`` in order, then empties it."""
        merges = "\n  ".join(self.replay(op) for op in ops)
        return (
            f"CREATE OR REPLACE TRIGGER {trigger} AFTER {event} ON {self.source}\n"
            f"BEGIN\n  {merges}\n  DELETE FROM {self.dlog};\nEND;"
        )

    def insert_trigger(self, trigger: str) -> str:
        rowguid = self.rowguid
        return (
            f"CREATE OR REPLACE TRIGGER {trigger} BEFORE INSERT ON {self.source} FOR EACH ROW\n"
            f"  WHEN (NEW.{rowguid} IS NULL)\n"  # replicated rows bring their version: no echo
            f"BEGIN\n  :NEW.{rowguid} := {self.version};\n  {self.buffer('I', ':NEW', f':NEW.{rowguid}', 'NULL')}\nEND;"
        )

    def update_trigger(self, trigger: str) -> str:
        q, rowguid = self.dialect.quote, self.rowguid
        key_kept = " AND ".join(f"OLD.{q(k)} = NEW.{q(k)}" for k in self.keys)
        return (
            f"CREATE OR REPLACE TRIGGER {trigger} BEFORE UPDATE ON {self.source} FOR EACH ROW\n"
            f"  WHEN (NEW.{rowguid} = OLD.{rowguid} AND {key_kept})\n"  # a user's update keeps ROWGUID
            f"BEGIN\n  :NEW.{rowguid} := {self.version};\n"
            f"  {self.buffer('U', ':NEW', f':NEW.{rowguid}', f':OLD.{rowguid}')}\nEND;"
        )

    def key_update_trigger(self, trigger: str) -> str:
        q, rowguid = self.dialect.quote, self.rowguid
        key_changed = " OR ".join(f"OLD.{q(k)} <> NEW.{q(k)}" for k in self.keys)
        return (
            f"CREATE OR REPLACE TRIGGER {trigger} BEFORE UPDATE ON {self.source} FOR EACH ROW\n"
            f"  WHEN (NEW.{rowguid} = OLD.{rowguid} AND ({key_changed}))\n"
            f"BEGIN\n  :NEW.{rowguid} := {self.version};\n"
            f"  {self.buffer('D', ':OLD', self.version, f':OLD.{rowguid}')}\n"
            f"  {self.buffer('I', ':NEW', f':NEW.{rowguid}', 'NULL')}\nEND;"
        )

    def delete_trigger(self, trigger: str) -> str:
        rowguid = self.rowguid
        return (
            f"CREATE OR REPLACE TRIGGER {trigger} AFTER DELETE ON {self.source} FOR EACH ROW\n"
            f"  WHEN (OLD.{rowguid} IS NULL OR OLD.{rowguid} <> {self.dialect.literal(DELETE_MARK)})\n"
            f"BEGIN\n  {self.buffer('D', ':OLD', self.version, f':OLD.{rowguid}')}\n"
            f"  {self.replay('D')}\n  DELETE FROM {self.dlog};\nEND;"
        )
