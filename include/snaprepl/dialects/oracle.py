"""Oracle: generated DDL only (triggers ``<name>_I_log`` ..., and the seed's ``OPL_GETUTCDATE()``)."""

from __future__ import annotations

from collections.abc import Sequence

from snaprepl.dialects.base import BIDIR, DELETE_MARK, DdlStep, Dialect, LogObjects, TableInfo
from snaprepl.names import ResolvedTable, with_suffix

UTC_FUNCTION = "OPL_GETUTCDATE"


class OracleDialect(Dialect):
    name = "oracle"
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
        table = info.table
        q, cols, bidir = self.quote, self.log_columns, BIDIR
        source = self.qualified(table.schema, table.table)
        rlog = self.qualified(table.schema, objects.rlog)
        dlog = self.qualified(table.schema, objects.tables[0])
        keys = [c.name for c in info.primary_key]
        rowguid, version = q(BIDIR.rowguid), self.new_version_sql(server)
        trig_i, trig_ir, trig_u, trig_ur, trig_ud, trig_udr, trig_d = (
            self.qualified(table.schema, t) for t in objects.triggers
        )
        key_changed = " OR ".join(f"OLD.{q(k)} <> NEW.{q(k)}" for k in keys)
        key_kept = " AND ".join(f"OLD.{q(k)} = NEW.{q(k)}" for k in keys)
        buffer_columns = ", ".join(q(c) for c in (*objects.key_columns, cols.dmltype, cols.rowguid, bidir.old_rowguid))

        def buffer(op: str, row: str, guid: str, old: str) -> str:
            values = ", ".join([*(f"{row}.{q(k)}" for k in keys), f"'{op}'", guid, old])
            return f"INSERT INTO {dlog} ({buffer_columns}) VALUES ({values});"

        def replay(*ops: str) -> str:
            merges = "\n  ".join(self._replay(rlog, dlog, objects, op, publisher=publisher) for op in ops)
            return f"BEGIN\n  {merges}\n  DELETE FROM {dlog};\nEND;"

        key_defs = ",\n  ".join(
            f"{q(lk)} {c.type_sql} NOT NULL" for lk, c in zip(objects.key_columns, info.primary_key, strict=True)
        )
        return [
            DdlStep(self.create_bidir_log_table_sql(info, objects), f"DROP TABLE {rlog}"),
            DdlStep(
                f"CREATE GLOBAL TEMPORARY TABLE {dlog} (\n  {key_defs},\n"
                f"  {q(cols.dmltype)} {self.dmltype_type} NOT NULL,\n"
                f"  {q(cols.rowguid)} {self.rowguid_type} NOT NULL,\n"
                f"  {q(bidir.old_rowguid)} {self.rowguid_type}\n) ON COMMIT DELETE ROWS",
                f"DROP TABLE {dlog}",
            ),
            DdlStep(
                f"CREATE OR REPLACE FUNCTION {self.qualified(table.schema, UTC_FUNCTION)} RETURN TIMESTAMP AS\n"
                "BEGIN\n  RETURN SYS_EXTRACT_UTC(SYSTIMESTAMP);\nEND;"
            ),
            DdlStep(
                f"CREATE OR REPLACE TRIGGER {trig_i} BEFORE INSERT ON {source} FOR EACH ROW\n"
                f"  WHEN (NEW.{rowguid} IS NULL)\n"  # replicated rows bring their version: no echo
                f"BEGIN\n  :NEW.{rowguid} := {version};\n  {buffer('I', ':NEW', f':NEW.{rowguid}', 'NULL')}\nEND;",
                f"DROP TRIGGER {trig_i}",
            ),
            DdlStep(
                f"CREATE OR REPLACE TRIGGER {trig_ir} AFTER INSERT ON {source}\n{replay('I')}",
                f"DROP TRIGGER {trig_ir}",
            ),
            DdlStep(
                f"CREATE OR REPLACE TRIGGER {trig_u} BEFORE UPDATE ON {source} FOR EACH ROW\n"
                f"  WHEN (NEW.{rowguid} = OLD.{rowguid} AND {key_kept})\n"  # a user's update keeps ROWGUID
                f"BEGIN\n  :NEW.{rowguid} := {version};\n"
                f"  {buffer('U', ':NEW', f':NEW.{rowguid}', f':OLD.{rowguid}')}\nEND;",
                f"DROP TRIGGER {trig_u}",
            ),
            DdlStep(
                f"CREATE OR REPLACE TRIGGER {trig_ur} AFTER UPDATE ON {source}\n{replay('U')}",
                f"DROP TRIGGER {trig_ur}",
            ),
            DdlStep(
                f"CREATE OR REPLACE TRIGGER {trig_ud} BEFORE UPDATE ON {source} FOR EACH ROW\n"
                f"  WHEN (NEW.{rowguid} = OLD.{rowguid} AND ({key_changed}))\n"
                f"BEGIN\n  :NEW.{rowguid} := {version};\n"
                f"  {buffer('D', ':OLD', version, f':OLD.{rowguid}')}\n"
                f"  {buffer('I', ':NEW', f':NEW.{rowguid}', 'NULL')}\nEND;",
                f"DROP TRIGGER {trig_ud}",
            ),
            DdlStep(
                f"CREATE OR REPLACE TRIGGER {trig_udr} AFTER UPDATE ON {source}\n{replay('D', 'I')}",
                f"DROP TRIGGER {trig_udr}",
            ),
            DdlStep(
                f"CREATE OR REPLACE TRIGGER {trig_d} AFTER DELETE ON {source} FOR EACH ROW\n"
                f"  WHEN (OLD.{rowguid} IS NULL OR OLD.{rowguid} <> {self.literal(DELETE_MARK)})\n"
                f"BEGIN\n  {buffer('D', ':OLD', version, f':OLD.{rowguid}')}\n"
                f"  {self._replay(rlog, dlog, objects, 'D', publisher=publisher)}\n  DELETE FROM {dlog};\nEND;",
                f"DROP TRIGGER {trig_d}",
            ),
        ]
