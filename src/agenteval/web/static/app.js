/* agenteval web: one page over the JSON API documented in docs/web-api.md.
 *
 * Safety rule for this file: every string that came from an agent, a judge, a file or the
 * server goes into the page as text (the h() helper sets textContent or setAttribute), never
 * through innerHTML, so a reply like `<script>` or `"><img onerror=...>` stays text.
 * Links are built from hash routes with encodeURIComponent, never from data alone.
 */
"use strict";

const USER = "user"; // chat sessions are stored under one user id: the page has one user
const PAGE = 100; // rows fetched per page of a run: a 10,000-case run is never shipped whole
const enc = encodeURIComponent;

// ---------------------------------------------------------------- DOM helpers

/** Builds an element. props: class, text, style, on<event>, value, checked, other attributes. */
function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = String(v);
    else if (k === "style") el.style.cssText = v; // literal styles written in this file only
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "value" || k === "checked") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : String(kid)); // a string becomes a Text node
  }
  return el;
}

const SVGNS = "http://www.w3.org/2000/svg";
/** Builds an SVG element; attribute values and text are set through DOM calls only. */
function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") el.textContent = String(v);
    else if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  for (const kid of kids.flat(Infinity)) if (kid) el.append(kid);
  return el;
}

const $ = (sel, root = document) => root.querySelector(sel);
/** Appends the children that exist (null, undefined and false are skipped, unlike Element.append). */
function add(el, ...kids) { for (const k of kids.flat(Infinity)) if (k) el.append(k); return el; }
function replace(el, ...kids) { el.replaceChildren(); return add(el, ...kids); }

function toast(message, bad = false) {
  const el = h("div", { class: "toast" + (bad ? " bad" : ""), role: bad ? "alert" : "status", text: message });
  $("#toasts").append(el);
  setTimeout(() => el.remove(), bad ? 8000 : 3500);
}

function errorBox(err) { return h("div", { class: "error-box", role: "alert", text: String(err.message || err) }); }

// ---------------------------------------------------------------- formatting

function fmt(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  return typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toFixed(digits)) : String(x);
}
function fmtTime(epoch) { return epoch ? new Date(epoch * 1000).toLocaleString() : "–"; }
function fmtSecs(s) {
  if (s === null || s === undefined) return "–";
  return s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(s < 10 ? 2 : 1)} s`;
}
function json(v) { return JSON.stringify(v, null, 2); }
function oneLine(v) { return JSON.stringify(v); }
function short(text, n = 60) { text = String(text ?? ""); return text.length > n ? text.slice(0, n - 1) + "…" : text; }

/** Statuses come as ADK's integers or as names; the page shows one word and one colour each. */
const STATUS = { 1: "passed", 2: "failed", 3: "not evaluated", 4: "informational" };
function statusOf(v) {
  if (v === null || v === undefined) return "none";
  if (typeof v === "number") return STATUS[v] || String(v);
  const s = String(v).toLowerCase().replace(/_/g, " ");
  return s === "pass" ? "passed" : s === "fail" ? "failed" : s;
}
function statusClass(v) {
  return { passed: "ok", failed: "bad", "not evaluated": "na", informational: "info" }[statusOf(v)] || "info";
}
function badge(v, label) { return h("span", { class: "badge " + statusClass(v), text: label || statusOf(v) }); }

/** Text of a genai Content ({role, parts: [{text}]}), as the runner reads it. */
function contentText(c) {
  if (!c || !c.parts) return "";
  return c.parts.filter((p) => p.text).map((p) => p.text).join("\n");
}

/** Tool calls of an invocation, from either of ADK's intermediate-data forms. */
function invCalls(inv) {
  const d = inv && inv.intermediate_data;
  if (!d) return [];
  if (Array.isArray(d.tool_uses)) return d.tool_uses;
  return (d.invocation_events || []).flatMap((e) =>
    ((e.content && e.content.parts) || []).filter((p) => p.function_call).map((p) => p.function_call));
}
function callLine(c) { return `${c.name}(${c.args === null || c.args === undefined ? "" : oneLine(c.args)})`; }

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

/** One JSON request. Same-origin fetch sends the page's Origin on POST/PUT/DELETE, which the
 * server checks, and the token cookie when the server was opened with ?token=. */
async function api(path, { method = "GET", body } = {}) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = text;
  try { data = text ? JSON.parse(text) : null; } catch { /* a non-JSON body is shown as text */ }
  if (!res.ok) {
    const detail = data && typeof data === "object" && "detail" in data ? data.detail : data;
    throw new ApiError(res.status, `${res.status}: ${typeof detail === "string" ? detail : oneLine(detail)}`);
  }
  return data;
}

/** A page of rows and the number of matching rows (the X-Total-Count header). */
async function apiPage(path) {
  const res = await fetch(path, { headers: { Accept: "application/json" } });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, `${res.status}: ${(data && data.detail) || res.statusText}`);
  const header = res.headers.get("X-Total-Count");
  const items = Array.isArray(data) ? data : (data && data.cases) || [];
  return { items, total: header !== null ? Number(header) : data && data.total !== undefined ? data.total : null };
}

/** A query string of the parameters that have a value (an empty filter is no filter). */
function qs(params) {
  return new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "" && v !== null && v !== undefined)).toString();
}

const appPath = (app) => `/apps/${enc(app)}`;
const sessionsPath = (app) => `${appPath(app)}/users/${enc(USER)}/sessions`;
const setPath = (app, set) => `${appPath(app)}/eval-sets/${enc(set)}`;
const casePath = (app, set, id) => `${setPath(app, set)}/eval-cases/${enc(id)}`;

// ---------------------------------------------------------------- state and routing

const S = {
  apps: [], // [{name, kind, error}]
  criteria: null, // GET /api/criteria, fetched once
  session: null, // the chat session shown (with turns)
  model: localStorage.getItem("agenteval.model") || "", // model for new sessions ("" = agent's own)
  sideTab: "sessions",
  route: 0, // bumped on every navigation; a slow view never paints over a newer one
};

/** `#/runs/abc%2Fd?app=x` → {parts: ["runs", "abc/d"], query: {app: "x"}}. */
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, qs] = raw.split("?");
  const decode = (p) => { try { return decodeURIComponent(p); } catch { return p; } };
  return { parts: path ? path.split("/").map(decode) : [], query: Object.fromEntries(new URLSearchParams(qs || "")) };
}
function link(...parts) { return "#/" + parts.map((p) => enc(String(p))).join("/"); }
function go(hash) { if (location.hash === hash) route(); else location.hash = hash; }

/** Paints a view's node unless the user navigated elsewhere meanwhile. */
function paint(token, node) { if (token === S.route) replace($("#view"), node); }

async function route() {
  const token = ++S.route;
  const { parts, query } = parseHash();
  closeDrawer();
  markNav(parts[0] || "app");
  try {
    if (!parts.length) return await goHome();
    const [head, a, b, c, ...rest] = parts;
    if (head === "app" && a) return await showApp(token, a, parts.slice(2));
    if (head === "runs" && !a) return await showRuns(token, query);
    if (head === "runs" && b === "cases" && c) return await showCaseResult(token, a, c, pairs(rest));
    if (head === "runs") return await showRun(token, a, query);
    if (head === "compare") return await showCompare(token, a, b, query);
    paint(token, h("div", { class: "page" }, errorBox(new Error("no such page: " + location.hash))));
  } catch (err) {
    paint(token, h("div", { class: "page" }, errorBox(err)));
  }
}

/** ["run", "1", "inv", "2"] → {run: "1", inv: "2"}: optional parts of a deep link. */
function pairs(list) { const o = {}; for (let i = 0; i + 1 < list.length; i += 2) o[list[i]] = list[i + 1]; return o; }

function markNav(head) {
  const on = head === "runs" ? "nav-runs" : head === "compare" ? "nav-compare" : "nav-chat";
  for (const id of ["nav-chat", "nav-runs", "nav-compare"]) $("#" + id).classList.toggle("on", id === on);
}

async function loadApps() {
  S.apps = await api("/api/apps");
  const picker = $("#app-picker");
  replace(picker, h("option", { value: "", text: S.apps.length ? "choose…" : "no agents found" }),
    S.apps.map((a) => h("option", { value: a.name, text: a.name + (a.error ? " (failed to load)" : "") })));
}

async function goHome() {
  const first = S.apps.find((a) => !a.error) || S.apps[0];
  if (!first) {
    paint(S.route, h("div", { class: "page" }, h("p", { class: "muted", text: "No agents found in the agents folder." })));
    return;
  }
  history.replaceState(null, "", link("app", first.name));
  route();
}

function currentApp() { const { parts } = parseHash(); return parts[0] === "app" ? parts[1] : null; }

// ---------------------------------------------------------------- app view: sidebar + main

async function showApp(token, app, sub) {
  $("#app-picker").value = app;
  $("#nav-chat").setAttribute("href", link("app", app));
  const info = S.apps.find((a) => a.name === app);
  if (!info) throw new Error(`no agent named ${app} in the agents folder`);
  const [kind, id, more, caseId] = sub;
  if (kind === "evalsets" && S.sideTab !== "eval") S.sideTab = "eval";
  if (kind === "chat" && id && (!S.session || S.session.id !== id || S.session.app_name !== app)) {
    S.session = { app_name: app, ...(await api(`${sessionsPath(app)}/${enc(id)}`)) };
  }
  if (S.session && S.session.app_name !== app) S.session = null;
  // the bare app address shows the session in hand, so its address names it (a deep link)
  if (!kind && S.session) history.replaceState(null, "", link("app", app, "chat", S.session.id));
  const main = h("section", { class: "main" });
  const side = h("aside", { class: "side" });
  const view = h("div", { class: "app" }, side, main);
  if (info.error) main.append(h("div", { class: "page" }, errorBox(new Error(`${app} failed to load: ${info.error}`))));
  else if (kind === "evalsets" && id) await evalSetView(main, app, id, more === "cases" ? caseId : null);
  else chatView(main, app);
  paint(token, view);
  renderSide(side, app, kind === "evalsets" ? id : null);
}

const SIDE_TABS = [["sessions", "Sessions"], ["eval", "Eval"], ["trace", "Trace"], ["state", "State"]];

function renderSide(side, app, setId) {
  const body = h("div", { class: "tabbody" });
  const tabs = h("nav", { class: "tabs", role: "tablist" }, SIDE_TABS.map(([key, label]) =>
    h("button", { class: S.sideTab === key ? "on" : "", role: "tab", "data-tab": key, text: label,
      onclick: () => { S.sideTab = key; renderSide(side, app, setId); } })));
  replace(side, tabs, body);
  const fill = { sessions: sessionsTab, eval: evalTab, trace: traceTab, state: stateTab }[S.sideTab];
  fill(body, app, setId).catch((err) => replace(body, errorBox(err)));
}

