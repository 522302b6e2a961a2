"""Informix: generated DDL only.

As the seed lists: triggers ``<name>_I_log``, ``_U_log``, ``_D_log``, sequence ``opl_seq_rowguid``
and stored procedures ``<name>_R_proc`` (log one key) and ``<name>_U_proc`` (an update, which is a
delete plus an insert when the key changed): Informix triggers can only call procedures for logic.
Informix cannot report UTC (seed, DBMS-specific notes): run the server with ``TZ=UTC``.
"""

from __future__ import annotations

from collections.abc import Sequence

from snaprepl.common.table_names import ResolvedTable, with_suffix
from snaprepl.dialects.base import DdlStep, Dialect, LogObjects, TableInfo

ROWGUID_SEQUENCE = "opl_seq_rowguid"


class InformixDialect(Dialect):
    name = "informix"
    first_rows = "SELECT FIRST {rows} * FROM ({select}) snaprepl_first"
    sqlglot_dialect = ""  # no sqlglot dialect; double-quoted identifiers need DELIMIDENT=y
    max_identifier_length = 128
    transactional_ddl = True
    jdbc_driver = "com.informix.jdbc.IfxDriver"
    jdbc_url_prefixes = ("jdbc:informix-sqli:",)
    snaptime_type = "DATETIME YEAR TO FRACTION(5)"
    dmltype_type = "CHAR(1)"
    rowguid_type = "VARCHAR(255)"

    def fold_unquoted(self, text: str) -> str:
        return super().fold_unquoted(text).lower()

    def utc_now_sql(self) -> str:
        return "CURRENT YEAR TO FRACTION(5)"

    def uuid_sql(self) -> str:
        return f"'IFX' || {self.quote(ROWGUID_SEQUENCE)}.NEXTVAL"

    def log_objects(self, table: ResolvedTable, key_columns: Sequence[str]) -> LogObjects:
        limit = self.max_identifier_length
        return LogObjects(
            rlog=self.shorten(f"RLOG_{table.table}"),
            key_columns=self._log_key_columns(key_columns),
            triggers=tuple(with_suffix(table.table, f"_{op}_log", limit) for op in ("I", "U", "D")),
            functions=(
                with_suffix(table.table, "_R_proc", limit),
                with_suffix(table.table, "_U_proc", limit),
            ),
            sequences=(ROWGUID_SEQUENCE,),
        )

    def render_script(self, statements: Sequence[str]) -> str:
        # dbaccess with DELIMIDENT=y, so double-quoted names are identifiers.
        return (
            "-- run with DELIMIDENT=y; the server must run with TZ=UTC\n\n"
            + "".join(f"{s};\n\n" for s in statements).rstrip()
            + "\n"
        )

    def create_log_ddl(self, info: TableInfo, objects: LogObjects) -> list[DdlStep]:
        table = info.table
        cols = self.log_columns
        source = self.qualified(table.schema, table.table)
        rlog = self.qualified(table.schema, objects.rlog)
        record_proc, update_proc = (self.qualified(table.schema, f) for f in objects.functions)
        pk = info.primary_key
        params = [f"k{i}" for i in range(1, len(pk) + 1)]
        old_params = [f"o{i}" for i in range(1, len(pk) + 1)]
        new_params = [f"n{i}" for i in range(1, len(pk) + 1)]
        now, guid = self.utc_now_sql(), self.uuid_sql()
        key_match = " AND ".join(f"{self.quote(lk)} = {p}" for lk, p in zip(objects.key_columns, params, strict=True))
        record_sig = ", ".join(f"{p} {c.type_sql}" for p, c in zip(params, pk, strict=True))
        update_sig = ", ".join(
            [f"{p} {c.type_sql}" for p, c in zip(old_params, pk, strict=True)]
            + [f"{p} {c.type_sql}" for p, c in zip(new_params, pk, strict=True)]
        )
        key_changed = " OR ".join(f"{o} <> {n}" for o, n in zip(old_params, new_params, strict=True))
        record_body = (
            f"CREATE PROCEDURE {record_proc}({record_sig}, op CHAR(1))\n"
            f"  UPDATE {rlog} SET {self.quote(cols.snaptime)} = {now}, {self.quote(cols.dmltype)} = op, "
            f"{self.quote(cols.rowguid)} = {guid} WHERE {key_match};\n"
            f"  IF DBINFO('sqlca.sqlerrd2') = 0 THEN\n"
            f"    INSERT INTO {rlog} ({self._log_column_list(objects)})\n"
            f"      VALUES ({', '.join(params)}, {now}, op, {guid});\n"
            f"  END IF;\nEND PROCEDURE"
        )
        update_body = (
            f"CREATE PROCEDURE {update_proc}({update_sig})\n"
            f"  IF {key_changed} THEN\n"
            f"    EXECUTE PROCEDURE {record_proc}({', '.join(old_params)}, 'D');\n"
            f"    EXECUTE PROCEDURE {record_proc}({', '.join(new_params)}, 'I');\n"
            f"  ELSE\n"
            f"    EXECUTE PROCEDURE {record_proc}({', '.join(new_params)}, 'U');\n"
            f"  END IF;\nEND PROCEDURE"
        )
        keys_of = {row: ", ".join(f"{row}.{self.quote(c.name)}" for c in pk) for row in ("n", "o")}
        trig_i, trig_u, trig_d = (self.qualified(table.schema, t) for t in objects.triggers)
        return [
            DdlStep(self.create_log_table_sql(info, objects), f"DROP TABLE IF EXISTS {rlog}"),
            # Shared by every log of the database, so never dropped with one of them.
            DdlStep(f"CREATE SEQUENCE IF NOT EXISTS {self.quote(ROWGUID_SEQUENCE)}"),
            DdlStep(record_body, f"DROP PROCEDURE IF EXISTS {record_proc}"),
            DdlStep(update_body, f"DROP PROCEDURE IF EXISTS {update_proc}"),
            DdlStep(
                f"CREATE TRIGGER {trig_i} INSERT ON {source} REFERENCING NEW AS n FOR EACH ROW\n"
                f"  (EXECUTE PROCEDURE {record_proc}({keys_of['n']}, 'I'))",
                f"DROP TRIGGER IF EXISTS {trig_i}",
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_u} UPDATE ON {source} REFERENCING OLD AS o NEW AS n FOR EACH ROW\n"
                f"  (EXECUTE PROCEDURE {update_proc}({keys_of['o']}, {keys_of['n']}))",
                f"DROP TRIGGER IF EXISTS {trig_u}",
            ),
            DdlStep(
                f"CREATE TRIGGER {trig_d} DELETE ON {source} REFERENCING OLD AS o FOR EACH ROW\n"
                f"  (EXECUTE PROCEDURE {record_proc}({keys_of['o']}, 'D'))",
                f"DROP TRIGGER IF EXISTS {trig_d}",
            ),
        ]

    def drop_log_ddl(self, table: ResolvedTable, objects: LogObjects, *, source_exists: bool) -> list[str]:
        statements = [f"DROP TRIGGER IF EXISTS {self.qualified(table.schema, t)}" for t in objects.triggers]
        statements += [f"DROP PROCEDURE IF EXISTS {self.qualified(table.schema, f)}" for f in objects.functions]
        statements.append(f"DROP TABLE IF EXISTS {self.qualified(table.schema, objects.rlog)}")
        return statements
