"""The Replication page (snaprepl's Airflow plugin) under a real api-server, with users who log in.

One deployment serves the module: the simple auth manager's users ``admin`` (admin), ``viewer``
(viewer: reads every DAG, triggers none) and ``carol`` (user: triggers DAGs, but one snapshot's DAG
is refused to her by tests/support/dag_acl_auth_manager.py). A real incremental snapshot and a real
publication with a loaded subscriber are created with the CLI while the api-server boots; a second
snapshot (its name has a '/' and a '%'), a conflict and a few runs of history are written with the
catalog's own methods. One headless Chromium, with the admin logged in through Airflow's form, serves
the browser tests: pages of other origins try to press the buttons, then the page's own one works.

Set SNAPREPL_UPDATE_SCREENSHOT=1 to also write docs/replication-page.png (the docs' screenshot of the page).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from snaprepl.catalog.location import connection_from_url
from snaprepl.catalog.records import SnapshotRecord, utcnow
from snaprepl.catalog.store import Catalog
from snaprepl.common.dag_names import (
    group_dag_id,
    publication_dag_id,
    publication_verify_dag_id,
    snapshot_dag_id,
    verify_dag_id,
)
from tests.support.airflow_cluster import REPO, AirflowCluster
from tests.support.airflow_groups import recorded_group
from tests.support.browser import chromium, press
from tests.support.databases import PG_ADMIN, RealDatabase
from tests.support.other_origin import SENT_PER_ORIGIN, forgery_pages, serve
from tests.support.page_records import record_conflict, record_history

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

SRC, DST, SUB = "page_src", "page_dst", "page_sub"
ROLES = {"admin": "admin", "viewer": "viewer", "carol": "user"}
PAGE = "/snaprepl"


@dataclass
class Site:
    cluster: AirflowCluster
    catalog: Catalog
    passwords: dict[str, str]
    snapshot: str  # the real incremental snapshot: everyone reads it
    hidden: str  # carol may not read its DAG
    item: str  # the publication
    conflict_id: int
    group: str  # a snapshot group (catalog records: its DAG is real, its members' queries are not)
    members: list[str]

    def token(self, user: str) -> str:
        return self.cluster.login(user, self.passwords[user])

    def call(self, method: str, path: str, token: str | None = None) -> tuple[int, object]:
        """Status and decoded body of a request to the api-server (any status)."""
        request = urllib.request.Request(
            self.cluster.base_url + path, method=method, data=b"" if method == "POST" else None
        )
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, _decode(response.read())
        except urllib.error.HTTPError as err:
            return err.code, _decode(err.read())

    def overview(self, user: str) -> dict:
        status, body = self.call("GET", f"{PAGE}/api/overview", self.token(user))
        assert status == 200, body
        assert isinstance(body, dict)
        return body

    def manual_runs(self, dag_id: str) -> list[dict]:
        return self.cluster.dag_runs(dag_id, "manual")


def _decode(payload: bytes) -> object:
    try:
        return json.loads(payload)
    except ValueError:
        return payload.decode(errors="replace")


def _create_copies(cluster: AirflowCluster, table: str, published: str) -> None:
    statements = (
        f"CREATE SNAPSHOT LOG FOR {table}@{SRC}; CREATE SNAPSHOT {table}@{DST} FROM {table}@{SRC}; "
        f"REPL_CREATE_SNAPSHOT_PUB('{published}@{SRC}', 2); "
        f"REPL_CREATE_SNAPSHOT_SUB(REPL_SNP_SERVER('{SUB}'), '{published}@{SRC}', 2); "
        f"REPL_INIT_SNAPSHOT(REPL_SERVER_NAME('{SUB}'), '{published}@{SRC}', 2)"
    )
    done = cluster.run([sys.executable, "-m", "snaprepl", "sql", statements])
    assert done.returncode == 0, f"snaprepl sql failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory, pg_db: RealDatabase, sqlite_db: RealDatabase, airflow_metadata_url: str
) -> Iterator[Site]:
    table, published = f"pg_{uuid.uuid4().hex[:8]}", f"pp_{uuid.uuid4().hex[:8]}"
    pg_db.run(
        f"CREATE TABLE {table} (id int PRIMARY KEY, v varchar(40))",
        f"INSERT INTO {table} VALUES (1, 'one'), (2, 'two')",
        f"CREATE TABLE {published} (id int PRIMARY KEY, v varchar(40))",
        f"INSERT INTO {published} VALUES (1, 'a')",
    )
    hidden = f"main.hidden/{uuid.uuid4().hex[:6]}%@{DST}"  # a quoted name: the route takes '/' and '%'
    home = tmp_path_factory.mktemp("page-airflow")
    passwords = {user: secrets.token_urlsafe(12) for user in ROLES}
    (home / "passwords.json").write_text(json.dumps(passwords))
    cluster = AirflowCluster(
        home,
        env={
            f"AIRFLOW_CONN_{SRC.upper()}": (
                f"postgresql://{PG_ADMIN['user']}@{PG_ADMIN['host']}:{PG_ADMIN['port']}/{pg_db.name}"
            ),
            f"AIRFLOW_CONN_{DST.upper()}": f"sqlite:///{sqlite_db.name}",
            f"AIRFLOW_CONN_{SUB.upper()}": f"sqlite:///{tmp_path_factory.mktemp('page-sub') / 'sub.db'}",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": ",".join(f"{u}:{r}" for u, r in ROLES.items()),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
            "AIRFLOW__CORE__AUTH_MANAGER": "tests.support.dag_acl_auth_manager.DagAclAuthManager",
            "SNAPREPL_TEST_HIDDEN_DAGS": json.dumps({"carol": [snapshot_dag_id(hidden)]}),
            "PYTHONPATH": os.pathsep.join([str(REPO / "include"), str(REPO), os.environ.get("PYTHONPATH", "")]),
        },
        database_url=airflow_metadata_url,
    )
    catalog = Catalog.from_connection(connection_from_url(cluster.database_url, "snaprepl_catalog"))
    try:
        cluster.start(while_booting=lambda: _create_copies(cluster, table, published))
        cluster.token = cluster.login("admin", passwords["admin"])
        (record,) = catalog.snapshots_named(DST, table)
        catalog.add_snapshot(
            SnapshotRecord(
                sn_name=hidden, sn_query="SELECT 1 AS x", sn_source_conn=SRC, sn_dest_conn=DST,
                sn_dest_schema="main", sn_dest_table=hidden[5:].split("@", maxsplit=1)[0], sn_created_at=utcnow(),
            ),
            AssertionError("exists"),
        )  # fmt: skip
        item = f"public.{published}@{SRC}"
        [subscription] = catalog.subscriptions(item)
        conflict_id = record_conflict(catalog, item, subscription.ss_server)
        record_history(catalog, record.sn_name)
        record_history(catalog, hidden, shift=1)
        catalog.update_snapshot(record.sn_name, sn_verify_schedule="@weekly")  # "Verify" needs a verify DAG
        # What a refresh records when it followed its source's columns (snaprepl.refresh.columns).
        catalog.update_snapshot(record.sn_name, sn_column_changes=json.dumps({"kept": ["b"], "added": ["d", "e"]}))
        catalog.update_publication(item, sp_verify_schedule="@weekly")
        group, members = recorded_group(catalog, SRC, DST)
        dag_ids = [snapshot_dag_id(record.sn_name), snapshot_dag_id(hidden), publication_dag_id(item)]
        dag_ids.append(group_dag_id(group))
        for dag_id in [*dag_ids, verify_dag_id(record.sn_name), publication_verify_dag_id(item)]:
            cluster.wait_for_dag(dag_id)
        yield Site(cluster, catalog, passwords, record.sn_name, hidden, item, conflict_id, group, members)
    finally:
        catalog.dispose()
        cluster.stop()


def test_every_endpoint_wants_a_logged_in_airflow_user(site: Site) -> None:
    name = urllib.parse.quote(site.snapshot, safe="")
    endpoints = [
        ("GET", f"{PAGE}/"),
        ("GET", f"{PAGE}/static/replication.js"),
        ("GET", f"{PAGE}/api/overview"),
        ("GET", f"{PAGE}/api/conflicts"),
        ("GET", f"{PAGE}/api/history"),
        ("POST", f"{PAGE}/api/snapshots/{name}/refresh"),
        ("POST", f"{PAGE}/api/snapshots/{name}/verify"),
        ("POST", f"{PAGE}/api/publications/{urllib.parse.quote(site.item, safe='')}/verify"),
    ]
    for method, path in endpoints:
        assert site.call(method, path)[0] in {401, 403}, f"{method} {path} answered without a login"
        assert site.call(method, path, token="not.a.jwt")[0] in {401, 403}, f"{method} {path} took a bad token"
    assert site.manual_runs(snapshot_dag_id(site.snapshot)) == [], "an unauthenticated POST triggered a run"
    assert site.call("GET", f"{PAGE}/static/replication.js", site.token("viewer"))[0] == 200


def test_a_user_sees_only_the_copies_whose_dags_they_may_read(site: Site) -> None:
    everything = {s["name"] for s in site.overview("admin")["snapshots"]}
    assert everything == {s.sn_name for s in site.catalog.snapshots()} == {site.snapshot, site.hidden, *site.members}
    carol = site.overview("carol")
    assert {s["name"] for s in carol["snapshots"]} == {site.snapshot, *site.members}
    [group] = carol["groups"]  # its DAG is one she may read
    assert group["name"] == site.group and sorted(group["members"]) == sorted(site.members)
    # Airflow's own API hides the DAG from her too: the page asks the same auth manager.
    status, _ = site.call("GET", f"/api/v2/dags/{snapshot_dag_id(site.hidden)}", site.token("carol"))
    assert status == 403
    hidden = urllib.parse.quote(site.hidden, safe="")
    status, _ = site.call("POST", f"{PAGE}/api/snapshots/{hidden}/refresh", site.token("carol"))
    assert status == 404
    assert site.manual_runs(snapshot_dag_id(site.hidden)) == []
    for user, sees_hidden in (("carol", False), ("admin", True)):
        status, history = site.call("GET", f"{PAGE}/api/history", site.token(user))
        assert status == 200 and isinstance(history, dict)
        assert site.snapshot in history["copies"] and (site.hidden in history["copies"]) is sees_hidden, user
        assert set(site.members) <= set(history["copies"]), "a member's runs are its group DAG's"
    [snapshot] = [s for s in carol["snapshots"] if s["name"] == site.snapshot]
    assert snapshot["can_trigger"] is True and snapshot["lag_seconds"] == 5.0
    # The logs of what she sees, with who reads them and what holds their purge (issue 22, item 5).
    logs = {log["source"]: log for log in carol["snapshot_logs"]}
    assert logs[site.item]["copies"] == [site.item] and "purge_held_by" in logs[site.item], logs


def test_a_viewer_cannot_trigger(site: Site) -> None:
    dag_id = snapshot_dag_id(site.snapshot)
    [snapshot] = [s for s in site.overview("viewer")["snapshots"] if s["name"] == site.snapshot]
    assert snapshot["can_trigger"] is False
    for snapshot_name, complete in ((site.snapshot, "false"), (site.snapshot, "true"), (site.hidden, "true")):
        name = urllib.parse.quote(snapshot_name, safe="")
        status, body = site.call(
            "POST", f"{PAGE}/api/snapshots/{name}/refresh?complete={complete}", site.token("viewer")
        )
        assert status == 403 and "may not trigger" in str(body), body  # the route found the snapshot
    assert site.manual_runs(dag_id) == [] and site.manual_runs(snapshot_dag_id(site.hidden)) == []
    name = urllib.parse.quote(site.snapshot, safe="")
    status, body = site.call("POST", f"{PAGE}/api/snapshots/{name}/verify", site.token("viewer"))
    assert status == 403 and "may not trigger" in str(body), body
    assert snapshot["can_verify"] is False and site.manual_runs(verify_dag_id(site.snapshot)) == []
    # A group's member is refreshed by its group's DAG: the route finds that one (a viewer may not run it).
    status, body = site.call("POST", f"{PAGE}/api/snapshots/{site.members[0]}/refresh", site.token("viewer"))
    assert status == 403 and group_dag_id(site.group) in str(body), body


def test_the_ledger_pages_and_filters(site: Site) -> None:
    token = site.token("carol")

    def page(query: str) -> dict:
        status, body = site.call("GET", f"{PAGE}/api/conflicts?{query}", token)
        assert status == 200 and isinstance(body, dict), body
        return body

    newest_first = [c["CF_ID"] for c in site.catalog.conflicts(site.item)][::-1]
    assert [c["id"] for c in page("")["conflicts"]] == newest_first and page("")["total"] == 2
    first, second = page("limit=1"), page("limit=1&offset=1")
    assert [c["id"] for c in first["conflicts"] + second["conflicts"]] == newest_first
    assert first["total"] == second["total"] == 2 and page("limit=1&offset=2")["conflicts"] == []
    [update] = page("type=U")["conflicts"]
    assert update["id"] == site.conflict_id and update["op"] == "U" and update["decision"] == "publisher wins"
    assert update["incoming"] == {"id": 1, "v": "from-sub"} and update["current"] == {"id": 1, "v": "from-pub"}
    assert [c["type"] for c in page("decision=4")["conflicts"]] == ["D"]
    assert page("type=U&decision=4")["total"] == 0 and page("item=nope")["total"] == 0
    assert site.call("GET", f"{PAGE}/api/conflicts?type=X", token)[0] == 422


@pytest.fixture(scope="module")
def admin_browser(site: Site) -> Iterator[Any]:
    """Headless Chromium with the admin logged in through Airflow's own form (its session cookie)."""
    with chromium() as driver:
        wait = WebDriverWait(driver, 90)
        driver.get(f"{site.cluster.base_url}/auth/login?next=/plugin/replication")
        wait.until(ec.presence_of_element_located((By.NAME, "username"))).send_keys("admin")
        driver.find_element(By.NAME, "password").send_keys(site.passwords["admin"])
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(lambda d: "/auth/login" not in d.current_url)
        yield driver


