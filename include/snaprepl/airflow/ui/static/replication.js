// snaprepl's Replication page: reads /snaprepl/api/* (as the logged-in user) and draws it.
// Every value goes in with textContent: nothing from the catalog is ever parsed as HTML.
"use strict";

const PAGE = 20;
// What the app's writing routes require (airflow/ui/csrf.py): a JSON body and this header, which no
// form, <img> or no-CORS fetch of another site can send; the browser adds our own Origin.
const WRITE_HEADERS = { "Content-Type": "application/json", "X-Snaprepl-Request": "1" };
const state = { offset: 0, total: 0 };

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function cell(row, text, cls) {
  const td = el("td", text === null || text === undefined || text === "" ? "—" : text, cls);
  if (text === null || text === undefined || text === "") td.classList.add("none");
  row.appendChild(td);
  return td;
}

async function getJson(path, options) {
  const response = await fetch(path, { credentials: "same-origin", ...options });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.detail || `${response.status} ${response.statusText}`);
  return body;
}

function when(iso) {
  if (!iso) return null;
  const date = new Date(iso.endsWith("Z") || iso.includes("+") ? iso : iso + "Z");
  return isNaN(date) ? iso : date.toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return null;
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

function say(text, isError) {
  const box = document.getElementById("message");
  box.textContent = text;
  box.className = isError ? "error" : "";
  box.hidden = false;
}

function snapshotState(s) {
  if (s.needs_complete_refresh) return ["complete refresh required", "state-bad"];
  if (s.alerts && s.alerts.length) return [s.alerts.join("; "), "state-bad"];
  if (s.stale) return ["stale", "state-bad"];
  if (s.running) return [`running (${s.running.run_id})`, "state-warn"];
  if (s.died) return ["died", "state-bad"];
  const last = s.last_refresh || {};
  if (last.status === "failed") return [`failed: ${(last.error || "").slice(0, 80)}`, "state-bad"];
  if (last.status === "succeeded") return [`${last.kind} ok`, "state-ok"];
  return [last.status || "never refreshed", ""];
}

function verifyButton(path, copy) {
  // "Verify": a run of the copy's verify DAG (it has one when it has a verify schedule).
  const button = el("button", "Verify");
  button.type = "button";
  button.dataset.action = "verify";
  if (!copy.verify_dag_id || !copy.can_verify) {
    button.disabled = true;
    button.title = copy.verify_dag_id ? `You may not trigger ${copy.verify_dag_id}`
      : "No verify DAG: give the copy a verify schedule (repl_set_..._verify_schedule)";
  }
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const run = await getJson(path, { method: "POST", headers: WRITE_HEADERS, body: "{}" });
      say(`Triggered ${run.dag_id}: run ${run.dag_run_id} (${run.state})`);
    } catch (err) {
      say(`Could not trigger ${copy.verify_dag_id}: ${err.message}`, true);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

function lastVerify(row, check, button) {
  // The copy's newest verify or repair (snaprepl status's last_verify): equal, or how many differences.
  let text = null, cls = "";
  if (check && check.outcome === "failed") [text, cls] = [`${check.kind} failed ${when(check.at) || ""}`, "state-bad"];
  else if (check) {
    const repaired = check.kind === "repair" && check.outcome === "ok" && check.differences ? ", repaired" : "";
    text = `${check.equal ? "equal" : `${check.differences} differences`}${repaired} ${when(check.at) || ""}`;
    cls = check.equal ? "state-ok" : "state-bad";
  }
  const td = cell(row, text, cls);
  td.dataset.field = "verify";
  if (button) td.appendChild(el("div")).appendChild(button);
}

function dagRun(run) {
  if (!run) return null;
  return `${run.state} · ${when(run.started) || ""}`;
}

async function trigger(snapshot, complete, button) {
  button.disabled = true;
  try {
    const run = await getJson(`api/snapshots/${encodeURIComponent(snapshot.name)}/refresh?complete=${complete}`,
                              { method: "POST", headers: WRITE_HEADERS, body: "{}" });
    say(`Triggered ${run.dag_id}: run ${run.dag_run_id} (${run.state})`);
  } catch (err) {
    say(`Could not trigger ${snapshot.dag_id}: ${err.message}`, true);
  } finally {
    button.disabled = false;
  }
}

function actionButton(snapshot, label, complete) {
  const button = el("button", label, complete ? "" : "primary");
  button.type = "button";
  button.dataset.action = complete ? "complete-refresh" : "refresh-now";
  if (!snapshot.can_trigger) {
    button.disabled = true;
    button.title = `You may not trigger ${snapshot.dag_id}`;
  }
  button.addEventListener("click", () => trigger(snapshot, complete, button));
  return button;
}

// What the snapshot followed of its source's columns (snaprepl status's column_changes).
const COLUMN_CHANGES = {
  added: ["added at the source and to the copy", "small"],
  widened: ["widened at the source and in the copy", "small"],
  kept: ["dropped at the source, kept in the copy with their values", "small warn"],
};

function columnChanges(cell, changes) {
  for (const [kind, [text, cls]] of Object.entries(COLUMN_CHANGES)) {
    const names = (changes || {})[kind] || [];
    if (!names.length) continue;
    const line = el("span", `columns ${names.join(", ")} ${text}`, cls);
    line.dataset.field = `columns-${kind}`;
    cell.appendChild(line);
  }
}

function drawSnapshots(snapshots) {
  const body = document.querySelector("#snapshots tbody");
  body.replaceChildren();
  if (!snapshots.length) {
    const row = body.insertRow();
    cell(row, "No snapshot you may read.").colSpan = 11;
  }
  for (const s of snapshots) {
    const row = body.insertRow();
    row.dataset.snapshot = s.name;
    const name = cell(row, s.name);
    name.appendChild(el("span", s.group ? `in group ${s.group}: ${s.dag_id}` : s.dag_id, "small"));
    columnChanges(name, s.column_changes);
    cell(row, s.type);
    const where = cell(row, s.source);
    where.appendChild(el("span", `→ ${s.destination}`, "small"));
    const [text, cls] = snapshotState(s);
    cell(row, text, cls).dataset.field = "state";
    cell(row, duration(s.lag_seconds), "num").dataset.field = "lag";
    const backlog = cell(row, s.backlog_rows, "num");
    backlog.dataset.field = "backlog";
    for (const held of s.held_back_by || []) backlog.appendChild(el("span", `held back by ${held}`, "small warn"));
    const last = cell(row, dagRun(s.dag && s.dag.last));
    if (s.last_refresh && s.last_refresh.at) last.appendChild(el("span", `refreshed ${when(s.last_refresh.at)}`, "small"));
    cell(row, s.dag && s.dag.next ? when(s.dag.next) : (s.schedule ? null : "manual"));
    cell(row, s.purge_blocker);
    lastVerify(row, s.last_verify, verifyButton(`api/snapshots/${encodeURIComponent(s.name)}/verify`, s));
    const actions = cell(row, "", "actions");
    actions.classList.remove("none");
    actions.textContent = "";
    const buttons = el("div");
    buttons.append(actionButton(s, "Refresh now", false), actionButton(s, "Complete refresh", true));
    actions.appendChild(buttons);
  }
}

// A snapshot group: its members (refreshed together by its DAG), the point they were all brought to
// (one per source), and its lag (its members' largest at the end of the group's last run).
function drawGroups(groups) {
  const body = document.querySelector("#groups tbody");
  body.replaceChildren();
  if (!groups.length) cell(body.insertRow(), "No snapshot group you may read.").colSpan = 9;
  for (const g of groups) {
    const row = body.insertRow();
    row.dataset.group = g.name;
    cell(row, g.name).appendChild(el("span", g.dag_id, "small"));
    cell(row, g.source).appendChild(el("span", `→ ${g.destination}`, "small"));
    const members = cell(row, g.members.length ? "" : null);
    members.dataset.field = "members";
    for (const m of g.members) members.appendChild(el("span", m, "member")).dataset.member = m;
    const points = Object.entries(g.points || {}).map(([conn, at]) => `${conn}: ${when(at)}`);
    cell(row, points.join("; ") || "none yet").dataset.field = "point";
    cell(row, duration(g.lag_seconds), "num").dataset.field = "lag";
    const bad = (g.alerts && g.alerts.length) || g.last_status === "failed";
    const status = [...(g.alerts || []), g.last_error ? `${g.last_status}: ${g.last_error}` : g.last_status];
    cell(row, status.filter(Boolean).join("; ") || "never refreshed", bad ? "state-bad" : "").dataset.field = "state";
    const last = cell(row, dagRun(g.dag && g.dag.last));
    if (g.last_refresh_at) last.appendChild(el("span", `refreshed ${when(g.last_refresh_at)}`, "small"));
    cell(row, g.dag && g.dag.next ? when(g.dag.next) : (g.schedule ? null : "manual"));
    cell(row, Object.entries(g.skipped || {}).map(([t, why]) => `${t} (${why})`).join(", "));
  }
}

function count(probe) {
  if (!probe) return null;
  return probe.error ? `? ${probe.error}` : probe.rows;
}

function drawSubscriptions(publications) {
  const body = document.querySelector("#subscriptions tbody");
  body.replaceChildren();
  const items = document.querySelector("#conflict-filters select[name=item]");
  const chosen = items.value;
  items.length = 1;
  for (const p of publications) {
    items.add(new Option(p.item, p.item));
    const subscribers = p.subscribers.length ? p.subscribers : [null];
    for (const sub of subscribers) {
      const row = body.insertRow();
      row.dataset.publication = p.item;
      cell(row, p.item);
      cell(row, p.publisher);
      cell(row, p.last_sync.status ? `${p.last_sync.status} ${when(p.last_sync.at) || ""}` : "never");
      if (!sub) { cell(row, "no subscriber").colSpan = 7; continue; }
      cell(row, sub.server);
      cell(row, sub.replica);
      const flags = [sub.detached_at ? "detached: needs REPL_INIT_SNAPSHOT" : sub.stale ? "stale" : "", ...(sub.alerts || [])];
      cell(row, [...flags.filter(Boolean), sub.status || (sub.loaded ? "loaded" : `not loaded (${sub.init_state || "no init"})`)].join("; "),
           sub.error || sub.stale || sub.detached_at ? "state-bad" : "");
      cell(row, count(sub.to_pull), "num");
      cell(row, count(sub.to_push), "num");
      const last = cell(row, when(sub.last_pull_at) || "—");
      last.classList.remove("none");
      last.appendChild(el("span", when(sub.last_push_at) || "—", "small"));
      lastVerify(row, sub.last_verify, verifyButton(`api/publications/${encodeURIComponent(p.item)}/verify`, p));
    }
  }
  items.value = chosen;
}

// Each log's size and age, and the copy its purge waits for: a subscriber gone, or a snapshot no
// longer refreshed, shows here as the holder while the log grows (until detach_stale lets it go).
function drawLogs(logs) {
  const body = document.querySelector("#logs tbody");
  body.replaceChildren();
  if (!logs.length) cell(body.insertRow(), "No snapshot log you may read.").colSpan = 6;
  for (const log of logs) {
    const row = body.insertRow();
    row.dataset.log = log.source;
    const source = cell(row, log.source);
    source.appendChild(el("span", log.rlog, "small"));
    cell(row, (log.copies || []).join(", "));
    cell(row, log.error ? `? ${log.error}` : log.rows, "num").dataset.field = "rows";
    cell(row, when(log.oldest_entry)).dataset.field = "oldest";
    cell(row, when(log.purged_before));
    const held = log.purge_held_by;
    const holder = cell(row, held ? `${held.kind} ${held.name}` : null);
    holder.dataset.field = "held-by";
    if (!held) continue;
    const upTo = held.kind === "subscriber" ? "pushed up to" : "refreshed up to";
    holder.appendChild(el("span", held.since ? `${upTo} ${when(held.since)}` : "never refreshed", "small"));
  }
}

function rowJson(value, other) {
  const pre = el("pre", "", "row");
  if (value === null || value === undefined) { pre.textContent = "(none)"; return pre; }
  if (typeof value !== "object") { pre.textContent = String(value); return pre; }
  for (const [key, v] of Object.entries(value)) {
    const line = el("span", `${key}: ${JSON.stringify(v)}\n`);
    if (other && typeof other === "object" && JSON.stringify(other[key]) !== JSON.stringify(v)) line.className = "changed";
    pre.appendChild(line);
  }
  return pre;
}

async function loadConflicts() {
  const form = new FormData(document.getElementById("conflict-filters"));
  const query = new URLSearchParams({ offset: state.offset, limit: PAGE });
  for (const [key, value] of form.entries()) if (value) query.set(key, value);
  const page = await getJson(`api/conflicts?${query}`);
  state.total = page.total;
  const body = document.querySelector("#conflicts tbody");
  body.replaceChildren();
  if (!page.conflicts.length) cell(body.insertRow(), "No conflicts.").colSpan = 9;
  for (const c of page.conflicts) {
    const row = body.insertRow();
    row.dataset.conflictId = c.id;
    cell(row, c.id, "num");
    cell(row, c.item);
    cell(row, c.type);
    cell(row, c.origin);
    cell(row, JSON.stringify(c.key));
    const incoming = cell(row, "");
    incoming.classList.remove("none");
    incoming.dataset.field = "incoming";
    incoming.replaceChildren(rowJson(c.incoming, c.current));
    const current = cell(row, "");
    current.classList.remove("none");
    current.dataset.field = "current";
    current.replaceChildren(rowJson(c.current, c.incoming));
    cell(row, c.decision).dataset.field = "decision";
    cell(row, when(c.at));
  }
  const last = Math.min(state.offset + PAGE, page.total);
  document.getElementById("page-info").textContent =
    page.total ? `${state.offset + 1}–${last} of ${page.total}` : "0 of 0";
  document.getElementById("prev").disabled = state.offset === 0;
  document.getElementById("next").disabled = last >= page.total;
}

const COLORS = ["#017cee", "#e53e3e", "#38a169", "#d69e2e", "#805ad5", "#dd6b20", "#319795", "#d53f8c"];

function chart(target, copies, field) {
  const node = document.getElementById(target);
  node.replaceChildren();
  const names = Object.keys(copies);
  if (!names.length || typeof uPlot === "undefined") {
    node.appendChild(el("p", names.length ? "Chart library missing: run scripts/setup.sh." : "No runs yet.", "small"));
    return;
  }
  const times = [...new Set(names.flatMap(n => copies[n].map(r => Date.parse(r.ended) / 1000)))].sort((a, b) => a - b);
  const series = names.map(n => {
    const at = new Map(copies[n].map(r => [Date.parse(r.ended) / 1000, r[field]]));
    return times.map(t => (at.has(t) ? at.get(t) : null));
  });
  const options = {
    width: 420, height: 200,
    series: [{}, ...names.map((n, i) => ({ label: n, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true,
                                           points: { show: true, size: 5 } }))],
    axes: [{}, { size: 60 }],
  };
  new uPlot(options, [times, ...series], node);
}

async function loadHistory() {
  const history = await getJson("api/history?days=7");
  chart("chart-lag", history.copies, "lag_seconds");
  chart("chart-backlog", history.copies, "backlog");
  chart("chart-rows", history.copies, "rows_in");
}

async function load() {
  try {
    const overview = await getJson("api/overview");
    document.getElementById("who").textContent = overview.user ? `signed in as ${overview.user}` : "";
    drawSnapshots(overview.snapshots);
    drawGroups(overview.groups || []);
    drawSubscriptions(overview.publications);
    drawLogs(overview.snapshot_logs);
    await Promise.all([loadConflicts(), loadHistory()]);
    document.getElementById("updated").textContent = `updated ${when(new Date().toISOString())}`;
    document.body.dataset.loaded = "true";
  } catch (err) {
    say(`Could not load the page: ${err.message}`, true);
  }
}

document.getElementById("reload").addEventListener("click", load);
document.getElementById("prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - PAGE); loadConflicts(); });
document.getElementById("next").addEventListener("click", () => { state.offset += PAGE; loadConflicts(); });
document.getElementById("conflict-filters").addEventListener("change", () => { state.offset = 0; loadConflicts(); });
load();