async function sessionsTab(body, app) {
  const model = h("input", { id: "model", list: "models", placeholder: "the agent's own", value: S.model,
    onchange: (e) => { S.model = e.target.value.trim(); localStorage.setItem("agenteval.model", S.model); } });
  const models = h("datalist", { id: "models" }, ["local", "openai:gpt-4o-mini", "ollama:qwen2.5:7b"].map((m) => h("option", { value: m })));
  body.append(h("div", { class: "row" }, h("button", { class: "primary", text: "New session",
    onclick: () => { S.session = null; go(link("app", app)); } })),
  h("h4", { text: "Model for new sessions" }), h("div", { class: "row" }, model, models),
  h("h4", { text: "Sessions" }));
  const list = await api(sessionsPath(app));
  if (!list.length) { body.append(h("p", { class: "muted", text: "No sessions yet: say something to the agent." })); return; }
  list.sort((a, b) => (b.created || 0) - (a.created || 0));
  body.append(h("ul", { class: "list sessions" }, list.map((s) => h("li", { class: S.session && S.session.id === s.id ? "on" : "" },
    h("a", { href: link("app", app, "chat", s.id), title: s.id, text: `${short(s.id, 18)} · ${s.num_turns ?? s.turns ?? "?"} turns` }),
    h("span", { class: "muted", text: fmtTime(s.created) }),
    h("button", { class: "icon danger", title: "delete session", text: "✕", onclick: async () => {
      await api(`${sessionsPath(app)}/${enc(s.id)}`, { method: "DELETE" });
      if (S.session && S.session.id === s.id) { S.session = null; go(link("app", app)); } else route();
    } })))));
}

async function evalTab(body, app, setId) {
  const name = h("input", { placeholder: "new eval set id", id: "new-set", pattern: "[A-Za-z0-9_\\-]+" });
  const create = async () => {
    const id = name.value.trim();
    if (!id) return;
    try { await api(setPath(app, id), { method: "POST" }); toast(`created eval set ${id}`); go(link("app", app, "evalsets", id)); }
    catch (err) { toast(err.message, true); }
  };
  body.append(h("div", { class: "row" }, name, h("button", { text: "Create eval set", onclick: create })),
    h("h4", { text: "Eval sets" }));
  const sets = await api(`${appPath(app)}/eval-sets`);
  if (!sets.length) body.append(h("p", { class: "muted", text: "No eval sets yet." }));
  body.append(h("ul", { class: "list evalsets" }, sets.map((s) => h("li", { class: s === setId ? "on" : "" },
    h("a", { href: link("app", app, "evalsets", s), text: s })))));
  body.append(h("p", {}, h("a", { href: "#/runs?app=" + enc(app), text: "Run history of " + app + " →" })));
}

async function traceTab(body) {
  const turns = (S.session && S.session.turns) || [];
  if (!turns.length) { body.append(h("p", { class: "muted", text: "The trace of the chat session shows here, grouped by user message." })); return; }
  const groups = turns.map((t, i) => ({ label: t.user, spans: (t.trace && t.trace.spans) || [], target: `.turn[data-turn="${i}"]` }));
  body.append(traceView(groups));
}

async function stateTab(body) {
  if (!S.session) { body.append(h("p", { class: "muted", text: "No session: the state of the chat session shows here." })); return; }
  body.append(h("dl", { class: "kv" }, h("dt", { text: "session" }), h("dd", { class: "mono", text: S.session.id }),
    h("dt", { text: "model" }), h("dd", { text: S.session.model || "the agent's own" }),
    h("dt", { text: "created" }), h("dd", { text: fmtTime(S.session.created) })),
  h("h4", { text: "State" }), h("pre", { class: "box", id: "session-state", text: json(S.session.state || {}) }));
}

// ---------------------------------------------------------------- chat

function chatView(main, app) {
  const s = S.session;
  const messages = h("div", { class: "messages", id: "messages" });
  const head = h("div", { class: "chathead row" },
    h("strong", { id: "chat-title", text: s ? `Session ${s.id}` : "New session" }),
    h("span", { class: "muted", id: "chat-model", text: `model: ${(s ? s.model : S.model) || "the agent's own"}` }));
  const input = h("textarea", { id: "chat-input", placeholder: `Message ${app}… (Enter sends, Shift+Enter new line)` });
  const send = h("button", { class: "primary", id: "send", text: "Send" });
  const submit = async () => {
    const text = input.value.trim();
    if (!text) return;
    input.value = ""; send.disabled = true;
    try { await sendMessage(app, text, messages); } catch (err) { toast(err.message, true); }
    send.disabled = false; input.focus();
  };
  send.addEventListener("click", submit);
  input.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); submit(); } });
  replace(main, head, messages, h("div", { class: "composer" }, input, send));
  for (const [i, t] of ((s && s.turns) || []).entries()) messages.append(turnView(t, i));
  if (!s || !(s.turns || []).length) messages.append(h("p", { class: "muted", text: "Talk to the agent; the conversation is saved as a session." }));
  messages.scrollTop = messages.scrollHeight;
}

/** One turn: the user's message, the tool calls with their results inline, the reply. */
function turnView(t, i) {
  const results = t.tool_responses || [];
  const calls = (t.tool_calls || []).map((c, k) => {
    const r = results[k];
    const result = r ? "  →  " + short(oneLine(r.response), 80) : "";
    return h("details", { class: "tool" }, h("summary", {}, h("span", { class: "tag", text: "tool" }), " " + callLine(c) + result),
      h("pre", { text: "args: " + json(c.args ?? null) + (r ? "\nresult: " + json(r.response) : "") }));
  });
  const reply = t.error ? h("div", { class: "msg error", text: "Agent error: " + t.error })
    : h("div", { class: "msg agent", text: t.response || "(no text)" });
  return h("div", { class: "turn", "data-turn": i }, h("div", { class: "msg user", text: t.user }), calls, reply);
}

async function sendMessage(app, text, messages) {
  if (!S.session) {
    const body = S.model ? { model: S.model } : {};
    S.session = { app_name: app, turns: [], ...(await api(sessionsPath(app), { method: "POST", body })) };
    // the address names the session now, without a re-render that would drop the typed text
    history.replaceState(null, "", link("app", app, "chat", S.session.id));
    messages.replaceChildren();
    $("#chat-title").textContent = `Session ${S.session.id}`;
    $("#chat-model").textContent = `model: ${S.session.model || "the agent's own"}`;
  }
  const pending = h("div", { class: "turn" }, h("div", { class: "msg user", text }), h("div", { class: "msg agent pending", text: "…" }));
  messages.append(pending);
  messages.scrollTop = messages.scrollHeight;
  const sid = S.session.id;
  let turn;
  try { turn = await api(`${sessionsPath(app)}/${enc(sid)}/messages`, { method: "POST", body: { text } }); }
  finally { pending.remove(); }
  if (!S.session || S.session.id !== sid) return; // the user moved to another session meanwhile
  // re-read the session: the state after the turn, and the turn exactly as stored
  S.session = { app_name: app, ...(await api(`${sessionsPath(app)}/${enc(sid)}`)) };
  const turns = S.session.turns || [];
  messages.append(turnView(turns[turns.length - 1] || turn, turns.length - 1));
  messages.scrollTop = messages.scrollHeight;
  const side = $(".side");
  if (side) renderSide(side, app, null);
}

// ---------------------------------------------------------------- eval sets

async function evalSetView(main, app, setId, caseId) {
  const set = await api(setPath(app, setId));
  const cases = set.eval_cases || [];
  const page = h("div", { class: "page" });
  replace(main, page);
  const selected = new Set();
  const runBtn = h("button", { class: "primary", id: "run-eval", text: "Run evaluation…" });
  const count = () => { runBtn.textContent = selected.size ? `Run evaluation (${selected.size})…` : "Run evaluation (all)…"; };
  runBtn.addEventListener("click", () => {
    const ids = selected.size ? [...selected] : null;
    metricDialog(app, setId, ids, expectedArgs(ids ? cases.filter((c) => selected.has(c.eval_id)) : cases));
  });
  page.append(h("div", { class: "row" }, h("h2", { class: "grow", text: `Eval set ${setId}` }), runBtn),
    addSessionForm(app, setId, cases));
  // a 10,000-case set renders 200 rows at a time
  const rows = h("tbody");
  const all = h("input", { type: "checkbox", title: "select all", onchange: (e) => {
    for (const box of rows.querySelectorAll("input[type=checkbox]")) { box.checked = e.target.checked; box.dispatchEvent(new Event("change")); }
  } });
  const table = h("table", { class: "cases" }, h("thead", {}, h("tr", {}, h("th", {}, all), h("th", { text: "eval id" }),
    h("th", { text: "turns" }), h("th", { text: "first user message" }))), rows);
  let shown = 0;
  const more = h("button", { text: "Show more", onclick: () => showMore() });
  const showMore = () => {
    for (const c of cases.slice(shown, shown + 200)) {
      const box = h("input", { type: "checkbox", "data-case": c.eval_id, onchange: (e) => {
        if (e.target.checked) selected.add(c.eval_id); else selected.delete(c.eval_id);
        count();
      } });
      const first = c.conversation && c.conversation[0] ? contentText(c.conversation[0].user_content)
        : c.conversation_scenario ? "(scenario) " + c.conversation_scenario.starting_prompt : "";
      rows.append(h("tr", { class: c.eval_id === caseId ? "sel" : "" }, h("td", {}, box),
        h("td", {}, h("a", { href: link("app", app, "evalsets", setId, "cases", c.eval_id), text: c.eval_id })),
        h("td", { text: c.conversation ? c.conversation.length : "–" }), h("td", { text: short(first, 90) })));
    }
    shown = Math.min(cases.length, shown + 200);
    more.hidden = shown >= cases.length;
  };
  showMore();
  count();
  const none = h("p", { class: "muted", text: "No cases yet: chat with the agent, then add the session here." });
  page.append(h("h3", { text: `Cases (${cases.length})` }), cases.length ? table : none, more);
  if (caseId) {
    const c = cases.find((x) => x.eval_id === caseId);
    page.append(c ? caseEditor(app, setId, c) : errorBox(new Error(`no case ${caseId} in ${setId}`)));
  }
  page.append(await setHistory(app, setId));
  if (caseId) { const ed = $("#case-editor", page); if (ed) setTimeout(() => ed.scrollIntoView({ block: "start" }), 0); }
}

function addSessionForm(app, setId, cases) {
  const s = S.session && S.session.app_name === app ? S.session : null;
  if (!s) return h("p", { class: "muted", text: "Chat with the agent to add a session here as a new case (or open a saved session from the Sessions tab)." });
  const id = h("input", { id: "new-case-id", value: `case_${s.id.slice(0, 8)}_${cases.length + 1}`.replace(/[^\w-]/g, "_") });
  const add = async () => {
    try {
      await api(`${setPath(app, setId)}/add-session`, { method: "POST", body: { eval_id: id.value.trim(), session_id: s.id, user_id: USER } });
      toast(`added session ${s.id} as ${id.value.trim()}`);
      go(link("app", app, "evalsets", setId, "cases", id.value.trim()));
    } catch (err) { toast(err.message, true); }
  };
  return h("div", { class: "card row" }, h("span", { text: "Current session " }), h("code", { text: s.id }),
    h("span", { text: ` (${(s.turns || []).length} turns) as case` }), id,
    h("button", { id: "add-session", text: "Add current session", onclick: add }));
}