def test_pages_of_other_origins_cannot_press_the_buttons(site: Site, admin_browser: Any) -> None:
    """Another web app on the host (same site: the Lax cookie goes along) and another site (localhost
    against 127.0.0.1) post forms and fetch calls with the admin's cookies: each is refused, once."""
    driver, dag_id = admin_browser, snapshot_dag_id(site.snapshot)
    runs, refusals = site.manual_runs(dag_id), _refusals(site)
    target = f"{site.cluster.base_url}{PAGE}/api/snapshots/{urllib.parse.quote(site.snapshot, safe='')}/refresh"
    answers = []
    with serve(forgery_pages(f"{target}?complete=true")) as port:
        for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            driver.get(f"{origin}/fetch.html")
            WebDriverWait(driver, 30).until(lambda d: d.title.startswith("done"))
            for form in ("form.html", "text-form.html"):
                driver.get(f"{origin}/{form}")  # it submits itself: the browser shows the api-server's answer
                WebDriverWait(driver, 30).until(
                    lambda d: d.current_url.startswith(target) and d.find_element(By.TAG_NAME, "body").text
                )
                answers.append(driver.find_element(By.TAG_NAME, "body").text)
    assert site.manual_runs(dag_id) == runs, "a page of another origin triggered a run"
    assert all("refused" in answer for answer in answers), answers
    assert _refusals(site) - refusals == 2 * SENT_PER_ORIGIN, "each refused request logs one line"


