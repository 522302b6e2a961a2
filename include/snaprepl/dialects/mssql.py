"""SQL Server: generated DDL only (objects named as the seed lists them: ``<name>_I_log`` ...)."""

from __future__ import annotations

from collections.abc import Sequence

from snaprepl.common.table_names import ResolvedTable, with_suffix
from snaprepl.dialects.base import DELETE_MARK, DdlStep, Dialect, LogObjects, TableInfo
from snaprepl.dialects.bidir_logs import MergeShape, MergeTriggers


class MsSqlDialect(Dialect):
    name = "mssql"
    first_rows = "SELECT TOP ({rows}) * FROM ({select}) snaprepl_first"
    sqlglot_dialect = "tsql"
    identifier_quotes = ("[", "]")
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

    # ------------------------------------------------------------------ bi-directional logs
    #
    # SQL Server has no BEFORE triggers: AFTER triggers give users' rows their version with an UPDATE
    # of the table (a nested trigger, hence the seed's "nested triggers" server option), which the
    # update trigger does not log because the version moved. They are set-based over inserted and
    # deleted; a user's update keeps ROWGUID, so old and new rows pair by it, even when keys shift.

    def new_version_sql(self, server: str) -> str:
        return f"{self.literal(server + '@')} + {self.uuid_sql()}"

    merge_shape = MergeShape(
        head="  MERGE {rlog} WITH (HOLDLOCK) AS l",
        using_indent="  ",
        on_indent="     ",
        when_indent="   ",
        target="l",
        source="s",
        guid="[guid]",
        old="[old]",
        quote_aliases=True,
    )

    def create_bidir_log_ddl(
        self, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool
    ) -> list[DdlStep]:
        table = info.table
        source = self.qualified(table.schema, table.table)
        rlog = self.qualified(table.schema, objects.rlog)
        bodies = _MsSqlBidirTriggers(self, info, objects, server, publisher=publisher)
        events = {"INSERT": bodies.insert_body(), "UPDATE": bodies.update_body(), "DELETE": bodies.delete_body()}
        steps = [DdlStep(self.create_bidir_log_table_sql(info, objects), f"DROP TABLE IF EXISTS {rlog}")]
        for trigger, (event, body) in zip(objects.triggers, events.items(), strict=True):
            name = self.qualified(table.schema, trigger)
            steps.append(
                DdlStep(
                    f"CREATE TRIGGER {name} ON {source} AFTER {event} AS\nBEGIN\n  SET NOCOUNT ON;\n"
                    + "\n".join(body)
                    + "\nEND",
                    f"DROP TRIGGER IF EXISTS {name}",
                )
            )
        return steps


class _MsSqlBidirTriggers(MergeTriggers):
    """The bodies (lines) of one table's set-based AFTER triggers over ``inserted`` and ``deleted``."""

    def __init__(
        self, dialect: MsSqlDialect, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool
    ) -> None:
        super().__init__(
            dialect,
            info,
            objects,
            server,
            publisher=publisher,
            new=("inserted i", "i"),
            old=("deleted d", "d"),
            alias="k",
        )
        self.dialect: MsSqlDialect = dialect

    def insert_body(self) -> list[str]:
        source, rowguid, on = self.source, self.rowguid, self.on("t", "i")
        return [
            "  -- Users' rows come without a version: give them one of this server, and log them.",
            "  -- Replicated rows bring theirs and are not logged (no echo).",
            f"  UPDATE t SET {rowguid} = {self.version} FROM {source} t JOIN inserted i ON {on} "
            f"WHERE i.{rowguid} IS NULL;",
            self.merge(
                "I",
                f"SELECT {self.cols('t')}, t.{rowguid}, NULL FROM {source} t JOIN inserted i ON {on} "
                f"WHERE i.{rowguid} IS NULL",
            ),
        ]

    def update_body(self) -> list[str]:
        source, rowguid, on, paired, same_key = self.source, self.rowguid, self.on("t", "i"), self.paired, self.same_key
        return [
            "  -- A user's update keeps ROWGUID: old and new rows pair by it (a replicated write changes it).",
            "  -- Keys that moved away are deletes, first; then every updated row gets a new version.",
            self.merge(
                "D", f"SELECT {self.cols('d')}, {self.version}, d.{rowguid} FROM {paired} WHERE NOT ({same_key})"
            ),
            f"  UPDATE t SET {rowguid} = {self.version} FROM {source} t JOIN inserted i ON {on} "
            f"JOIN deleted d ON d.{rowguid} = i.{rowguid};",
            self.merge(
                "I",
                f"SELECT {self.cols('i')}, t.{rowguid}, NULL FROM {paired} JOIN {source} t ON {on} "
                f"WHERE NOT ({same_key})",
            ),
            self.merge(
                "U",
                f"SELECT {self.cols('i')}, t.{rowguid}, d.{rowguid} FROM {paired} JOIN {source} t ON {on} "
                f"WHERE {same_key}",
            ),
        ]

    def delete_body(self) -> list[str]:
        rowguid = self.rowguid
        return [
            "  -- A replicated delete marks its rows first: those are not logged.",
            self.merge(
                "D",
                f"SELECT {self.cols('d')}, {self.version}, d.{rowguid} FROM deleted d "
                f"WHERE d.{rowguid} IS NULL OR d.{rowguid} <> {self.dialect.literal(DELETE_MARK)}",
            ),
        ]