async function setHistory(app, setId) {
  const rows = await api("/api/runs?" + qs({ app, eval_set: setId, limit: 10 }));
  const list = Array.isArray(rows) ? rows : rows.runs || [];
  const box = h("div", {}, h("h3", { text: "Eval history of this set" }));
  if (!list.length) return box.append(h("p", { class: "muted", text: "No runs yet." })), box;
  box.append(runTable(list, false), h("p", {}, h("a", { href: `#/runs?app=${enc(app)}&eval_set=${enc(setId)}`, text: "All runs and trends →" })));
  return box;
}

// ---------------------------------------------------------------- case editor (ADK's edit mode)

function caseEditor(app, setId, original) {
  const box = h("div", { class: "card", id: "case-editor" });
  let draft = null; // a deep copy while editing; null in view mode
  const render = () => {
    const c = draft || original;
    const edit = !!draft;
    const head = h("div", { class: "row" }, h("h3", { class: "grow", text: `Case ${c.eval_id}` }),
      edit ? [h("button", { class: "primary", id: "save-case", text: "Save", onclick: save }),
        h("button", { text: "Cancel", onclick: () => { draft = null; render(); } })]
        : [h("button", { id: "edit-case", title: "Edit current eval case", text: "✎ Edit", onclick: () => { draft = structuredClone(original); render(); } }),
          h("button", { class: "danger", id: "delete-case", text: "Delete case", onclick: del })]);
    const body = c.conversation ? c.conversation.map((inv, i) => invocationEditor(c, inv, i, edit, render))
      : [h("pre", { class: "box", text: json(c.conversation_scenario) })];
    replace(box, head, state(c), body);
  };
  const state = (c) => c.session_input && Object.keys(c.session_input.state || {}).length
    ? h("details", {}, h("summary", { text: "initial session state" }), h("pre", { class: "box", text: json(c.session_input.state) })) : null;
  const save = async () => {
    try {
      await api(casePath(app, setId, original.eval_id), { method: "PUT", body: draft });
      original = draft; draft = null; render(); toast("case saved");
    } catch (err) { toast(err.message, true); }
  };
  const del = async () => {
    if (!confirm(`Delete case ${original.eval_id}?`)) return;
    try { await api(casePath(app, setId, original.eval_id), { method: "DELETE" }); toast("case deleted"); go(link("app", app, "evalsets", setId)); }
    catch (err) { toast(err.message, true); }
  };
  render();
  return box;
}

/** One invocation of a case: user message, expected tool calls, expected response; in edit
 * mode every part is editable, calls can be added, removed and moved, the turn deleted. */
function invocationEditor(c, inv, i, edit, rerender) {
  const calls = invCalls(inv);
  const el = h("div", { class: "inv", "data-inv": i });
  const head = h("div", { class: "head" }, h("strong", { text: `Turn ${i + 1}` }), h("span", { class: "grow" }),
    edit ? h("button", { class: "icon danger", title: "delete this message (the whole turn)", text: "Delete message",
      onclick: () => { c.conversation.splice(i, 1); rerender(); } }) : null);
  const userText = contentText(inv.user_content);
  const user = edit ? h("textarea", { class: "edit-user", rows: 2, value: userText,
    oninput: (e) => { inv.user_content = { role: "user", parts: [{ text: e.target.value }] }; } })
    : h("div", { class: "msg user", text: userText });
  const resp = contentText(inv.final_response);
  const response = edit ? h("textarea", { class: "edit-response", rows: 3, value: resp,
    oninput: (e) => { inv.final_response = { role: "model", parts: [{ text: e.target.value }] }; } })
    : h("div", { class: "msg agent", text: resp || "(no expected response)" });
  const callList = edit ? callsEditor(inv, calls, rerender)
    : calls.length ? h("pre", { class: "box", text: calls.map(callLine).join("\n") }) : h("p", { class: "muted", text: "no tool calls expected" });
  return replace(el, head, h("h4", { text: "User" }), user, h("h4", { text: "Expected tool calls" }), callList,
    h("h4", { text: "Expected response" }), response);
}

function callsEditor(inv, calls, rerender) {
  const list = calls.map((call) => ({ ...call, args: { ...(call.args || {}) } }));
  const commit = () => { setInvCalls(inv, list); rerender(); };
  const move = (k, d) => { const [x] = list.splice(k, 1); list.splice(k + d, 0, x); commit(); };
  const rows = list.map((call, k) => h("div", { class: "call" },
    h("input", { class: "call-name", value: call.name || "", "aria-label": "tool name", oninput: (e) => { call.name = e.target.value; setInvCalls(inv, list); } }),
    argsEditor(call, () => setInvCalls(inv, list), commit),
    h("div", { class: "row" },
      h("button", { class: "icon", title: "move up", text: "↑", disabled: k === 0, onclick: () => move(k, -1) }),
      h("button", { class: "icon", title: "move down", text: "↓", disabled: k === list.length - 1, onclick: () => move(k, 1) }),
      h("button", { class: "icon danger", title: "remove call", text: "✕", onclick: () => { list.splice(k, 1); commit(); } }))));
  return h("div", { class: "calls" }, rows, h("button", { class: "add-call", text: "+ tool call",
    onclick: () => { list.push({ name: "tool_name", args: {} }); commit(); } }));
}

/** Arguments as name / JSON value rows: a value that is not valid JSON is kept as a string. */
function argsEditor(call, update, commit) {
  const grid = h("div", { class: "args" });
  for (const name of Object.keys(call.args)) {
    const value = h("input", { class: "arg-value", value: oneLine(call.args[name]), title: "a JSON value; plain text is a string",
      oninput: (e) => { call.args[name] = parseLoose(e.target.value); update(); } });
    const key = h("input", { class: "arg-name", value: name, onchange: (e) => {
      const v = call.args[name]; delete call.args[name]; call.args[e.target.value] = v; commit();
    } });
    grid.append(key, value, h("button", { class: "icon", title: "remove argument", text: "✕", onclick: () => { delete call.args[name]; commit(); } }));
  }
  grid.append(h("button", { class: "icon add-arg", style: "grid-column: 1 / 4; justify-self: start", text: "+ argument",
    onclick: () => { let n = "arg"; for (let i = 2; n in call.args; i++) n = "arg" + i; call.args[n] = ""; commit(); } }));
  return grid;
}
function parseLoose(text) { try { return JSON.parse(text); } catch { return text; } }

/** Writes edited calls back in the invocation's own form (legacy `tool_uses` or ADK's current
 * `invocation_events`, where other events such as tool responses and texts are kept). */
function setInvCalls(inv, calls) {
  const clean = calls.map((c) => ({ ...(c.id ? { id: c.id } : {}), name: c.name, args: c.args }));
  const d = inv.intermediate_data;
  if (!d || !Array.isArray(d.invocation_events)) {
    if (!d && !clean.length) return;
    inv.intermediate_data = { tool_uses: clean, tool_responses: (d && d.tool_responses) || [], intermediate_responses: (d && d.intermediate_responses) || [] };
    return;
  }
  const kept = [];
  let at = -1;
  for (const e of d.invocation_events) {
    const parts = (e.content && e.content.parts) || [];
    if (!parts.some((p) => p.function_call)) { kept.push(e); continue; }
    if (at < 0) at = kept.length;
    const rest = parts.filter((p) => !p.function_call);
    if (rest.length) kept.push({ ...e, content: { ...e.content, parts: rest } });
  }
  const author = (d.invocation_events.find((e) => e.author) || {}).author || "agent";
  const added = clean.map((c) => ({ author, content: { role: "model", parts: [{ function_call: c }] } }));
  kept.splice(at < 0 ? kept.length : at, 0, ...added);
  inv.intermediate_data = { invocation_events: kept };
}

// ---------------------------------------------------------------- metric dialog and live progress

/** Options of built-in criteria beyond the threshold (the API lists names and ranges only). */
function criterionOptions(c) {
  if (c.name === "tool_trajectory_avg_score") return ["match_type", "ignore_args"];
  if (c.name === "tool_trajectory_single_tool_use") return ["tool_name"];
  if (c.name.startsWith("tool_trajectory_")) return ["ignore_args"];
  return [];
}
// criteria that take `args_match` (per tool and argument matchers)
const ARGS_MATCH = new Set(["tool_trajectory_avg_score", "tool_trajectory_precision", "tool_trajectory_recall"]);
const MATCHERS = ["exact", "ignore", "text", "number", "regex", "subset", "superset"];

/** Every (tool, argument) of the expected calls of these cases: what args_match can name. */
function expectedArgs(cases) {
  const out = new Map();
  for (const c of cases) for (const inv of c.conversation || []) for (const call of invCalls(inv)) {
    if (!out.has(call.name)) out.set(call.name, new Set());
    for (const k of Object.keys(call.args || {})) out.get(call.name).add(k);
  }
  return out;
}

/** The argument-matching table of a trajectory criterion; value() → its args_match or null. */
function argsMatchEditor(name, args) {
  const rows = [...args].flatMap(([tool, names]) => [...names].map((arg) => {
    const matcher = h("select", { "data-args-match": `${name}:${tool}:${arg}` }, MATCHERS.map((m) => h("option", { value: m, text: m })));
    const param = h("input", { placeholder: "", style: "width: 140px", hidden: true });
    matcher.addEventListener("change", () => {
      param.hidden = !["number", "regex"].includes(matcher.value);
      param.placeholder = matcher.value === "number" ? "tolerance (abs)" : "pattern (default: expected)";
    });
    return { tool, arg, matcher, param };
  }));
  const el = rows.length ? h("details", { class: "argsmatch" }, h("summary", { text: `argument matching (${rows.length} arguments in the expected calls)` }),
    h("table", {}, h("tbody", {}, rows.slice(0, 60).map((r) =>
      h("tr", {}, h("td", { class: "mono", text: `${r.tool}.${r.arg}` }), h("td", {}, r.matcher), h("td", {}, r.param)))))) : null;
  const value = () => {
    const out = {};
    for (const r of rows) {
      const m = r.matcher.value, p = r.param.value.trim();
      if (m === "exact") continue;
      const spec = m === "number" ? { match: "number", abs: Number(p) || 0 } : m === "regex" && p ? { match: "regex", pattern: p } : m;
      (out[r.tool] = out[r.tool] || {})[r.arg] = spec;
    }
    return Object.keys(out).length ? out : null;
  };
  return { el, value };
}
const DEFAULT_ON = ["tool_trajectory_avg_score", "response_match_score"]; // ADK's defaults

