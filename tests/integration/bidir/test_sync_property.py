"""Property: random interleavings of inserts, updates (key changes included) and deletes on a
PostgreSQL publisher and a MariaDB and a SQLite subscriber, with syncs at random points.

After every sync (none runs concurrently with writes) every replica holds exactly the publisher's
rows and ROWGUIDs, those rows are what a reference model of SEMANTICS section 6 predicts, and the
conflict ledger holds exactly the conflicts the model meets, with the model's decisions. Run with
the default resolvers and with generated ``min``/``max`` resolvers.

``SNAPREPL_BIDIR_EXAMPLES`` sets the examples per configuration (15 by default; more for a soak run).
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.support.bidir import Model, ModelConflict, Servers, by_price, item_rows, placeholder
from tests.support.databases import RealDatabase

KEYS = st.integers(min_value=1, max_value=6)
PRICES = st.sampled_from([Decimal("1.00"), Decimal("2.00"), Decimal("3.00")])
NAMES = st.sampled_from(["a", "b", "ü", None])
SERVER = st.sampled_from(["pub", "my", "lite"])

write = st.tuples(
    st.just("write"), SERVER, st.sampled_from(["insert", "update", "delete", "rekey"]), KEYS, NAMES, PRICES
)
sync = st.tuples(st.just("sync"))
SCRIPTS = st.lists(st.one_of(write, write, write, sync), min_size=1, max_size=25)

CONFIGS = {
    "default": ([], {}),
    "min_max": (
        [("I", 1, "min", "price"), ("U", 1, "max", "price")],
        {"I": [by_price(smaller_wins=True)], "U": [by_price(smaller_wins=False)]},
    ),
}


def run_statements(text: str, catalog: Any, settings_: Any, syncer: Any) -> list[Any]:
    from snaprepl.api.script import run_script

    return run_script(text, catalog=catalog, settings=settings_, syncer=syncer)


class Scenario:
    """One example: a fresh published table, the three replicas, and the model."""

    def __init__(self, servers: Servers, catalog: Any, settings_: Any, syncer: Any, config: str) -> None:
        self.servers, self.catalog, self.settings, self.syncer = servers, catalog, settings_, syncer
        self.table = f"prop_{uuid.uuid4().hex[:10]}"
        self.item = f"public.{self.table}@bd_pub"
        self.db = {"pub": servers.pub, "my": servers.my, "lite": servers.lite}
        statements = [f"REPL_CREATE_SNAPSHOT_PUB('{self.item}', 2)"]
        resolvers, model_resolvers = CONFIGS[config]
        for kind, order, klass, column in resolvers:
            statements.append(f"REPL_ADD_SNAPSHOT_CR('{self.item}', '', '{kind}', {order}, '{klass}', '{column}')")
        for sub in servers.subscribers:
            statements.append(f"REPL_CREATE_SNAPSHOT_SUB('{servers.name(sub)}', '{self.item}', 2)")
            statements.append(f"REPL_INIT_SNAPSHOT('{servers.name(sub)}', '{self.item}', 2, 2)")
        servers.pub.run(
            f"CREATE TABLE {self.table} (item_id integer PRIMARY KEY, name varchar(20), price numeric(10,2))",
            f"INSERT INTO {self.table} VALUES (1, 'a', 1.00), (2, 'b', 2.00), (3, NULL, 3.00)",
        )
        run_statements("; ".join(statements), catalog, settings_, syncer)
        self.model = Model(servers.name(servers.pub), [servers.name(s) for s in servers.subscribers], model_resolvers)
        self.model.load(item_rows(servers.pub, self.table))

    def write(self, where: str, op: str, key: int, name: str | None, price: Decimal) -> None:
        db: RealDatabase = self.db[where]
        server = self.servers.name(db)
        mark = placeholder(db)
        rows = self.model.rows[server]
        if op in {"update", "delete", "rekey"} and key not in rows:
            op = "insert"  # keep every step meaningful on this replica's current state
        if op == "insert" and key in rows:
            op = "update"
        if op == "rekey":
            free = [k for k in range(1, 9) if k not in rows]
            new_key = free[(key + len(rows)) % len(free)]
            db.run(f"UPDATE {db.q(self.table)} SET item_id = {mark} WHERE item_id = {mark}", params=[new_key, key])
            self.model.local(server, "D", key, None)
            self.model.local(server, "I", new_key, self.read(db, new_key))
        elif op == "insert":
            db.run(
                f"INSERT INTO {db.q(self.table)} (item_id, name, price) VALUES ({mark}, {mark}, {mark})",
                params=[key, name, str(price)],
            )
            self.model.local(server, "I", key, self.read(db, key))
        elif op == "update":
            db.run(
                f"UPDATE {db.q(self.table)} SET name = {mark}, price = {mark} WHERE item_id = {mark}",
                params=[name, str(price), key],
            )
            self.model.local(server, "U", key, self.read(db, key))
        else:
            db.run(f"DELETE FROM {db.q(self.table)} WHERE item_id = {mark}", params=[key])
            self.model.local(server, "D", key, None)

    def read(self, db: RealDatabase, key: int) -> Any:
        row = item_rows(db, self.table).get(key)
        assert row is not None and row[2], f"{db.dialect}: the trigger did not version row {key}"
        return row

    def sync(self) -> None:
        run_statements(f"REPL_UPDATE_SNAPSHOT('{self.item}', 2)", self.catalog, self.settings, self.syncer)
        self.model.sync()
        expected = self.model.rows[self.model.publisher]
        for where, db in self.db.items():
            assert item_rows(db, self.table) == expected, f"{where} differs from the model after a sync"
        met = Counter(
            ModelConflict(c["CF_TYPE"], json.loads(c["CF_KEY"])[0], c["CF_ORIGIN"], c["CF_DECISION"])
            for c in self.catalog.conflicts(self.item)
        )
        assert met == Counter(self.model.conflicts), "the conflict ledger differs from the model's conflicts"

    def drop(self) -> None:
        run_statements(f"REPL_DROP_SNAPSHOT_PUB('{self.item}', 2)", self.catalog, self.settings, self.syncer)
        self.servers.pub.run(f"DROP TABLE {self.table}")


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_replicas_converge_and_conflicts_follow_the_rules(
    config: str, servers: Servers, catalog: Any, settings: Any, syncer: Any
) -> None:
    settings_ = settings

    @hypothesis_settings(
        max_examples=int(os.environ.get("SNAPREPL_BIDIR_EXAMPLES", "15")),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(script=SCRIPTS)
    def check(script: list[tuple[Any, ...]]) -> None:
        scenario = Scenario(servers, catalog, settings_, syncer, config)
        try:
            for step in script:
                if step[0] == "sync":
                    scenario.sync()
                else:
                    scenario.write(*step[1:])
            scenario.sync()
        finally:
            scenario.drop()

    check()
