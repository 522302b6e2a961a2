"""Foreign-key cascades reach snapshot logs (issue 27.1).

InnoDB's ON DELETE CASCADE, ON UPDATE CASCADE and SET NULL fire no trigger on the child: a log on the
child gets triggers on the tables the cascades come from, so copies of the child (and grandchildren,
through cascading children) stay equal to the source; what no trigger can follow is refused in one
line. PostgreSQL's cascades fire the child's row triggers."""

from __future__ import annotations

import pytest

from snaprepl import api
from snaprepl.errors import RefreshFailed, UnloggableCascade
from tests.support.databases import RealDatabase, mysql_admin_connect

pytestmark = pytest.mark.spark


def _mysql_family(db: RealDatabase, u: str) -> dict[str, str]:
    """A parent, a cascading child, a grandchild through it, a child keyed by its parent's key (a
    cascaded key change), and a SET NULL child."""
    names = {"p": f"{u}_p", "c": f"{u}_c", "g": f"{u}_g", "k": f"{u}_k", "n": f"{u}_n"}
    p, c, g, k, n = (db.q(x) for x in names.values())
    db.run(
        f"CREATE TABLE {p} (id int PRIMARY KEY, v int)",
        f"CREATE TABLE {c} (id int PRIMARY KEY, pid int, v int, CONSTRAINT {u}_c_fk FOREIGN KEY (pid) "
        f"REFERENCES {p} (id) ON DELETE CASCADE ON UPDATE CASCADE)",
        f"CREATE TABLE {g} (id int PRIMARY KEY, cid int, CONSTRAINT {u}_g_fk FOREIGN KEY (cid) "
        f"REFERENCES {c} (id) ON DELETE CASCADE)",
        f"CREATE TABLE {k} (pid int, n int, v int, PRIMARY KEY (pid, n), CONSTRAINT {u}_k_fk FOREIGN KEY (pid) "
        f"REFERENCES {p} (id) ON DELETE CASCADE ON UPDATE CASCADE)",
        f"CREATE TABLE {n} (id int PRIMARY KEY, pid int NULL, CONSTRAINT {u}_n_fk FOREIGN KEY (pid) "
        f"REFERENCES {p} (id) ON DELETE SET NULL ON UPDATE SET NULL)",
        f"INSERT INTO {p} VALUES " + ", ".join(f"({i}, {i})" for i in range(1, 11)),
        f"INSERT INTO {c} VALUES " + ", ".join(f"({i}, {i % 10 + 1}, {i})" for i in range(1, 101)),
        f"INSERT INTO {g} VALUES " + ", ".join(f"({i}, {i})" for i in range(1, 101, 3)),
        f"INSERT INTO {k} VALUES " + ", ".join(f"({i % 10 + 1}, {i}, {i})" for i in range(1, 31)),
        f"INSERT INTO {n} VALUES " + ", ".join(f"({i}, {i % 10 + 1})" for i in range(1, 21)),
    )
    return names