async function metricDialog(app, setId, evalIds, args) {
  if (!S.criteria) S.criteria = await api("/api/criteria");
  const dialog = $("#dialog");
  const rows = S.criteria.map((c) => criterionRow(c, args));
  const runs = h("input", { type: "number", id: "num-runs", min: 1, value: 1, style: "width: 70px" });
  const start = async () => {
    const criteria = {};
    for (const r of rows) { const v = r.value(); if (v !== undefined) criteria[r.name] = v; }
    try {
      const out = await api(`${setPath(app, setId)}/run`, { method: "POST",
        body: { eval_ids: evalIds, criteria, num_runs: Number(runs.value) || 1 } });
      dialog.close();
      watchRun(out.run_id, `${app} / ${setId}`);
    } catch (err) { toast(err.message, true); }
  };
  replace(dialog, h("div", { class: "dhead" }, h("span", { class: "grow", text: "EVALUATION METRIC" }),
    h("span", { class: "muted", text: evalIds ? `${evalIds.length} case(s)` : "all cases" })),
  h("div", { class: "dbody" }, rows.map((r) => r.el), h("div", { class: "row", style: "margin-top: 10px" }, h("label", { text: "Runs per case " }), runs)),
  h("div", { class: "dfoot" }, h("button", { text: "Cancel", onclick: () => dialog.close() }),
    h("button", { class: "primary", id: "start-run", text: "Start", onclick: start })));
  dialog.showModal();
}

/** One criterion in the dialog: enable box, threshold (slider for scored ones), judge model and
 * samples for judged ones, match options for trajectory ones. value() → what the API takes. */
function criterionRow(c, args) {
  const lo = c.min_value ?? 0, hi = c.max_value ?? 1;
  const on = h("input", { type: "checkbox", "data-criterion": c.name, checked: DEFAULT_ON.includes(c.name) && !c.informational, disabled: c.informational });
  const thr = h("input", { type: "number", class: "thr", step: "any", min: lo, max: hi, value: c.default_threshold ?? hi, "data-threshold": c.name });
  const slider = h("input", { type: "range", min: lo, max: hi, step: (hi - lo) / 100 || 0.01, value: thr.value, "aria-label": c.name + " threshold" });
  slider.addEventListener("input", () => { thr.value = slider.value; });
  thr.addEventListener("input", () => { slider.value = thr.value; });
  const opts = {};
  const optEls = [];
  if (c.judged) {
    opts.judge_model = h("input", { "data-judge-model": c.name, value: "local", style: "width: 260px" });
    opts.num_samples = h("input", { type: "number", min: 1, value: 5, style: "width: 60px", "data-samples": c.name });
    optEls.push(h("label", {}, "judge model ", opts.judge_model), h("label", {}, "samples ", opts.num_samples));
  }
  for (const o of criterionOptions(c)) {
    if (o === "match_type") opts[o] = h("select", { "data-match": c.name }, ["EXACT", "IN_ORDER", "ANY_ORDER"].map((m) => h("option", { value: m, text: m })));
    if (o === "ignore_args") opts[o] = h("input", { type: "checkbox" });
    if (o === "tool_name") opts[o] = h("input", { placeholder: "tool name" });
    optEls.push(h("label", {}, o.replace("_", " ") + " ", opts[o]));
  }
  const matching = ARGS_MATCH.has(c.name) && args ? argsMatchEditor(c.name, args) : null;
  const el = h("div", { class: "crit" }, on, h("strong", { text: c.name }),
    c.informational ? h("span", { class: "muted", text: "informational: always reported" }) : h("span", {}, slider, " ", thr),
    h("div", { class: "desc", text: c.description || "" }), optEls.length ? h("div", { class: "opts" }, optEls) : null,
    matching && matching.el ? h("div", { class: "opts" }, matching.el) : null);
  const value = () => {
    if (!on.checked || c.informational) return undefined;
    const threshold = Number(thr.value);
    const extra = {};
    if (opts.match_type) extra.match_type = opts.match_type.value;
    if (opts.ignore_args && opts.ignore_args.checked) extra.ignore_args = true;
    if (opts.tool_name) extra.tool_name = opts.tool_name.value.trim();
    const argsMatch = matching && matching.value();
    if (argsMatch) extra.args_match = argsMatch;
    if (c.judged) extra.judge_model_options = { judge_model: opts.judge_model.value.trim() || "local", num_samples: Number(opts.num_samples.value) || 5 };
    const plain = Object.keys(extra).length === 0 || (extra.match_type === "EXACT" && Object.keys(extra).length === 1);
    return plain ? threshold : { threshold, ...extra };
  };
  return { name: c.name, el, value };
}

/** Follows a run's server-sent events in the dock (outside the routed view, so it survives
 * navigation); offers Cancel while it runs and the results when it ends. */
function watchRun(runId, label) {
  const bar = h("div", { style: "width: 0%" });
  const status = h("div", { class: "pstatus", text: "starting…" });
  const log = h("div", { class: "log" });
  const actions = h("div", { class: "row" });
  const box = h("div", { class: "prog", "data-run": runId }, h("div", { class: "row" }, h("strong", { class: "grow", text: "Run " + label }),
    h("button", { class: "icon", title: "close", text: "✕", onclick: () => { es.close(); box.remove(); } })),
  h("div", { class: "bar" }, bar), status, log, actions);
  $("#dock").append(box);
  const cancel = h("button", { class: "danger", text: "Cancel", onclick: async () => {
    try { await api(`/api/runs/${enc(runId)}/cancel`, { method: "POST" }); } catch (err) { toast(err.message, true); }
  } });
  actions.append(cancel);
  let total = 0, done = 0, passed = 0, failed = 0, ended = false;
  const say = (t) => { log.append(h("div", { text: t })); log.scrollTop = log.scrollHeight; };
  const finish = (text, resultId) => {
    ended = true; es.close(); status.textContent = text; cancel.remove();
    if (resultId) actions.append(h("a", { class: "btn primary open-results", href: link("runs", resultId), text: "Open results" }));
  };
  const es = new EventSource(`/api/runs/${enc(runId)}/events`);
  es.onmessage = (msg) => {
    const e = JSON.parse(msg.data);
    if (e.type === "RunStarted") total = e.total || 0;
    else if (e.type === "CaseStarted") say(`started ${e.eval_id}${e.run_index ? " run " + e.run_index : ""}`);
    else if (e.type === "CaseFinished") {
      done++; statusOf(e.status) === "passed" ? passed++ : failed++;
      say(`${statusOf(e.status)}: ${e.eval_id}${e.error ? " (" + short(e.error, 60) + ")" : ""}`);
    } else if (e.type === "JudgeCallDone") say(`judge ${e.model}: ${e.samples} sample(s)${e.cached ? " (cached)" : ""}`);
    else if (e.type === "RunFinished") {
      finish(`finished: ${e.passed} passed, ${e.failed} failed, ${e.not_evaluated || 0} not evaluated`,
        (e.result_ids || [])[0] || e.run_id || runId);
    }
    else if (e.type === "RunFailed") { finish("failed: " + (e.error || "the run stopped")); box.classList.add("bad"); }
    else if (e.type === "RunCancelled") finish("cancelled");
    if (!ended) status.textContent = `${done} / ${total || "?"} case runs · ${passed} passed · ${failed} failed`;
    bar.style.width = total ? `${Math.round((100 * done) / total)}%` : "0%";
  };
  es.onerror = () => { if (!ended) finish("the progress stream closed; see the run history", runId); };
}

// ---------------------------------------------------------------- run history and charts

async function showRuns(token, query) {
  const { app = "", eval_set = "", status = "" } = query;
  const offset = Number(query.offset || 0);
  const [data, trends] = await Promise.all([api("/api/runs?" + qs({ app, eval_set, status, limit: 50, offset })),
    api("/api/trends?" + qs({ app, eval_set })).catch(() => [])]);
  const rows = Array.isArray(data) ? data : data.runs || [];
  const f = { app: h("select", { name: "app" }, h("option", { value: "", text: "every agent" }), S.apps.map((a) => h("option", { value: a.name, text: a.name }))),
    eval_set: h("input", { name: "eval_set", placeholder: "eval set id", value: eval_set }),
    status: h("select", { name: "status" }, ["", "passed", "failed"].map((s) => h("option", { value: s, text: s || "any status" }))) };
  f.app.value = app; f.status.value = status;
  const apply = (e) => {
    e.preventDefault();
    go("#/runs?" + qs(Object.fromEntries(Object.entries(f).map(([k, el]) => [k, el.value]))));
  };
  const page = h("div", { class: "page" }, h("h2", { text: "Run history" }),
    h("form", { class: "row card filters", onsubmit: apply }, f.app, f.eval_set, f.status, h("button", { class: "primary", text: "Filter" })));
  if (trends.length > 1) page.append(trendCharts(trends, !eval_set));
  const table = runTable(rows, true);
  page.append(table);
  const nav = h("div", { class: "row", style: "margin-top: 8px" });
  const to = (o) => { const q = new URLSearchParams(query); q.set("offset", Math.max(0, o)); return "#/runs?" + q; };
  if (offset > 0) nav.append(h("a", { class: "btn", href: to(offset - 50), text: "← newer" }));
  if (rows.length === 50) nav.append(h("a", { class: "btn", href: to(offset + 50), text: "older →" }));
  page.append(nav);
  paint(token, page);
}

/** Run rows; with `pick`, two checkboxes choose a baseline and a candidate to compare. */
function runTable(rows, pick) {
  const chosen = [];
  const cmp = h("button", { id: "compare-selected", text: "Compare selected (pick 2)", disabled: true,
    onclick: () => go(link("compare", chosen[0], chosen[1])) });
  const body = rows.map((r) => {
    const rate = r.cases_total ? r.cases_passed / r.cases_total : null;
    const box = pick ? h("input", { type: "checkbox", "data-run": r.run_id, onchange: (e) => {
      if (e.target.checked) chosen.push(r.run_id); else chosen.splice(chosen.indexOf(r.run_id), 1);
      cmp.disabled = chosen.length !== 2;
    } }) : null;
    return h("tr", {}, pick ? h("td", {}, box) : null,
      h("td", {}, h("a", { href: link("runs", r.run_id), class: "mono", text: r.run_id })),
      h("td", { text: fmtTime(r.created) }), h("td", { text: r.agent || r.app || "–" }), h("td", { text: r.eval_set_id }),
      h("td", {}, badge(r.status || (r.cases_failed ? "failed" : "passed"))),
      h("td", { text: `${r.cases_passed}/${r.cases_total}` + (r.num_runs > 1 ? ` ×${r.num_runs}` : "") }),
      h("td", { text: rate === null ? "–" : Math.round(rate * 100) + "%" }),
      h("td", { text: fmtSecs(r.duration_seconds) }), h("td", { text: fmt(r.total_tokens, 0) }),
      h("td", { class: "muted", text: [r.agent_model, r.judge_model].filter(Boolean).join(" / ") || "–" }));
  });
  const head = ["run", "created", "agent", "eval set", "verdict", "passed", "rate", "time", "tokens", "models"];
  const table = h("table", { class: "runs" }, h("thead", {}, h("tr", {}, pick ? h("th") : null, head.map((t) => h("th", { text: t })))), h("tbody", {}, body));
  return pick ? h("div", {}, h("div", { class: "row", style: "margin: 6px 0" }, cmp), table) : table;
}

