"""SQL Server: generated DDL only (objects named as the seed lists them: ``<name>_I_log`` ...)."""

from __future__ import annotations

from collections.abc import Sequence

from snaprepl.dialects.base import DdlStep, Dialect, LogObjects, TableInfo
from snaprepl.names import ResolvedTable, with_suffix


class MsSqlDialect(Dialect):
    name = "mssql"
    sqlglot_dialect = "tsql"
    max_identifier_length = 128
    transactional_ddl = True
    jdbc_driver = "com.microsoft.sqlserver.jdbc.SQLServerDriver"
    jdbc_url_prefixes = ("jdbc:sqlserver:", "jdbc:jtds:sqlserver:")
    snaptime_type = "datetime2(6)"
    dmltype_type = "char(1)"
    rowguid_type = "varchar(255)"

    def utc_now_sql(self) -> str:
        return "SYSUTCDATETIME()"

    def uuid_sql(self) -> str:
        return "CONVERT(varchar(36), NEWID())"

    def log_objects(self, table: ResolvedTable, key_columns: Sequence[str]) -> LogObjects:
        return LogObjects(
            rlog=self.shorten(f"RLOG_{table.table}"),
            key_columns=self._log_key_columns(key_columns),
            triggers=tuple(
                with_suffix(table.table, f"_{op}_log", self.max_identifier_length) for op in ("I", "U", "D")
            ),
        )

    def _merge(self, rlog: str, objects: LogObjects, source_rows: str, key_aliases: list[str]) -> str:
        cols = self.log_columns
        on = " AND ".join(
            f"l.{self.quote(lk)} = s.{self.quote(a)}" for lk, a in zip(objects.key_columns, key_aliases, strict=True)
        )
        now, guid = self.utc_now_sql(), self.uuid_sql()
        insert_values = ", ".join([*(f"s.{self.quote(a)}" for a in key_aliases), now, "s.[op]", guid])
        return (
            f"  MERGE {rlog} WITH (HOLDLOCK) AS l\n"
            f"  USING ({source_rows}) AS s ({', '.join(self.quote(a) for a in key_aliases)}, [op])\n"
            f"     ON {on}\n"
            f"   WHEN MATCHED THEN UPDATE SET {self.quote(cols.snaptime)} = {now}, "
            f"{self.quote(cols.dmltype)} = s.[op], {self.quote(cols.rowguid)} = {guid}\n"
            f"   WHEN NOT MATCHED THEN INSERT ({self._log_column_list(objects)}) VALUES ({insert_values});"
        )

    def render_script(self, statements: Sequence[str]) -> str:
        # sqlcmd: CREATE TRIGGER must start a batch.
        return "".join(f"{s}\nGO\n\n" for s in statements).rstrip() + "\n"

    def create_log_ddl(self, info: TableInfo, objects: LogObjects) -> list[DdlStep]:
        table = info.table
        source = self.qualified(table.schema, table.table)
        rlog = self.qualified(table.schema, objects.rlog)
        keys = [c.name for c in info.primary_key]
        aliases = [f"k{i}" for i in range(1, len(keys) + 1)]
        key_list = ", ".join(self.quote(k) for k in keys)
        matches = " AND ".join(f"i.{self.quote(k)} = d.{self.quote(k)}" for k in keys)
        # Set-based over inserted/deleted: keys only in deleted were deleted (or moved away), keys only in
        # inserted are new (or moved there), keys in both were updated in place.
        changed_rows = (
            f"SELECT {', '.join(f'd.{self.quote(k)}' for k in keys)}, 'D' FROM deleted d "
            f"WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE {matches}) "
            f"UNION ALL SELECT {', '.join(f'i.{self.quote(k)}' for k in keys)}, "
            f"CASE WHEN EXISTS (SELECT 1 FROM deleted d WHERE {matches}) THEN 'U' ELSE 'I' END FROM inserted i"
        )
        bodies = {
            "INSERT": self._merge(rlog, objects, f"SELECT {key_list}, 'I' FROM inserted", aliases),
            "UPDATE": self._merge(rlog, objects, changed_rows, aliases),
            "DELETE": self._merge(rlog, objects, f"SELECT {key_list}, 'D' FROM deleted", aliases),
        }
        steps = [DdlStep(self.create_log_table_sql(info, objects), f"DROP TABLE IF EXISTS {rlog}")]
        for trigger, (event, body) in zip(objects.triggers, bodies.items(), strict=True):
            name = self.qualified(table.schema, trigger)
            steps.append(
                DdlStep(
                    f"CREATE TRIGGER {name} ON {source} AFTER {event} AS\nBEGIN\n  SET NOCOUNT ON;\n{body}\nEND",
                    f"DROP TRIGGER IF EXISTS {name}",
                )
            )
        return steps

    def drop_log_ddl(self, table: ResolvedTable, objects: LogObjects, *, source_exists: bool) -> list[str]:
        statements = [f"DROP TRIGGER IF EXISTS {self.qualified(table.schema, t)}" for t in objects.triggers]
        statements.append(f"DROP TABLE IF EXISTS {self.qualified(table.schema, objects.rlog)}")
        return statements
