"""IBM DB2: generated DDL only (triggers ``<name>_I``, ``_U``, ``_D`` and sequence ``opl_seq_rowguid``)."""

from __future__ import annotations

from collections.abc import Sequence

from snaprepl.common.table_names import ResolvedTable, with_suffix
from snaprepl.dialects.base import DELETE_MARK, DdlStep, Dialect, LogObjects, TableInfo
from snaprepl.dialects.bidir_logs import MergeShape, MergeTriggers

ROWGUID_SEQUENCE = "opl_seq_rowguid"


class Db2Dialect(Dialect):
    name = "db2"
    first_rows = "{select} FETCH FIRST {rows} ROWS ONLY"
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

    def _sequence_step(self) -> DdlStep:
        # Shared by every log of the schema: created when missing (SQLSTATE 42710 = already exists).
        sequence = self.quote(ROWGUID_SEQUENCE)
        return DdlStep(
            "BEGIN\n  DECLARE CONTINUE HANDLER FOR SQLSTATE '42710' BEGIN END;\n"
            f"  EXECUTE IMMEDIATE 'CREATE SEQUENCE {sequence.replace(chr(39), chr(39) * 2)} AS BIGINT "
            "START WITH 1 INCREMENT BY 1 NO CYCLE CACHE 100';\nEND"
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
        return [
            DdlStep(self.create_log_table_sql(info, objects), f"DROP TABLE {rlog}"),
            self._sequence_step(),
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

    # ------------------------------------------------------------------ bi-directional logs
    #
    # Statement triggers over transition tables (DB2 checks unique keys at the end of a statement, so
    # row order cannot be trusted when keys shift). A user's update keeps ROWGUID: old and new rows
    # pair by it. AFTER triggers give users' rows their version with an UPDATE of the table, which
    # the update triggers do not log because the version moved.

    def bidir_log_objects(self, table: ResolvedTable, key_columns: Sequence[str]) -> LogObjects:
        return LogObjects(
            rlog=self.shorten(f"RLOG_{table.table}"),
            key_columns=self._log_key_columns(key_columns),
            triggers=tuple(
                with_suffix(table.table, f"_{op}", self.max_identifier_length) for op in ("I", "U", "UD", "D")
            ),
            sequences=(ROWGUID_SEQUENCE,),
        )

    merge_shape = MergeShape(
        head="MERGE INTO {rlog} AS L",
        using_indent="    ",
        on_indent="    ",
        when_indent="    ",
        target="L",
        source="S",
        guid="GUID",
        old="OLD",
        quote_aliases=False,
    )

    def create_bidir_log_ddl(
        self, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool
    ) -> list[DdlStep]:
        triggers = _Db2BidirTriggers(self, info, objects, server, publisher=publisher)
        rlog = self.qualified(info.table.schema, objects.rlog)
        trig_i, trig_u, trig_ud, trig_d = (self.qualified(info.table.schema, t) for t in objects.triggers)
        return [
            DdlStep(self.create_bidir_log_table_sql(info, objects), f"DROP TABLE {rlog}"),
            self._sequence_step(),
            DdlStep(triggers.insert_trigger(trig_i), f"DROP TRIGGER {trig_i}"),
            DdlStep(triggers.update_trigger(trig_u), f"DROP TRIGGER {trig_u}"),
            DdlStep(triggers.key_update_trigger(trig_ud), f"DROP TRIGGER {trig_ud}"),
            DdlStep(triggers.delete_trigger(trig_d), f"DROP TRIGGER {trig_d}"),
        ]


class _Db2BidirTriggers(MergeTriggers):
    """The statement triggers of one table's bi-directional log (``N``/``O``: new/old transition tables)."""

    def __init__(
        self, dialect: Db2Dialect, info: TableInfo, objects: LogObjects, server: str, *, publisher: bool
    ) -> None:
        super().__init__(dialect, info, objects, server, publisher=publisher, new=("N", "N"), old=("O", "O"), alias="K")
        self.dialect: Db2Dialect = dialect

    def version_rows(self, condition: str) -> str:
        """Give the table's rows paired by ROWGUID under ``condition`` a new version."""
        return (
            f"UPDATE {self.source} T SET {self.rowguid} = {self.version} "
            f"WHERE EXISTS (SELECT 1 FROM {self.paired} WHERE {self.on('N', 'T')} AND {condition});"
        )

    def insert_trigger(self, trigger: str) -> str:
        source, rowguid = self.source, self.rowguid
        return (
            f"CREATE TRIGGER {trigger} AFTER INSERT ON {source} REFERENCING NEW TABLE AS N FOR EACH STATEMENT\n"
            "BEGIN ATOMIC\n"
            "  -- Users' rows come without a version: give them one of this server, and log them.\n"
            f"  UPDATE {source} T SET {rowguid} = {self.version} "
            f"WHERE EXISTS (SELECT 1 FROM N WHERE {self.on('N', 'T')} AND N.{rowguid} IS NULL);\n"
            "  "
            + self.merge(
                "I",
                f"SELECT {self.cols('T')}, T.{rowguid}, CAST(NULL AS {self.dialect.rowguid_type}) FROM {source} T "
                f"JOIN N ON {self.on('N', 'T')} WHERE N.{rowguid} IS NULL",
            )
            + "\nEND"
        )

    def update_trigger(self, trigger: str) -> str:
        rowguid = self.rowguid
        return (
            f"CREATE TRIGGER {trigger} AFTER UPDATE ON {self.source} "
            "REFERENCING OLD TABLE AS O NEW TABLE AS N FOR EACH STATEMENT\n"
            "BEGIN ATOMIC\n"
            "  -- Updated in place by a user (same key, same ROWGUID): a new version, logged as U.\n"
            f"  {self.version_rows(self.same_key)}\n"
            "  "
            + self.merge(
                "U",
                f"SELECT {self.cols('T')}, T.{rowguid}, O.{rowguid} FROM {self.paired} "
                f"JOIN {self.source} T ON {self.on('N', 'T')} WHERE {self.same_key}",
            )
            + "\nEND"
        )

    def key_update_trigger(self, trigger: str) -> str:
        rowguid, moved = self.rowguid, f"NOT ({self.same_key})"
        return (
            f"CREATE TRIGGER {trigger} AFTER UPDATE ON {self.source} "
            "REFERENCING OLD TABLE AS O NEW TABLE AS N FOR EACH STATEMENT\n"
            "BEGIN ATOMIC\n"
            "  -- A user's key update: a delete of the old key first, then an insert with a new version.\n"
            "  "
            + self.merge("D", f"SELECT {self.cols('O')}, {self.version}, O.{rowguid} FROM {self.paired} WHERE {moved}")
            + f"\n  {self.version_rows(moved)}\n  "
            + self.merge(
                "I",
                f"SELECT {self.cols('T')}, T.{rowguid}, CAST(NULL AS {self.dialect.rowguid_type}) FROM {self.paired} "
                f"JOIN {self.source} T ON {self.on('N', 'T')} WHERE {moved}",
            )
            + "\nEND"
        )

    def delete_trigger(self, trigger: str) -> str:
        rowguid = self.rowguid
        return (
            f"CREATE TRIGGER {trigger} AFTER DELETE ON {self.source} REFERENCING OLD TABLE AS O FOR EACH STATEMENT\n"
            "BEGIN ATOMIC\n"
            "  -- A replicated delete marks its rows first: those are not logged.\n"
            "  "
            + self.merge(
                "D",
                f"SELECT {self.cols('O')}, {self.version}, O.{rowguid} FROM O "
                f"WHERE O.{rowguid} IS NULL OR O.{rowguid} <> {self.dialect.literal(DELETE_MARK)}",
            )
            + "\nEND"
        )