const COLORS = ["#2f6fde", "#e08a1e", "#16794a", "#b42318", "#7c5cd6", "#0e9384", "#c11574", "#667085"];

/** Pass rate and mean score per criterion, one point per run, oldest first. */
function trendCharts(trends, mixed) {
  const names = [...new Set(trends.flatMap((t) => Object.keys(t.criteria || {})))];
  const series = [{ name: "pass rate", values: trends.map((t) => t.pass_rate) },
    ...names.map((n) => ({ name: n, values: trends.map((t) => (t.criteria || {})[n] ?? null) }))];
  return h("div", { class: "card" }, h("h3", { text: "Trends across the run history" + (mixed ? " (filter by eval set to compare like with like)" : "") }),
    h("div", { class: "charts" }, chart("Pass rate and mean score per criterion", lineChart(series, trends.map((t) => t.run_id), 640, 200), series)));
}

function chart(title, svgEl, series) {
  return h("div", { class: "chart" }, h("div", { class: "t", text: title }), svgEl,
    series ? h("div", { class: "legend" }, series.map((s, i) => h("span", {}, h("i", { style: `background: ${COLORS[i % COLORS.length]}` }), s.name))) : null);
}

/** A line chart of values in [0, 1]; each point's tooltip names the run. */
function lineChart(series, labels, w, ht) {
  const pad = { l: 30, r: 10, t: 8, b: 18 };
  const n = labels.length;
  const x = (i) => pad.l + (n > 1 ? (i * (w - pad.l - pad.r)) / (n - 1) : 0);
  const y = (v) => pad.t + (1 - v) * (ht - pad.t - pad.b);
  const root = svg("svg", { width: w, height: ht, viewBox: `0 0 ${w} ${ht}`, role: "img" });
  for (const v of [0, 0.5, 1]) {
    root.append(svg("line", { x1: pad.l, x2: w - pad.r, y1: y(v), y2: y(v), stroke: "#e4e7ec" }),
      svg("text", { x: 4, y: y(v) + 3, text: v.toFixed(1) }));
  }
  series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length];
    const pts = s.values.map((v, i) => (v === null || v === undefined ? null : [x(i), y(Math.max(0, Math.min(1, v)))]));
    const d = pts.map((p, i) => (p ? `${i && pts[i - 1] ? "L" : "M"}${p[0].toFixed(1)},${p[1].toFixed(1)}` : "")).join("");
    root.append(svg("path", { d, fill: "none", stroke: color, "stroke-width": 2 }));
    pts.forEach((p, i) => p && root.append(svg("circle", { cx: p[0], cy: p[1], r: 3, fill: color },
      svg("title", { text: `${s.name} ${fmt(s.values[i])} · ${labels[i]}` }))));
  });
  return root;
}

/** Vertical bars, one per item ({label, value}); the tooltip gives the exact value. */
function barChart(items, w, ht, unit, xTicks) {
  const pad = { l: 46, r: 6, t: 8, b: 18 };
  const label = (v) => (unit === " s" ? fmtSecs(v) : fmt(v, v < 10 ? 2 : 0) + unit);
  const root = svg("svg", { width: w, height: ht, viewBox: `0 0 ${w} ${ht}`, role: "img" });
  // ticks spread evenly along the x axis (the histogram's 0, 0.5, 1)
  (xTicks || []).forEach((t, i, all) => root.append(svg("text", { x: pad.l + (i * (w - pad.l - pad.r - 12)) / Math.max(1, all.length - 1), y: ht - 4, text: t })));
  const max = Math.max(1e-9, ...items.map((i) => i.value || 0));
  const bw = Math.min(28, Math.max(1, (w - pad.l - pad.r) / Math.max(1, items.length))); // few cases: no slabs
  root.append(svg("text", { x: 2, y: pad.t + 8, text: label(max) }), svg("text", { x: 2, y: ht - pad.b, text: "0" }));
  items.forEach((it, i) => {
    const hgt = ((it.value || 0) / max) * (ht - pad.t - pad.b);
    root.append(svg("rect", { x: pad.l + i * bw, y: ht - pad.b - hgt, width: Math.max(1, bw - 1), height: hgt, fill: it.color || COLORS[0] },
      svg("title", { text: `${it.label}: ${label(it.value || 0)}` })));
  });
  return root;
}

/** Scores of one criterion in 10 bins over [lo, hi]: the run's score distribution. */
function histogram(scores, lo = 0, hi = 1) {
  const bins = Array(10).fill(0);
  for (const s of scores) bins[Math.min(9, Math.max(0, Math.floor(((s - lo) / (hi - lo || 1)) * 10)))]++;
  const edge = (i) => fmt(lo + (i * (hi - lo)) / 10);
  // low scores red, middling amber, high green
  return bins.map((count, i) => ({ label: `${edge(i)}–${edge(i + 1)}`, value: count, color: i >= 8 ? COLORS[2] : i < 5 ? COLORS[3] : COLORS[1] }));
}

// ---------------------------------------------------------------- one run

const INFORMATIONAL = new Set(["tool_call_count_v1", "inference_call_count_v1", "token_usage_v1", "invocation_duration_v1"]);

async function showRun(token, runId, query) {
  const status = query.status || "";
  const run = await api(`/api/runs/${enc(runId)}`);
  if (run.state && run.state !== "finished") return paint(token, unfinishedRun(runId, run));
  const first = await apiPage(casesUrl(run.run_id || runId, 0, status));
  const row = run.row || run; // the history row's fields
  const spec = run.header || run.run || {};
  const id = row.run_id || runId;
  const counts = run.counts || {};
  const cases = [...first.items];
  const total = first.total ?? cases.length;
  const summaries = run.cases || [];
  const names = [...new Set([...(run.criteria || []), ...summaries.flatMap((c) => (c.metrics || []).map((m) => m.metric_name)),
    ...cases.flatMap((c) => c.metrics.map((m) => m.name))])]
    .sort((a, b) => INFORMATIONAL.has(a) - INFORMATIONAL.has(b)); // gating criteria first
  const failing = run.failing || summaries.filter((c) => statusOf(c.status) !== "passed").map((c) => ({ eval_id: c.eval_id, problems: c.problems }));
  const page = h("div", { class: "page run" });
  if (S.apps.some((a) => a.name === row.agent)) $("#app-picker").value = row.agent;
  page.append(h("div", { class: "row" }, h("h2", { class: "grow" }, "Run ", h("span", { class: "mono", text: id })),
    h("a", { class: "btn", href: `/api/runs/${enc(id)}/export`, download: `${id}.html`, id: "export", text: "Export HTML" }),
    compareMenu(id, row)),
  h("div", { class: "card" }, h("dl", { class: "kv" }, kvs({
    agent: row.agent || (spec.agent && spec.agent.name), "eval set": run.eval_set_id || row.eval_set_id, command: spec.command,
    created: fmtTime(row.created), "agent model": row.agent_model, "judge model": row.judge_model,
    runs: row.num_runs > 1 ? `${row.num_runs} per case (gating: ${run.gating || row.gating})` : null,
    time: fmtSecs(row.duration_seconds), tokens: fmt(row.total_tokens, 0),
    criteria: spec.config && spec.config.criteria ? oneLine(spec.config.criteria) : null })),
  h("div", { class: "row", style: "margin-top: 8px" }, badge("passed", `${counts.passed ?? row.cases_passed ?? 0} passed`),
    badge("failed", `${counts.failed ?? row.cases_failed ?? 0} failed`), counts.not_evaluated ? badge(3, `${counts.not_evaluated} not evaluated`) : null,
    h("span", { class: "muted", text: `${counts.total ?? counts.cases ?? row.cases_total ?? total} cases`
      + (counts.max_runs > 1 ? `, up to ${counts.max_runs} runs each` : "") }))));
  if (failing.length) {
    const all = Math.max(failing.length, run.cases_not_passed || 0);
    const title = "Why cases failed" + (all > 100 ? ` (first 100 of ${all})` : "");
    page.append(h("div", { class: "card failing" }, h("h3", { text: title }), h("ul", {}, failing.slice(0, 100).map((f) =>
      h("li", {}, h("a", { href: link("runs", id, "cases", f.eval_id), text: f.eval_id }), ": ", (f.problems || []).join("; "))))));
  }
  const charts = h("div", { class: "charts" });
  const filter = h("select", { id: "status-filter", onchange: (e) => go(link("runs", id) + (e.target.value ? "?status=" + e.target.value : "")) },
    ["", "passed", "failed", "not_evaluated"].map((s) => h("option", { value: s, text: s ? s.replace("_", " ") : "every case" })));
  filter.value = status;
  const tbody = h("tbody");
  const more = h("button", { text: "Load more" });
  const loaded = h("span", { class: "muted" });
  const addRows = (list) => {
    for (const c of list) tbody.append(caseRow(id, c, names));
    loaded.textContent = `${cases.length} of ${total} case runs shown`;
    more.hidden = cases.length >= total;
    replace(charts, runCharts(cases, names));
  };
  more.addEventListener("click", async () => {
    more.disabled = true;
    const next = await apiPage(casesUrl(id, cases.length, status));
    cases.push(...next.items);
    addRows(next.items);
    more.disabled = false;
  });
  page.append(h("h3", { text: "Charts" }), charts,
    h("div", { class: "row", style: "margin: 14px 0 6px" }, h("h3", { class: "grow", style: "margin: 0", text: "Cases" }), filter, loaded),
    h("table", { class: "cases" }, h("thead", {}, h("tr", {}, ["case", "run", "verdict", ...names].map((t) => h("th", { text: t })))), tbody), more);
  addRows(cases);
  paint(token, page);
}

/** A run this server started that is not recorded yet (or never will be): its state, and its
 * documents once there are some. */
function unfinishedRun(runId, run) {
  const docs = run.result_ids || [];
  return h("div", { class: "page" }, h("h2", {}, "Run ", h("span", { class: "mono", text: runId })),
    h("div", { class: "card" }, h("p", {}, "This run is ", h("strong", { text: run.state }), "."),
      run.error ? errorBox(new Error(run.error)) : null,
      docs.map((d) => h("p", {}, h("a", { href: link("runs", d), text: "Results " + d }))),
      h("button", { text: "Reload", onclick: () => route() })));
}

function casesUrl(runId, offset, status) {
  return `/api/runs/${enc(runId)}/cases?offset=${offset}&limit=${PAGE}` + (status ? "&status=" + enc(status) : "");
}

function headRow(titles) { return h("thead", {}, h("tr", {}, titles.map((t) => h("th", { text: t })))); }

function kvs(obj) {
  return Object.entries(obj).filter(([, v]) => v !== null && v !== undefined && v !== "–" && v !== "")
    .flatMap(([k, v]) => [h("dt", { text: k }), h("dd", { text: v })]);
}