def _refusals(site: Site) -> int:
    log = site.cluster.process_logs / "api-server.log"
    return log.read_text(errors="replace").count("(cross-site request protection)")


def test_the_page_in_a_real_browser_matches_the_catalog_and_refreshes(
    site: Site, admin_browser: Any, tmp_path: Path
) -> None:
    dag_id, driver = snapshot_dag_id(site.snapshot), admin_browser
    wait = WebDriverWait(driver, 90)
    driver.get(f"{site.cluster.base_url}/plugin/replication")
    # Airflow's UI, with the Replication entry in its navigation, embeds the page.
    wait.until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, "iframe")))
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-loaded") == "true")

    rows = driver.find_elements(By.CSS_SELECTOR, "#snapshots tbody tr[data-snapshot]")
    assert sorted(r.get_attribute("data-snapshot") for r in rows) == sorted(s.sn_name for s in site.catalog.snapshots())
    [ledger] = [c for c in site.catalog.conflicts(site.item) if c["CF_ID"] == site.conflict_id]
    row = driver.find_element(By.CSS_SELECTOR, f"#conflicts tr[data-conflict-id='{site.conflict_id}']")
    incoming = row.find_element(By.CSS_SELECTOR, "[data-field=incoming]").text
    current = row.find_element(By.CSS_SELECTOR, "[data-field=current]").text
    assert 'v: "from-sub"' in incoming and json.loads(ledger["CF_INCOMING"])["row"]["v"] == "from-sub"
    assert 'v: "from-pub"' in current and json.loads(ledger["CF_CURRENT"])["v"] == "from-pub"
    assert row.find_element(By.CSS_SELECTOR, "[data-field=decision]").text == "publisher wins"
    assert len(driver.find_elements(By.CSS_SELECTOR, ".charts .uplot")) == 3, "a chart is missing"

    snapshot_row = driver.find_element(By.CSS_SELECTOR, f"#snapshots tr[data-snapshot='{site.snapshot}']")
    assert snapshot_row.find_element(By.CSS_SELECTOR, "[data-field=verify]").text.startswith("3 differences")
    kept = snapshot_row.find_element(By.CSS_SELECTOR, "[data-field=columns-kept]").text
    added = snapshot_row.find_element(By.CSS_SELECTOR, "[data-field=columns-added]").text
    assert kept == "columns b dropped at the source, kept in the copy with their values", kept
    assert added == "columns d, e added at the source and to the copy", added
    refresh, logs = (
        snapshot_row.find_element(By.CSS_SELECTOR, "button[data-action=refresh-now]"),
        site.cluster.diagnostics,
    )
    assert press(driver, refresh, "Triggered", logs).startswith(f"Triggered {dag_id}:")
    verify = snapshot_row.find_element(By.CSS_SELECTOR, "[data-field=verify] button[data-action=verify]")
    assert press(driver, verify, "Triggered", logs).startswith(f"Triggered {verify_dag_id(site.snapshot)}:")
    group_row = driver.find_element(By.CSS_SELECTOR, f"#groups tr[data-group='{site.group}']")
    shown = [m.get_attribute("data-member") for m in group_row.find_elements(By.CSS_SELECTOR, "[data-member]")]
    assert sorted(shown) == sorted(site.members), shown
    assert group_row.find_element(By.CSS_SELECTOR, "[data-field=lag]").text == "20.0 min", "its members' largest"
    assert group_row.find_element(By.CSS_SELECTOR, "[data-field=point]").text.startswith(f"{SRC}: ")
    log_row = driver.find_element(By.CSS_SELECTOR, f"#logs tr[data-log='{site.item}']")
    assert log_row.find_element(By.CSS_SELECTOR, "[data-field=rows]").text.isdigit(), "its rows, counted"
    row = driver.find_element(By.CSS_SELECTOR, f"#subscriptions tr[data-publication='{site.item}']")
    assert row.find_element(By.CSS_SELECTOR, "[data-field=verify] button[data-action=verify]").is_enabled()
    driver.switch_to.default_content()
    _screenshot(driver, tmp_path)

    runs = site.manual_runs(dag_id)
    assert len(runs) == 1, runs
    assert runs[0]["conf"]["mode"] == "incremental"
    assert runs[0].get("triggering_user_name") in {None, "admin"}
    assert len(site.manual_runs(verify_dag_id(site.snapshot))) == 1, "Verify started the snapshot's verify DAG"


def _screenshot(driver: object, tmp_path: Path) -> None:
    shot = tmp_path / "replication-page.png"
    assert driver.save_screenshot(str(shot)), "no screenshot"  # type: ignore[attr-defined]
    if os.environ.get("SNAPREPL_UPDATE_SCREENSHOT"):
        shutil.copyfile(shot, REPO / "docs" / "replication-page.png")
