"""IBM DB2: generated DDL only (triggers ``<name>_I``, ``_U``, ``_D`` and sequence ``opl_seq_rowguid``)."""

from __future__ import annotations

from collections.abc import Sequence

from snaprepl.dialects.base import DdlStep, Dialect, LogObjects, TableInfo
from snaprepl.names import ResolvedTable, with_suffix

ROWGUID_SEQUENCE = "opl_seq_rowguid"


class Db2Dialect(Dialect):
    name = "db2"
    sqlglot_dialect = ""  # sqlglot has no DB2 dialect; ANSI double-quoted identifiers are right for DB2
    max_identifier_length = 128
    transactional_ddl = True
    jdbc_driver = "com.ibm.db2.jcc.DB2Driver"
    jdbc_url_prefixes = ("jdbc:db2:",)
    snaptime_type = "TIMESTAMP(6)"
    dmltype_type = "CHAR(1)"
    rowguid_type = "VARCHAR(255)"

    def fold_unquoted(self, text: str) -> str:
        return super().fold_unquoted(text).upper()

    def utc_now_sql(self) -> str:
        return "(CURRENT TIMESTAMP - CURRENT TIMEZONE)"

    def uuid_sql(self) -> str:
        return f"VARCHAR(NEXT VALUE FOR {self.quote(ROWGUID_SEQUENCE)})"

    def log_objects(self, table: ResolvedTable, key_columns: Sequence[str]) -> LogObjects:
        return LogObjects(
            rlog=self.shorten(f"RLOG_{table.table}"),
            key_columns=self._log_key_columns(key_columns),
            triggers=tuple(with_suffix(table.table, f"_{op}", self.max_identifier_length) for op in ("I", "U", "D")),
            sequences=(ROWGUID_SEQUENCE,),
        )

    def _merge(self, rlog: str, objects: LogObjects, row: str, keys: list[str], dmltype: str) -> str:
        cols = self.log_columns
        aliases = [f"K{i}" for i in range(1, len(keys) + 1)]
        on = " AND ".join(f"L.{self.quote(lk)} = S.{a}" for lk, a in zip(objects.key_columns, aliases, strict=True))
        now, guid = self.utc_now_sql(), self.uuid_sql()
        values = ", ".join([*(f"S.{a}" for a in aliases), now, f"'{dmltype}'", guid])
        return (
            f"MERGE INTO {rlog} AS L\n"
            f"    USING (VALUES ({', '.join(f'{row}.{self.quote(k)}' for k in keys)})) AS S ({', '.join(aliases)})"
            f" ON {on}\n"
            f"    WHEN MATCHED THEN UPDATE SET {self.quote(cols.snaptime)} = {now}, "
            f"{self.quote(cols.dmltype)} = '{dmltype}', {self.quote(cols.rowguid)} = {guid}\n"
            f"    WHEN NOT MATCHED THEN INSERT ({self._log_column_list(objects)}) VALUES ({values});"
        )

    def render_script(self, statements: Sequence[str]) -> str:
        # db2 -td@ : trigger bodies contain ';', so statements end with '@'.
        return "--#SET TERMINATOR @\n\n" + "".join(f"{s}@\n\n" for s in statements).rstrip() + "\n"

    def create_log_ddl(self, info: TableInfo, objects: LogObjects) -> list[DdlStep]:
        table = info.table
        source = self.qualified(table.schema, table.table)
        rlog = self.qualified(table.schema, objects.rlog)
        keys = [c.name for c in info.primary_key]
        key_changed = " OR ".join(f"O.{self.quote(k)} <> N.{self.quote(k)}" for k in keys)
        trig_i, trig_u, trig_d = (self.qualified(table.schema, t) for t in objects.triggers)
        sequence = self.quote(ROWGUID_SEQUENCE)
        return [
            DdlStep(self.create_log_table_sql(info, objects), f"DROP TABLE {rlog}"),
            # Shared by every log of the schema: created when missing (SQLSTATE 42710 = already exists).
            DdlStep(
                "BEGIN\n  DECLARE CONTINUE HANDLER FOR SQLSTATE '42710' BEGIN END;\n"
                f"  EXECUTE IMMEDIATE 'CREATE SEQUENCE {sequence.replace(chr(39), chr(39) * 2)} AS BIGINT "
                "START WITH 1 INCREMENT BY 1 NO CYCLE CACHE 100';\nEND"
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_i} AFTER INSERT ON {source} REFERENCING NEW AS N FOR EACH ROW\n"
                f"BEGIN ATOMIC\n  {self._merge(rlog, objects, 'N', keys, 'I')}\nEND",
                f"DROP TRIGGER {trig_i}",
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_u} AFTER UPDATE ON {source} REFERENCING OLD AS O NEW AS N FOR EACH ROW\n"
                f"BEGIN ATOMIC\n"
                f"  IF {key_changed} THEN\n"
                f"    {self._merge(rlog, objects, 'O', keys, 'D')}\n"
                f"    {self._merge(rlog, objects, 'N', keys, 'I')}\n"
                f"  ELSE\n"
                f"    {self._merge(rlog, objects, 'N', keys, 'U')}\n"
                f"  END IF;\nEND",
                f"DROP TRIGGER {trig_u}",
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_d} AFTER DELETE ON {source} REFERENCING OLD AS O FOR EACH ROW\n"
                f"BEGIN ATOMIC\n  {self._merge(rlog, objects, 'O', keys, 'D')}\nEND",
                f"DROP TRIGGER {trig_d}",
            ),
        ]

    def drop_log_ddl(self, table: ResolvedTable, objects: LogObjects, *, source_exists: bool) -> list[str]:
        statements = []
        if source_exists:
            statements += [f"DROP TRIGGER {self.qualified(table.schema, t)}" for t in objects.triggers]
        statements.append(f"DROP TABLE {self.qualified(table.schema, objects.rlog)}")
        return statements