/** A case row: each criterion's cell is coloured by that criterion's own status. */
function caseRow(runId, c, names) {
  const byName = Object.fromEntries((c.metrics || []).map((m) => [m.name, m]));
  const href = link("runs", runId, "cases", c.eval_id) + (c.run_index ? "/run/" + c.run_index : "");
  return h("tr", { "data-case": c.eval_id }, h("td", {}, h("a", { href, text: c.eval_id }), c.error ? h("div", { class: "muted", text: short(c.error, 80) }) : null),
    h("td", { text: c.run_index ?? 0 }), h("td", {}, badge(c.status)),
    names.map((n) => {
      const m = byName[n];
      if (!m) return h("td", { class: "muted", text: "–" });
      return h("td", { class: statusClass(m.status), title: `${n}: ${fmt(m.score)} (threshold ${fmt(m.threshold)}), ${statusOf(m.status)}`, text: fmt(m.score) });
    }));
}

/** Score distributions per gating criterion, latency and tokens per case, over the rows loaded. */
function runCharts(cases, names) {
  const out = [];
  for (const n of names.filter((x) => !INFORMATIONAL.has(x))) {
    const scores = cases.map((c) => (c.metrics || []).find((m) => m.name === n)).filter((m) => m && typeof m.score === "number").map((m) => m.score);
    if (scores.length) out.push(chart(`${n}: score distribution (${scores.length} scores)`, barChart(histogram(scores), 260, 130, "", ["0", "0.5", "1"])));
  }
  const metric = (c, n) => { const m = (c.metrics || []).find((x) => x.name === n); return m ? m.score : null; };
  const lat = cases.slice(0, 200).map((c) => ({ label: c.eval_id, value: c.duration ?? metric(c, "invocation_duration_v1") }));
  const tok = cases.slice(0, 200).map((c) => ({ label: c.eval_id, value: c.tokens ?? metric(c, "token_usage_v1") }));
  if (lat.some((x) => x.value)) out.push(chart("Latency per case (s)", barChart(lat, 300, 120, " s")));
  if (tok.some((x) => x.value)) out.push(chart("Tokens per case", barChart(tok.map((t) => ({ ...t, color: COLORS[4] })), 300, 120, "")));
  return out.length ? out : [h("p", { class: "muted", text: "No scores to chart." })];
}

function compareMenu(id, row) {
  const sel = h("select", { id: "compare-with" }, h("option", { value: "", text: "Compare with…" }));
  api("/api/runs?" + qs({ eval_set: row.eval_set_id, app: row.app || row.agent, limit: 50 })).then((rows) => {
    for (const r of Array.isArray(rows) ? rows : rows.runs || []) {
      if (r.run_id !== id) sel.append(h("option", { value: r.run_id, text: `${r.run_id} (${r.cases_passed}/${r.cases_total})` }));
    }
  }).catch(() => {});
  sel.addEventListener("change", () => sel.value && go(link("compare", sel.value, id)));
  return sel;
}

// ---------------------------------------------------------------- one case result

async function showCaseResult(token, runId, caseId, opts) {
  const runIndex = Number(opts.run || 0);
  const d = await api(`/api/runs/${enc(runId)}/cases/${enc(caseId)}?run_index=${runIndex}`);
  const r = d.result;
  const runs = Array.isArray(d.runs) ? d.runs : Array.from({ length: d.runs || 1 }, (_, k) => k);
  const summary = Array.isArray(d.summary) ? d.summary : (d.summary && d.summary.metrics) || [];
  const page = h("div", { class: "page case-result" });
  page.append(h("p", {}, h("a", { href: link("runs", runId), text: "← run " + runId })),
    h("div", { class: "row" }, h("h2", { class: "grow" }, "Case ", h("span", { text: caseId })),
      runs.length > 1 ? h("span", { class: "muted", text: `run ${runIndex}: ` }) : null, badge(r.final_eval_status),
      runs.length > 1 ? [h("span", { class: "muted", text: " over all runs: " }), badge(d.verdict)] : null));
  if (runs.length > 1) {
    page.append(h("div", { class: "row" }, h("span", { text: "Repeated runs:" }), runs.map((k) =>
      h("a", { class: "btn" + (k === runIndex ? " primary" : ""), href: link("runs", runId, "cases", caseId, "run", k), text: `run ${k}` }))));
    if (summary.length) page.append(repeatStats(summary));
  }
  if ((d.problems || []).length) {
    page.append(h("div", { class: "card problems" }, h("h3", { text: "Why it did not pass" }), h("ul", {}, d.problems.map((p) => h("li", { text: p })))));
  }
  page.append(h("div", { class: "card" }, h("h3", { text: "Criteria" }), h("div", { class: "row criteria" }, (r.overall_eval_metric_results || []).map((m) =>
    h("span", { class: "badge " + statusClass(m.eval_status), "data-metric": m.metric_name, title: statusOf(m.eval_status),
      text: `${m.metric_name} ${fmt(m.score)}${m.threshold !== null && m.threshold !== undefined ? " / " + fmt(m.threshold) : ""}` })))));
  if (r.error_message) page.append(errorBox(new Error("The agent failed: " + r.error_message)));
  for (const e of r.metric_errors || []) {
    const where = e.invocation_index !== null && e.invocation_index !== undefined ? ` (invocation ${e.invocation_index})` : "";
    page.append(h("div", { class: "error-box", text: `${e.metric_name}${where}: ${e.message}` }));
  }
  // invocations on the left, the trace beside them (sticky), so hovering a trace row shows its turn
  const left = h("div", { class: "case-main" });
  const diffs = d.invocations || [];
  (r.eval_metric_result_per_invocation || []).forEach((per, i) => left.append(invocationResult(d, per, i, diffs[i] || {}, runId)));
  if ((r.judge_records || []).length) left.append(judgeTable(r.judge_records));
  const spans = r.trace && r.trace.spans && r.trace.spans.length;
  const right = h("aside", { class: "case-trace card" }, h("h3", { text: "Trace" }),
    spans ? traceView(caseGroups(r)) : h("p", { class: "muted", text: "No trace was recorded for this case run." }));
  page.append(h("div", { class: "case-grid" }, left, right));
  paint(token, page);
  if (opts.inv) { const el = $(`#inv-${CSS.escape(opts.inv)}`); if (el) { el.scrollIntoView(); el.classList.add("hl"); } }
}

function repeatStats(metrics) {
  const head = ["criterion", "threshold", "runs", "passed", "mean", "std", "95% CI", "pass@k", "pass^k", "verdict"];
  return h("div", { class: "card" }, h("h3", { text: "Repeated-run statistics" }), h("table", { class: "repeat" },
    h("thead", {}, h("tr", {}, head.map((t) => h("th", { text: t })))),
    h("tbody", {}, metrics.filter((m) => !INFORMATIONAL.has(m.metric_name)).map((m) => h("tr", {}, h("td", { text: m.metric_name }), h("td", { text: fmt(m.threshold) }),
      h("td", { text: `${m.scored_runs}/${m.runs}` }), h("td", { text: m.passed_runs }), h("td", { text: fmt(m.mean) }), h("td", { text: fmt(m.std) }),
      h("td", { text: m.ci_low === null || m.ci_low === undefined ? "–" : `${fmt(m.ci_low)} – ${fmt(m.ci_high)}` }),
      h("td", { text: fmt(m.pass_at_k) }), h("td", { text: fmt(m.pass_pow_k) }), h("td", {}, badge(m.eval_status)))))));
}

/** Expected vs actual side by side, with the call diff, argument diffs and the failing scores. */
function invocationResult(d, per, i, diff, runId) {
  const act = per.actual_invocation, exp = per.expected_invocation;
  const metrics = per.eval_metric_results || [];
  const failing = metrics.filter((m) => statusOf(m.eval_status) === "failed");
  const gating = metrics.filter((m) => !INFORMATIONAL.has(m.metric_name)), info = metrics.filter((m) => INFORMATIONAL.has(m.metric_name));
  const here = link("runs", runId, "cases", d.result.eval_id, "run", d.result.run_index || 0, "inv", i);
  const want = exp ? contentText(exp.final_response) : null, got = contentText(act.final_response);
  const [wantEl, gotEl] = want === null ? [h("span", { class: "muted", text: "(no reference)" }), h("span", { text: got })] : wordDiff(want, got);
  const lines = diff.tool_call_diff ? diff.tool_call_diff.map((x) => (Array.isArray(x) ? x : [x.op, x.call]))
    : exp ? null : invCalls(act).map((c) => [" ", callLine(c)]);
  const argRows = argDiffRows(diff);
  const diffLine = ([k, t]) => h("div", { class: k === "-" ? "m" : k === "+" ? "x" : "", text: `${k} ${t}` });
  const callBox = lines
    ? h("pre", { class: "box diff" }, lines.length ? lines.map(diffLine) : h("span", { class: "muted", text: "(no tool calls)" }))
    : h("div", { class: "sides" }, h("pre", { text: invCalls(exp).map(callLine).join("\n") || "(none)" }),
      h("pre", { text: invCalls(act).map(callLine).join("\n") || "(none)" }));
  const args = argRows.length ? h("table", { class: "argdiff" }, headRow(["call", "tool", "argument", "expected", "actual"]),
    h("tbody", {}, argRows.map((a) => h("tr", {}, h("td", { text: a.call }), h("td", { text: a.tool }), h("td", { class: "mono", text: a.arg }),
      h("td", { class: "mono", text: a.expected }), h("td", { class: "mono bad", text: a.actual }))))) : null;
  const accept = exp && failing.length ? h("button", { class: "accept", text: "Accept actual turn as expected",
    title: "write this actual turn into the eval set as the new expected one",
    onclick: () => acceptActual(d, i, act, runId) }) : null;
  return h("div", { class: "inv card", id: `inv-${i}`, "data-inv": i },
    h("div", { class: "head" }, h("strong", { text: `Invocation ${i}` }), act.duration ? h("span", { class: "muted", text: fmtSecs(act.duration) }) : null,
      h("span", { class: "grow" }), gating.map((m) => h("span", { class: "badge " + statusClass(m.eval_status), text: `${m.metric_name} ${fmt(m.score)}` })),
      h("a", { class: "muted", href: here, title: "link to this invocation", text: "#" })),
    h("div", { class: "msg user", text: contentText(act.user_content) }),
    h("div", { class: "muted small", text: info.map((m) => `${m.metric_name.replace(/_v1$/, "").replace(/_/g, " ")} ${fmt(m.score)}`).join(" · ") }),
    h("div", { class: "sides" }, h("div", {}, h("h4", { text: "Expected response" }), h("pre", { class: "expected" }, wantEl)),
      h("div", {}, h("h4", { text: "Actual response" }), h("pre", { class: "actual" }, gotEl))),
    h("h4", { text: "Tool calls (− expected, not made · + made, not expected)" }), callBox, args,
    failing.length ? h("div", { class: "failing-scores" }, h("h4", { text: "Failing scores" }), failing.map((m) =>
      h("div", { class: "bad", text: `${m.metric_name}: score ${fmt(m.score)} < threshold ${fmt(m.threshold)}` }))) : null,
    accept);
}

