/* An eval set: its cases, adding the chat session as a case, starting a run, its history. */

import { USER, api, qs, setPath } from "../api.js";
import { $, errorBox, h, replace, toast } from "../dom.js";
import { contentText, enc, short } from "../format.js";
import { go, link } from "../nav.js";
import { S } from "../state.js";
import { caseEditor } from "./case-editor.js";
import { expectedArgs, metricDialog } from "./metric-dialog.js";
import { runTable } from "./runs.js";

export async function evalSetView(main, app, setId, caseId) {
  /** @type {EvalSet} */
  const set = await api(setPath(app, setId));
  const cases = set.eval_cases;
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
  // every case of the set, the rows not drawn yet too: it ticked the 200 shown, and "Run
  // evaluation (200)…" ran those of a 500-case set whose every case was meant
  const all = h("input", { type: "checkbox", title: "select all", "aria-label": "select every case of the set", onchange: (e) => {
    for (const c of cases) { if (e.target.checked) selected.add(c.eval_id); else selected.delete(c.eval_id); }
    for (const box of rows.querySelectorAll("input[type=checkbox]")) box.checked = e.target.checked;
    count();
  } });
  const table = h("table", { class: "cases" }, h("thead", {}, h("tr", {}, h("th", {}, all), h("th", { text: "eval id" }),
    h("th", { text: "turns" }), h("th", { text: "first user message" }))), rows);
  let shown = 0;
  const more = h("button", { text: "Show more", onclick: () => showMore() });
  const showMore = () => {
    for (const c of cases.slice(shown, shown + 200)) {
      const box = h("input", { type: "checkbox", "data-case": c.eval_id, "aria-label": "select " + c.eval_id, checked: selected.has(c.eval_id), onchange: (e) => {
        if (e.target.checked) selected.add(c.eval_id); else selected.delete(c.eval_id);
        all.checked = selected.size === cases.length;
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
    more.textContent = `Show more (${shown} of ${cases.length} shown)`;
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
  const id = h("input", { id: "new-case-id", "aria-label": "new case id", value: caseIdFrom(s, cases) });
  const add = async () => {
    try {
      await api(`${setPath(app, setId)}/add-session`, { method: "POST", body: { eval_id: id.value.trim(), session_id: s.id, user_id: USER } });
      toast(`added session ${s.id} as ${id.value.trim()}`);
      go(link("app", app, "evalsets", setId, "cases", id.value.trim()));
    } catch (err) { toast(err.message, true); }
  };
  // the case gets the answered turns only (add-session leaves out those the agent failed)
  const answered = s.turns ? s.turns.filter((t) => !t.error).length : s.num_turns;
  const turns = answered === s.num_turns ? `${s.num_turns} turn${s.num_turns === 1 ? "" : "s"}` : `${answered} answered turn${answered === 1 ? "" : "s"} of ${s.num_turns}`;
  return h("div", { class: "card row" }, h("span", { text: "Current session " }), h("code", { text: s.id }),
    h("span", { text: ` (${turns}) as case` }), id,
    h("button", { id: "add-session", text: "Add current session", onclick: add }));
}

/** A new case's id from the session's first message, as ADK names cases ("What's the weather
 * in Paris?" → `whats_the_weather_in_paris`), made unique in the set; the session's id when
 * it has no message yet. @param {SessionView} s */
export function caseIdFrom(s, cases) {
  const first = s.turns && s.turns.length ? s.turns[0].user : "";
  const base = first.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f']/g, "").replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "").slice(0, 40).replace(/_+$/, "") || `case_${s.id.slice(0, 8)}`.replace(/[^\w-]/g, "_");
  const taken = new Set(cases.map((c) => c.eval_id));
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  return id;
}

/** The set's last runs; rebuilt when a run finishes while the set is on screen (the rest of
 * the page, a case being edited included, is left alone). */
async function setHistory(app, setId) {
  const box = h("div", { class: "set-history" });
  const fill = async () => {
    /** @type {Array<RunRow>} */
    const list = await api("/api/runs?" + qs({ app, eval_set: setId, limit: 10 }));
    replace(box, h("h3", { text: "Eval history of this set" }), list.length ? [runTable(list, false),
      h("p", {}, h("a", { href: `#/runs?app=${enc(app)}&eval_set=${enc(setId)}`, text: "All runs and trends →" }))]
      : h("p", { class: "muted", text: "No runs yet." }));
  };
  await fill();
  const fresh = () => {
    if (!box.isConnected) { window.removeEventListener("agenteval:run-finished", fresh); return; }
    fill().catch((err) => replace(box, errorBox(err)));
  };
  window.addEventListener("agenteval:run-finished", fresh);
  return box;
}
