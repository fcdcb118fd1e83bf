/* The sidebar of an agent's page: its Sessions, Eval, Trace and State tabs. */

import { api, apiPage, appPath, sessionsPath, setPath } from "../api.js";
import { errorBox, h, replace, toast } from "../dom.js";
import { enc, fmtTime, json, short } from "../format.js";
import { go, link, reroute, setQuery } from "../nav.js";
import { S } from "../state.js";
import { traceView } from "./trace.js";

/**
 * The user's sessions (`apiPage` of the sessions route).
 * @typedef {Object} SessionPage
 * @property {Array<SessionView>} items - the sessions that could be read
 * @property {Array<string>} unreadable - the session files left out: `file: message` each
 */

const TABS = [["sessions", "Sessions"], ["eval", "Eval"], ["trace", "Trace"], ["state", "State"]];

/** The side tabs' keys (`?tab=` of an agent's address). */
export const SIDE_TABS = TABS.map(([key]) => key);

export function renderSide(side, app, setId) {
  const body = h("div", { class: "tabbody" });
  const tabs = h("nav", { class: "tabs", role: "tablist" }, TABS.map(([key, label]) =>
    h("button", { class: S.sideTab === key ? "on" : "", role: "tab", "data-tab": key, text: label, "aria-selected": String(S.sideTab === key),
      onclick: () => { S.sideTab = key; setQuery("span", null); setQuery("tab", key === "sessions" ? null : key); renderSide(side, app, setId); } })));
  replace(side, tabs, body);
  const fill = { sessions: sessionsTab, eval: evalTab, trace: traceTab, state: stateTab }[S.sideTab];
  fill(body, app, setId).catch((err) => replace(body, errorBox(err)));
}

async function sessionsTab(body, app) {
  const model = h("input", { id: "model", list: "models", placeholder: "the agent's own", value: S.model, title: S.model || "the agent's own model",
    onchange: (e) => { S.model = e.target.value.trim(); localStorage.setItem("agenteval.model", S.model); } });
  const models = h("datalist", { id: "models" }, ["local", "openai:gpt-4o-mini", "ollama:qwen2.5:7b"].map((m) => h("option", { value: m })));
  body.append(h("div", { class: "row" }, h("button", { class: "primary", text: "New session",
    onclick: () => { S.session = null; go(link("app", app)); } })),
  h("h4", { text: "Model for new sessions" }), h("div", { class: "row" }, model, models),
  h("h4", { text: "Sessions" }));
  /** @type {SessionPage} */
  const listed = await apiPage(sessionsPath(app), "X-Unreadable-Sessions");
  const list = listed.items;
  if (listed.unreadable.length) body.append(errorBox("Not listed (their files cannot be read): " + listed.unreadable.join("; ")));
  if (!list.length) { body.append(h("p", { class: "muted", text: "No sessions yet: say something to the agent." })); return; }
  list.sort((a, b) => (b.created || 0) - (a.created || 0));
  body.append(h("ul", { class: "list sessions" }, list.map((s) => h("li", { class: S.session && S.session.id === s.id ? "on" : "" },
    h("a", { href: link("app", app, "chat", s.id), title: s.id, text: `${short(s.id, 18)} · ${s.num_turns} turn${s.num_turns === 1 ? "" : "s"}` }),
    h("span", { class: "muted", text: fmtTime(s.created) }),
    h("button", { class: "icon danger", title: "delete session", "data-delete": s.id, text: "✕", onclick: () => deleteSession(app, s) })))));
}

/** Deletes a session once the user confirms (its turns are gone for good: the question says how many). */
async function deleteSession(app, s) {
  if (!confirm(`Delete session ${s.id} (${s.num_turns} turn${s.num_turns === 1 ? "" : "s"})? This cannot be undone.`)) return;
  try { await api(`${sessionsPath(app)}/${enc(s.id)}`, { method: "DELETE" }); } catch (err) { toast(err.message, true); return; }
  toast(`deleted session ${short(s.id, 18)}`);
  if (S.session && S.session.id === s.id) { S.session = null; go(link("app", app)); } else reroute();
}

async function evalTab(body, app, setId) {
  const name = h("input", { placeholder: "new eval set id", "aria-label": "new eval set id", id: "new-set", pattern: "[A-Za-z0-9_\\-]+" });
  const create = async () => {
    const id = name.value.trim();
    if (!id) return;
    try { await api(setPath(app, id), { method: "POST" }); toast(`created eval set ${id}`); go(link("app", app, "evalsets", id)); }
    catch (err) { toast(err.message, true); }
  };
  body.append(h("div", { class: "row" }, name, h("button", { text: "Create eval set", onclick: create })),
    h("h4", { text: "Eval sets" }));
  /** @type {Array<string>} */
  const sets = await api(`${appPath(app)}/eval-sets`);
  if (!sets.length) body.append(h("p", { class: "muted", text: "No eval sets yet." }));
  body.append(h("ul", { class: "list evalsets" }, sets.map((s) => h("li", { class: s === setId ? "on" : "" },
    h("a", { href: link("app", app, "evalsets", s), text: s })))));
  body.append(h("p", {}, h("a", { href: "#/runs?app=" + enc(app), text: "Run history of " + app + " →" })));
}

async function traceTab(body) {
  const turns = (S.session && S.session.turns) || [];
  if (!turns.length) { body.append(h("p", { class: "muted", text: "The trace of the chat session shows here, grouped by user message." })); return; }
  const groups = turns.map((t, i) => ({ label: t.user, spans: t.trace ? t.trace.spans : [], target: `.turn[data-turn="${i}"]`, invocation: i }));
  body.append(traceView(groups, turns.flatMap((t) => t.agents || [])));
}

async function stateTab(body) {
  if (!S.session) { body.append(h("p", { class: "muted", text: "No session: the state of the chat session shows here." })); return; }
  body.append(h("dl", { class: "kv" }, h("dt", { text: "session" }), h("dd", { class: "mono", text: S.session.id }),
    h("dt", { text: "model" }), h("dd", { text: S.session.model || "the agent's own" }),
    h("dt", { text: "created" }), h("dd", { text: fmtTime(S.session.created) })),
  h("h4", { text: "State" }), h("pre", { class: "box", id: "session-state", text: json(S.session.state) }));
}