/** Argument-level diff rows (which call, which argument, expected vs actual) from the server's
 * pairing of expected and actual calls; calls not made or not expected are rows of their own. */
function argDiffRows(diff) {
  const show = (v, missing) => (missing ? "(missing)" : oneLine(v ?? null));
  if (Array.isArray(diff.arg_diffs)) {
    return diff.arg_diffs.map((a) => ({ call: "#" + ((a.call ?? 0) + 1), tool: a.name, arg: a.arg, expected: show(a.expected), actual: show(a.actual, a.missing) }));
  }
  return (diff.argument_diff || []).flatMap((p) => {
    const call = p.expected_index !== null && p.expected_index !== undefined ? `#${p.expected_index + 1}` : `actual #${p.actual_index + 1}`;
    if (p.status === "missing") return [{ call, tool: p.tool, arg: "–", expected: "(this call)", actual: "(not made)" }];
    if (p.status === "unexpected") return [{ call, tool: p.tool, arg: "–", expected: "(not expected)", actual: "(this call)" }];
    return (p.arguments || []).map((a) => ({ call, tool: p.tool, arg: a.name,
      expected: show(a.expected, a.missing === "expected"), actual: show(a.actual, a.missing === "actual") }));
  });
}

/** Word-level diff (LCS) of two texts: words only in `a` struck out, only in `b` marked. Long
 * texts skip the O(n·m) table and show plainly. */
function wordDiff(a, b) {
  const x = a.split(/(\s+)/), y = b.split(/(\s+)/);
  if (x.length * y.length > 400000 || a === b) return [h("span", { text: a }), h("span", { text: b })];
  const L = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--) for (let j = y.length - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const left = h("span"), right = h("span");
  let i = 0, j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) { left.append(x[i]); right.append(y[j]); i++; j++; }
    else if (j < y.length && (i === x.length || L[i][j + 1] >= L[i + 1][j])) right.append(h("ins", { text: y[j++] }));
    else left.append(h("del", { text: x[i++] }));
  }
  return [left, right];
}

/** Writes the actual turn into the eval set as the expected one (ADK's "accept actual"). */
async function acceptActual(d, i, act, runId) {
  const setId = d.result.eval_set_id;
  try {
    const app = d.app || (await runApp(runId));
    if (!app) throw new Error("this run names no agent folder: its eval set cannot be edited from here");
    const c = await api(casePath(app, setId, d.result.eval_id));
    const inv = c.conversation && c.conversation[i];
    if (!inv) throw new Error(`case ${d.result.eval_id} has no turn ${i}`);
    inv.final_response = act.final_response;
    inv.intermediate_data = act.intermediate_data;
    await api(casePath(app, setId, d.result.eval_id), { method: "PUT", body: c });
    toast(`turn ${i} of ${d.result.eval_id} in ${setId} now expects the actual turn`);
  } catch (err) { toast(err.message, true); }
}
/** The agent folder a run belongs to, from its header. */
async function runApp(runId) {
  const run = await api(`/api/runs/${enc(runId)}`);
  const row = run.row || run, spec = run.header || run.run || {};
  return row.app || row.agent || (spec.agent && spec.agent.name) || null;
}

function judgeTable(records) {
  const head = ["criterion", "invocation", "item", "verdict", "score", "rationale", ""];
  return h("div", { class: "card judges" }, h("h3", { text: "Judge verdicts" }), h("table", {},
    h("thead", {}, h("tr", {}, head.map((t) => h("th", { text: t })))),
    h("tbody", {}, records.map((r) => h("tr", { class: r.step ? "muted" : "" }, h("td", { text: r.metric_name }), h("td", { text: r.invocation_index ?? "–" }),
      h("td", { text: r.item || "" }), h("td", {}, r.error ? badge(2, "error") : verdictBadge(r)),
      h("td", { text: fmt(r.score) }), h("td", { class: "rationale", text: r.rationale || r.error || "" }),
      h("td", { class: "nowrap" }, h("button", { class: "icon judge-audit", text: "prompt & reply", onclick: () => judgeDialog(r) }),
        r.span_id ? h("button", { class: "icon", title: "show this judge call in the trace", text: "trace", onclick: () => showSpan(r.span_id) }) : null))))));
}

/** Opens a span of the trace on the page (a judge call's, from its record) as if its row were clicked. */
function showSpan(spanId) {
  const row = document.querySelector(`.trow[data-span="${CSS.escape(spanId)}"]`);
  if (row) { row.scrollIntoView({ block: "nearest" }); row.click(); } else toast("that span is not in the trace", true);
}

function verdictBadge(r) {
  const tone = r.score === null || r.score === undefined ? "info" : r.score >= 1 ? "ok" : "bad";
  return h("span", { class: "badge " + tone, text: r.step || r.verdict || "–" });
}

function judgeDialog(r) {
  const dialog = $("#dialog");
  const title = `${r.metric_name} · ${r.judge_model}${r.prompt_version ? " · prompts " + r.prompt_version : ""}`;
  replace(dialog, h("div", { class: "dhead" }, h("span", { class: "grow", text: title }),
    h("button", { class: "icon", text: "✕", onclick: () => dialog.close() })),
  h("div", { class: "dbody" }, h("dl", { class: "kv" }, kvs({ verdict: r.verdict, score: fmt(r.score), rationale: r.rationale, error: r.error,
    "prompt tokens": r.prompt_tokens, cached: r.cached ? "yes" : null, "votes": (r.verdicts || []).map((v) => v ?? "unreadable").join(", ") })),
  (r.screened || []).length ? [h("h4", { text: "Cut from the agent's text before judging" }), h("pre", { class: "box", text: r.screened.join("\n") })] : null,
  h("h4", { text: "Prompt" }), h("pre", { class: "box judge-prompt", text: r.prompt }),
  (r.replies || []).map((reply, k) => [h("h4", { text: `Raw reply ${k + 1}` }), h("pre", { class: "box judge-reply", text: reply })])));
  dialog.showModal();
}

// ---------------------------------------------------------------- compare

async function showCompare(token, a, b, query) {
  if (!a || !b) return comparePicker(token);
  const margin = query.margin || "0";
  const c = await api(`/api/compare?a=${enc(a)}&b=${enc(b)}&margin=${enc(margin)}`);
  const showAll = query.all === "1";
  const counts = c.counts || {};
  const flaky = (m) => m && m.runs > 1 && m.passed_runs > 0 && m.passed_runs < m.runs;
  const flips = c.cases.filter((x) => x.criteria.some((k) => flaky(k.after) || flaky(k.before)));
  const tone = { "newly failed": "bad", regressed: "bad", "newly passed": "ok", improved: "ok", added: "info", removed: "na", unchanged: "info" };
  const page = h("div", { class: "page compare" }, h("h2", { text: "Compare runs" }),
    h("div", { class: "card" }, h("dl", { class: "kv" },
      h("dt", { text: "baseline" }), h("dd", {}, h("a", { class: "mono", href: link("runs", c.baseline_id), text: c.baseline_id }), ` (${c.baseline_set})`),
      h("dt", { text: "candidate" }), h("dd", {}, h("a", { class: "mono", href: link("runs", c.candidate_id), text: c.candidate_id }), ` (${c.candidate_set})`),
      h("dt", { text: "margin" }), h("dd", { text: fmt(c.margin) })),
    h("div", { class: "row counts", style: "margin-top: 8px" },
      Object.entries(counts).map(([k, n]) => h("span", { class: "badge " + (tone[k] || "info"), text: `${n} ${k}` })),
      flips.length ? h("span", { class: "badge na", text: `${flips.length} flip between repeated runs` }) : null)),
  h("div", { class: "row" }, h("a", { class: "btn", href: link("compare", a, b) + "?" + qs({ margin, all: showAll ? "0" : "1" }),
    text: showAll ? "Hide unchanged" : "Show unchanged" }),
    h("a", { class: "btn", href: link("compare", b, a), text: "Swap" })));
  const rows = c.cases.filter((x) => showAll || x.change !== "unchanged" || x.criteria.some((k) => k.change !== "unchanged"));
  const body = h("tbody");
  for (const x of rows.slice(0, 500)) {
    const crit = x.criteria.filter((k) => showAll || k.change !== "unchanged");
    body.append(h("tr", {}, h("td", {}, h("a", { href: link("runs", c.candidate_id, "cases", x.eval_id), text: x.eval_id })),
      h("td", {}, h("span", { class: "badge " + (tone[x.change] || "info"), text: x.change })),
      h("td", {}, x.before === null ? "–" : badge(x.before)), h("td", {}, x.after === null ? "–" : badge(x.after)),
      h("td", {}, crit.map((k) => h("div", { class: tone[k.change] === "bad" ? "bad" : "" },
        `${k.metric_name}: ${fmt(k.before && k.before.mean)} → ${fmt(k.after && k.after.mean)}`,
        k.delta !== null && k.delta !== undefined ? ` (${k.delta >= 0 ? "+" : ""}${fmt(k.delta)})` : "", ` ${k.change}`,
        k.significant ? " · significant" : "", flaky(k.after) ? ` · flips (${k.after.passed_runs}/${k.after.runs} passed)` : "")))));
  }
  add(page, h("table", { class: "cmp" }, h("thead", {}, h("tr", {}, ["case", "change", "before", "after", "criteria"].map((t) => h("th", { text: t })))), body),
    rows.length > 500 ? h("p", { class: "muted", text: `first 500 of ${rows.length} cases shown` }) : null,
    rows.length ? null : h("p", { class: "muted", text: "Nothing changed." }));
  paint(token, page);
}

async function comparePicker(token) {
  const data = await api("/api/runs?limit=100");
  const rows = Array.isArray(data) ? data : data.runs || [];
  const opt = (r) => h("option", { value: r.run_id, text: `${r.run_id} · ${r.eval_set_id} · ${r.cases_passed}/${r.cases_total}` });
  const a = h("select", { id: "cmp-a" }, rows.map(opt)), b = h("select", { id: "cmp-b" }, rows.map(opt));
  if (rows.length > 1) a.value = rows[1].run_id;
  paint(token, h("div", { class: "page" }, h("h2", { text: "Compare two runs" }),
    h("div", { class: "card row" }, h("label", {}, "baseline ", a), h("label", {}, "candidate ", b),
      h("button", { class: "primary", text: "Compare", onclick: () => go(link("compare", a.value, b.value)) }))));
}

// ---------------------------------------------------------------- trace view