def test_mariadb_cascades_reach_the_copies_of_children_and_grandchildren(
    mysql_db, sqlite_db, catalog, settings, refresher, unique_name
) -> None:
    names = _mysql_family(mysql_db, unique_name)
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{names['p']}@{mysql_db.conn_id}", catalog=catalog)  # the parent's own log too
    for part in "cgkn":
        api.repl_create_snapshot_log(f"{names[part]}@{mysql_db.conn_id}", catalog=catalog)
    copies = {part: f"{unique_name}_{part}_copy@{sqlite_db.conn_id}" for part in "cgk"}
    for part, copy in copies.items():
        api.repl_create_inc_snapshot(None, f"{names[part]}@{mysql_db.conn_id}", None, copy, **kw)

    p = mysql_db.q(names["p"])
    mysql_db.run(f"DELETE FROM {p} WHERE id = 1", f"UPDATE {p} SET id = 100 WHERE id = 2")
    mysql_db.run(f"UPDATE {p} SET v = 7 WHERE id = 3")  # no referenced column changes: nothing cascades
    assert mysql_db.rows(f"SELECT COUNT(*) FROM {mysql_db.q(names['c'])}") == [(90,)]
    for part, copy in copies.items():
        api.repl_refresh_inc_snapshot(copy, **kw)
        order = "pid, n" if part == "k" else "id"
        source = mysql_db.rows(f"SELECT * FROM {mysql_db.q(names[part])} ORDER BY {order}")
        copied = sqlite_db.rows(f"SELECT * FROM {sqlite_db.q(unique_name + '_' + part + '_copy')} ORDER BY {order}")
        assert copied == source, f"the copy of {names[part]} differs from its source"
    parent_log = mysql_db.rows(f"SELECT RLOG_id, DMLTYPE FROM {mysql_db.q('RLOG_' + names['p'])} ORDER BY 1")
    assert parent_log == [(1, "D"), (2, "D"), (3, "U"), (100, "I")], "the parent's own log is unchanged"
    n_log = {r[0]: r[2] for r in mysql_db.rows(f"SELECT * FROM {mysql_db.q('RLOG_' + names['n'])}")}
    assert n_log == {i: "U" for i in range(1, 21) if i % 10 + 1 in (1, 2)}, "SET NULL logs the children as updated"
    # the key change of k was logged as the delete of the old key and the insert of the new one
    k_log = dict(((r[0], r[1]), r[3]) for r in mysql_db.rows(f"SELECT * FROM {mysql_db.q('RLOG_' + names['k'])}"))
    assert k_log[(2, 1)] == "D" and k_log[(100, 1)] == "I"


def test_cascade_triggers_are_dropped_with_their_log_and_only_then(mysql_db, catalog, unique_name) -> None:
    names = _mysql_family(mysql_db, unique_name)
    conn = mysql_db.conn_id
    created = api.repl_create_snapshot_log(f"{names['g']}@{conn}", catalog=catalog)
    assert "foreign-key cascades" in str(created)
    ours = set(mysql_db.triggers_on(names["p"])) | set(mysql_db.triggers_on(names["c"]))
    assert len(ours) == 2, "the grandchild's log has a delete trigger on its parent and on its grandparent"
    # another log on the parent, created and dropped, leaves them alone
    api.repl_create_snapshot_log(f"{names['p']}@{conn}", catalog=catalog)
    api.repl_drop_snapshot_log(f"{names['p']}@{conn}", catalog=catalog)
    assert set(mysql_db.triggers_on(names["p"])) | set(mysql_db.triggers_on(names["c"])) == ours
    api.repl_drop_snapshot_log(f"{names['g']}@{conn}", catalog=catalog)
    assert mysql_db.triggers_on(names["p"]) == [] and mysql_db.triggers_on(names["c"]) == []


def test_cascades_no_trigger_can_follow_are_refused_in_one_line(mysql_db, catalog, unique_name) -> None:
    tree, other_db = f"{unique_name}_tree", f"{unique_name}_other"
    mysql_db.run(
        f"CREATE TABLE {tree} (id int PRIMARY KEY, up int, CONSTRAINT {tree}_up FOREIGN KEY (up) "
        f"REFERENCES {tree} (id) ON DELETE CASCADE)"
    )
    with pytest.raises(UnloggableCascade) as refused:
        api.repl_create_snapshot_log(f"{tree}@{mysql_db.conn_id}", catalog=catalog)
    assert f"{tree}_up" in refused.value.message and "cycle" in refused.value.message
    assert "\n" not in str(refused.value) and refused.value.hint
    assert not mysql_db.table_exists(f"RLOG_{tree}") and mysql_db.triggers_on(tree) == []

    child = f"{unique_name}_x"
    with mysql_admin_connect() as admin:
        admin.cursor().execute(f"CREATE DATABASE `{other_db}`")
    try:
        mysql_db.run(
            f"CREATE TABLE `{other_db}`.parent (id int PRIMARY KEY)",
            f"CREATE TABLE {child} (id int PRIMARY KEY, pid int, CONSTRAINT {child}_fk FOREIGN KEY (pid) "
            f"REFERENCES `{other_db}`.parent (id) ON DELETE CASCADE)",
        )
        with pytest.raises(UnloggableCascade, match=f"{child}_fk.*another database"):
            api.repl_create_snapshot_log(f"{child}@{mysql_db.conn_id}", catalog=catalog)
        assert catalog.log(f"{mysql_db.name}.{child}@{mysql_db.conn_id}") is None
    finally:
        mysql_db.run(f"DROP TABLE {child}", f"DROP DATABASE `{other_db}`")


