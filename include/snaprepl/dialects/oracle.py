"""Oracle: generated DDL only (triggers ``<name>_I_log`` ..., and the seed's ``OPL_GETUTCDATE()``)."""

from __future__ import annotations

from collections.abc import Sequence

from snaprepl.dialects.base import DdlStep, Dialect, LogObjects, TableInfo
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
        statements.append(f"DROP TABLE {self.qualified(table.schema, objects.rlog)}")
        return statements