/** Spans in tree order with their depth, children by start time, from the given roots. */
function treeOrder(spans, roots) {
  const kids = new Map();
  for (const s of spans) { const k = s.parent_id || ""; if (!kids.has(k)) kids.set(k, []); kids.get(k).push(s); }
  for (const list of kids.values()) list.sort((p, q) => p.start - q.start);
  const out = [];
  const walk = (s, depth) => { out.push({ span: s, depth }); for (const c of kids.get(s.span_id) || []) walk(c, depth + 1); };
  for (const r of roots) walk(r, 0);
  return out;
}
function rootsOf(spans) {
  const ids = new Set(spans.map((s) => s.span_id));
  return spans.filter((s) => !s.parent_id || !ids.has(s.parent_id)).sort((p, q) => p.start - q.start);
}

/** A case's trace grouped by invocation (its user message), then what came after (scoring). */
function caseGroups(r) {
  const spans = r.trace.spans;
  const index = (s) => s.attributes["agenteval.invocation_index"] ?? 0;
  const invs = spans.filter((s) => s.kind === "invocation").sort((p, q) => index(p) - index(q) || p.start - q.start);
  const pers = r.eval_metric_result_per_invocation || [];
  const userText = (i) => contentText(pers[i] && pers[i].actual_invocation && pers[i].actual_invocation.user_content);
  const groups = invs.map((inv, i) => ({ label: userText(i) || inv.attributes["input.value"] || inv.name,
    spans, roots: [inv], target: `#inv-${i}` }));
  const rest = rootsOf(spans).flatMap((root) => (root.kind === "case"
    ? spans.filter((s) => s.parent_id === root.span_id && s.kind !== "invocation") : root.kind === "invocation" ? [] : [root]));
  if (rest.length) groups.push({ label: "scoring and other steps", spans, roots: rest, target: null });
  return groups;
}

/** Rows grouped by user message; hovering highlights the message (group.target), clicking
 * opens the span in the drawer. Each row shows its timing against the group and its tokens. */
function traceView(groups) {
  const box = h("div", { class: "trace" });
  for (const g of groups) {
    const rows = treeOrder(g.spans, g.roots || rootsOf(g.spans));
    const t0 = Math.min(...rows.map((r) => r.span.start)), t1 = Math.max(...rows.map((r) => r.span.end ?? r.span.start));
    const span = Math.max(1e-6, t1 - t0);
    const el = h("div", { class: "tgroup" }, h("div", { class: "label", title: g.label, text: g.label || "(no message)" }));
    for (const { span: s, depth } of rows) {
      const a = s.attributes || {};
      const tokens = tokenText(a);
      const dur = s.end === null || s.end === undefined ? null : s.end - s.start;
      const row = h("div", { class: "trow" + (s.status === "error" ? " err" : ""), "data-span": s.span_id,
        title: `${s.name} · ${fmtSecs(dur)}${tokens ? " · tokens in/out " + tokens : ""}` },
        h("div", { class: "name", style: `padding-left: ${Math.min(depth, 12) * 12}px` }, h("span", { class: "k k-" + s.kind }), s.name),
        h("div", { class: "wf" }, h("div", { style: `left: ${(100 * (s.start - t0)) / span}%; width: ${(100 * (dur || 0)) / span}%` })),
        h("div", { class: "tok", text: tokens || fmtSecs(dur) }));
      row.addEventListener("mouseenter", () => highlight(g.target, true));
      row.addEventListener("mouseleave", () => highlight(g.target, false));
      row.addEventListener("click", () => {
        for (const o of document.querySelectorAll(".trow.on")) o.classList.remove("on");
        row.classList.add("on");
        openSpan(s, rows);
      });
      el.append(row);
    }
    box.append(el);
  }
  return box;
}
/** "412/18" (input/output tokens of a model or judge call), "412 in" without an output count. */
function tokenText(a) {
  const i = a["gen_ai.usage.input_tokens"], o = a["gen_ai.usage.output_tokens"];
  if (i === undefined || i === null) return "";
  return o === undefined || o === null ? `${i} in` : `${i}/${o}`;
}
function highlight(selector, on) {
  const el = selector && $(selector);
  if (!el) return;
  el.classList.toggle("hl", on);
  if (on) el.scrollIntoView({ block: "nearest" });
}

const DRAWER_TABS = ["Event", "Request", "Response", "Graph"];

function openSpan(s, rows, tab = "Event") {
  const drawer = $("#drawer");
  drawer.hidden = false;
  const content = h("div", { class: "dcontent" });
  const tabs = h("nav", { class: "tabs" }, DRAWER_TABS.map((t) =>
    h("button", { class: t === tab ? "on" : "", "data-tab": t, text: t, onclick: () => openSpan(s, rows, t) })));
  const took = fmtSecs(s.end === null || s.end === undefined ? null : s.end - s.start);
  replace(drawer, h("div", { class: "dtop" }, h("strong", { text: s.name }), h("span", { class: "muted", text: `${s.kind} · ${took}` }),
    tabs, h("span", { class: "grow" }), h("button", { class: "icon", title: "close", text: "✕", onclick: closeDrawer })), content);
  const a = s.attributes || {};
  if (tab === "Event") content.append(h("pre", { class: "raw-span", text: json(s) }));
  if (tab === "Request") content.append(spanPayload(s, a, "request"));
  if (tab === "Response") content.append(spanPayload(s, a, "response"));
  if (tab === "Graph") content.append(stepGraph(rows, s.span_id));
}
function closeDrawer() { const d = $("#drawer"); if (d) { d.hidden = true; d.replaceChildren(); } }

/** Structured attribute values are JSON text in the trace; show them parsed when they parse. */
function attr(v) { if (typeof v === "string" && /^[[{]/.test(v.trim())) { try { return JSON.parse(v); } catch { /* text */ } } return v; }

function spanPayload(s, a, which) {
  const keys = which === "request"
    ? { llm: ["gen_ai.input.messages", "gen_ai.request.tools"], tool: ["gen_ai.tool.call.arguments"], judge: ["input.value"], other: ["input.value"] }
    : { llm: ["gen_ai.output.messages", "output.value"], tool: ["gen_ai.tool.call.result", "output.value"], judge: ["output.value"], other: ["output.value"] };
  const list = keys[s.kind] || keys.other;
  const out = h("div", { class: "msgs payload" });
  if (which === "request" && a["gen_ai.request.model"]) out.append(h("p", { class: "muted", text: "model: " + a["gen_ai.request.model"] }));
  if (which === "response" && a["gen_ai.usage.input_tokens"] !== undefined) {
    const cached = a["gen_ai.usage.cache_read.input_tokens"];
    out.append(h("p", { class: "muted", text: `tokens: ${a["gen_ai.usage.input_tokens"]} in / ${a["gen_ai.usage.output_tokens"] ?? "?"} out`
      + (cached ? ` (${cached} cached)` : "") }));
  }
  let any = false;
  for (const k of list) {
    if (a[k] === undefined || a[k] === null) continue;
    if (k.endsWith(".output.messages") && a["output.value"] !== undefined && list.includes("output.value")) { /* both shown: messages carry tool calls */ }
    any = true;
    const v = attr(a[k]);
    out.append(h("h4", { text: k }));
    if (Array.isArray(v) && v.every((m) => m && typeof m === "object" && "role" in m)) {
      for (const m of v) out.append(h("div", { class: "m" }, h("div", { class: "role", text: m.role }),
        h("pre", { text: typeof m.content === "string" ? m.content : json(m.content ?? null) }),
        m.tool_calls ? h("pre", { class: "muted", text: "tool calls: " + json(m.tool_calls) }) : null));
    } else out.append(h("pre", { class: "box", text: typeof v === "string" ? v : json(v) }));
  }
  if (s.error) { any = true; out.append(h("div", { class: "error-box", text: s.error })); }
  const hint = s.kind === "agent" || s.kind === "invocation" ? ": open one of its model or tool steps" : "";
  if (!any) out.append(h("p", { class: "muted", text: `No ${which} recorded on this span${hint}.` }));
  if ((s.truncated || []).length) out.append(h("p", { class: "muted", text: "cut to 2,000 characters: " + s.truncated.join(", ") }));
  return out;
}

/** The steps of the message as a graph: lanes for agent, model and tools, time going down,
 * arrows from each step to the next; the selected span is outlined. */
function stepGraph(rows, selected) {
  const lane = { case: 0, invocation: 0, agent: 0, user_simulator: 0, scoring: 0, other: 0, llm: 1, judge: 1, tool: 2 };
  const W = 200, H = 34, GAP = 14;
  const steps = rows.slice(0, 80);
  const width = 3 * (W + 40) + 20, height = 30 + steps.length * (H + GAP);
  const root = svg("svg", { class: "graph", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" },
      svg("path", { d: "M0,0L10,5L0,10z", fill: "#98a2b3" }))));
  ["agent", "model", "tools"].forEach((t, i) => root.append(svg("text", { x: 20 + i * (W + 40), y: 14, text: t.toUpperCase() })));
  const pos = steps.map(({ span: s }, i) => ({ s, x: 20 + (lane[s.kind] ?? 0) * (W + 40), y: 24 + i * (H + GAP) }));
  pos.forEach((p, i) => {
    if (!i) return;
    const q = pos[i - 1];
    root.append(svg("path", { d: `M${q.x + W / 2},${q.y + H} L${p.x + W / 2},${p.y}`, stroke: "#98a2b3", fill: "none", "marker-end": "url(#arrow)" }));
  });
  for (const p of pos) {
    const s = p.s, a = s.attributes || {};
    const color = { llm: "#7c5cd6", tool: "#e08a1e", judge: "#16794a" }[s.kind] || "#2f6fde";
    const sub = [fmtSecs(s.end == null ? null : s.end - s.start), tokenText(a) && tokenText(a) + " tokens"].filter(Boolean).join(" · ");
    root.append(svg("g", { "data-span": s.span_id },
      svg("rect", { x: p.x, y: p.y, width: W, height: H, rx: 6, fill: s.span_id === selected ? "#d4e3fb" : "#fff",
        stroke: s.status === "error" ? "#b42318" : color, "stroke-width": s.span_id === selected ? 3 : 1.5 }),
      svg("text", { x: p.x + 8, y: p.y + 14, style: "font-weight: 600; fill: #1d2430", text: short(s.name, 27) }),
      svg("text", { x: p.x + 8, y: p.y + 27, text: sub }), svg("title", { text: s.name })));
  }
  return root;
}

// ---------------------------------------------------------------- start

async function openResultFile(file) {
  try {
    const text = await file.text();
    const out = await api("/api/results/open", { method: "POST", body: text });
    toast(`opened ${file.name}`);
    go(link("runs", out.run_id));
  } catch (err) { toast(`${file.name}: ${err.message}`, true); }
}

async function start() {
  $("#app-picker").addEventListener("change", (e) => { if (e.target.value) { S.session = null; go(link("app", e.target.value)); } });
  $("#open-file").addEventListener("change", (e) => { const f = e.target.files[0]; e.target.value = ""; if (f) openResultFile(f); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") closeDrawer(); });
  window.addEventListener("hashchange", route);
  try { await loadApps(); } catch (err) { replace($("#view"), h("div", { class: "page" }, errorBox(err))); return; }
  route();
}

start();