def test_a_published_mariadb_table_that_cascades_change_is_refused(mysql_db, catalog, unique_name) -> None:
    names = _mysql_family(mysql_db, unique_name)
    server = catalog.server_of_conn(mysql_db.conn_id)
    with pytest.raises(UnloggableCascade, match=f"{unique_name}_c_fk") as refused:
        api.repl_create_snapshot_pub(f"{names['c']}@{mysql_db.conn_id}", 2, catalog=catalog)
    assert "\n" not in str(refused.value)
    assert catalog.publication(f"{mysql_db.name}.{names['c']}@{mysql_db.conn_id}") is None
    assert mysql_db.triggers_on(names["c"]) == []
    assert catalog.server_of_conn(mysql_db.conn_id) == server, "a refused publication registers no server"


def test_a_cascade_added_after_the_log_stops_the_refresh(
    mysql_db, sqlite_db, catalog, settings, refresher, unique_name
) -> None:
    parent, child = f"{unique_name}_p", f"{unique_name}_c"
    mysql_db.run(
        f"CREATE TABLE {parent} (id int PRIMARY KEY)",
        f"CREATE TABLE {child} (id int PRIMARY KEY, pid int)",
        f"INSERT INTO {parent} VALUES (1), (2)",
        f"INSERT INTO {child} VALUES (1, 1), (2, 2)",
    )
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    api.repl_create_snapshot_log(f"{child}@{mysql_db.conn_id}", catalog=catalog)
    copy = f"{unique_name}_copy@{sqlite_db.conn_id}"
    api.repl_create_inc_snapshot(None, f"{child}@{mysql_db.conn_id}", None, copy, **kw)
    mysql_db.run(
        f"ALTER TABLE {child} ADD CONSTRAINT {child}_late FOREIGN KEY (pid) REFERENCES {parent} (id) ON DELETE CASCADE",
        f"DELETE FROM {parent} WHERE id = 1",
    )
    with pytest.raises(RefreshFailed, match=f"{child}_late") as failed:
        api.repl_refresh_inc_snapshot(copy, **kw)
    assert "\n" not in str(failed.value) and "DROP SNAPSHOT LOG" in str(failed.value.hint)


def test_postgres_cascades_fire_the_childs_log(pg_db, sqlite_db, catalog, settings, refresher, unique_name) -> None:
    parent, child = f"{unique_name}_p", f"{unique_name}_c"
    pg_db.run(
        f"CREATE TABLE {parent} (id int PRIMARY KEY)",
        f"CREATE TABLE {child} (id int PRIMARY KEY, pid int REFERENCES {parent} (id) "
        "ON DELETE CASCADE ON UPDATE CASCADE)",
        f"INSERT INTO {parent} SELECT generate_series(1, 10)",
        f"INSERT INTO {child} SELECT i, i % 10 + 1 FROM generate_series(1, 100) i",
    )
    kw = {"catalog": catalog, "settings": settings, "refresher": refresher}
    created = api.repl_create_snapshot_log(f"{child}@{pg_db.conn_id}", catalog=catalog)
    assert created.record.snl_cascades is None, "no extra triggers where cascades fire the child's"
    copy = f"{unique_name}_copy@{sqlite_db.conn_id}"
    api.repl_create_inc_snapshot(None, f"{child}@{pg_db.conn_id}", None, copy, **kw)
    pg_db.run(f"DELETE FROM {parent} WHERE id = 1", f"UPDATE {parent} SET id = 100 WHERE id = 2")
    api.repl_refresh_inc_snapshot(copy, **kw)
    source = pg_db.rows(f"SELECT id, pid FROM {child} ORDER BY id")
    assert len(source) == 90
    assert sqlite_db.rows(f"SELECT id, pid FROM {unique_name}_copy ORDER BY id") == source
