/* The run history: filters, trends, the run table (also used by an eval set's history). */

import { api, apiPage, qs } from "../api.js";
import { chart, lineChart } from "../charts.js";
import { badge, errorBox, h, toast } from "../dom.js";
import { enc, fmt, fmtSecs, fmtTime } from "../format.js";
import { go, link, paint, parseHash, reroute, setQuery } from "../nav.js";
import { S } from "../state.js";

/**
 * A page of the run history (`apiPage` of /api/runs).
 * @typedef {Object} RunPage
 * @property {Array<RunRow>} items - the page's rows
 * @property {Array<string>} unreadable - the stores left out: `file: message` each
 */

/** Runs a page of the history lists. */
const PAGE = 50;

export async function showRuns(token, query) {
  const { app = "", eval_set = "", status = "" } = query;
  const offset = Number(query.offset || 0);
  const asked = api("/api/trends?" + qs({ app, eval_set })).catch(() => []); // both requests at once
  /** @type {RunPage} */
  // one row more than a page shows: whether there are older runs (50 exactly left "older →"
  // leading to an empty table)
  const listed = await apiPage("/api/runs?" + qs({ app, eval_set, status, limit: PAGE + 1, offset }));
  const rows = listed.items.slice(0, PAGE), older = listed.items.length > PAGE;
  /** @type {Array<TrendPoint>} */
  const trends = await asked;
  const f = { app: h("select", { name: "app", "aria-label": "agent" }, h("option", { value: "", text: "every agent" }), S.apps.map((a) => h("option", { value: a.name, text: a.name }))),
    eval_set: h("input", { name: "eval_set", "aria-label": "eval set id", placeholder: "eval set id", value: eval_set }),
    status: h("select", { name: "status", "aria-label": "status" }, ["", "passed", "failed", "not_evaluated"].map((s) => h("option", { value: s, text: s ? s.replace("_", " ") : "any status" }))) };
  f.app.value = app; f.status.value = status;
  const apply = (e) => {
    e.preventDefault();
    go("#/runs?" + qs(Object.fromEntries(Object.entries(f).map(([k, el]) => [k, el.value]))));
  };
  const page = h("div", { class: "page" }, h("h2", { text: "Run history" }),
    h("form", { class: "row card filters", onsubmit: apply }, f.app, f.eval_set, f.status, h("button", { class: "primary", text: "Filter" })));
  // a store that cannot be read is left out of the list: say which, or "No runs yet" would hide it
  if (listed.unreadable.length) page.append(errorBox("Not listed (their run history cannot be read): " + listed.unreadable.join("; ")));
  if (trends.length > 1) page.append(trendCharts(trends, !eval_set));
  const filtered = app || eval_set || status;
  // no runs: say so and where runs come from, rather than an empty table
  // the runs ticked to compare are kept in the address (`pick`): they stay ticked across pages
  page.append(rows.length ? runTable(rows, true, (query.pick || "").split(",").filter(Boolean)) : h("p", { class: "muted empty-runs", text: offset
    ? `No runs past the first ${offset}${filtered ? " matching these filters" : ""}.`
    : filtered ? "No runs match these filters."
      : "No runs yet: run an eval set from an agent's Eval tab, or with agenteval eval; every run is listed here." }));
  const nav = h("div", { class: "row", style: "margin-top: 8px" });
  // read from the address when followed: it holds the runs ticked since the page was drawn
  const to = (o) => { const q = new URLSearchParams(parseHash().query); q.set("offset", String(Math.max(0, o))); return "#/runs?" + q; };
  const pageLink = (o, text) => h("a", { class: "btn", href: to(o), text, onclick: (e) => { e.preventDefault(); go(to(o)); } });
  if (offset > 0) nav.append(pageLink(offset - PAGE, "← newer"));
  if (older) nav.append(pageLink(offset + PAGE, "older →"));
  page.append(nav);
  paint(token, page);
  // a run finished in this page's dock: list it (the view is rebuilt only while it is on screen)
  const fresh = () => { window.removeEventListener("agenteval:run-finished", fresh); if (page.isConnected && offset === 0) reroute(); };
  window.addEventListener("agenteval:run-finished", fresh);
  // runs recorded elsewhere (`agenteval collect` scoring live traffic, say) arrive as they are stored
  if (offset === 0) {
    const live = new EventSource("/api/runs/live");
    const watch = setInterval(() => { if (!page.isConnected) { live.close(); clearInterval(watch); } }, 1000);
    live.onmessage = () => { live.close(); clearInterval(watch); if (page.isConnected) reroute(); };
  }
}

/** The id a run is known by: the run id `agenteval eval` prints (its documents share it), else
 * the document's own id. @param {RunRow} r */
export function runLabel(r) { return r.run_group || r.run_id; }

/** Run rows; with `pick`, two checkboxes choose the runs to compare: the older is the baseline,
 * whichever was ticked first (the compare page's Swap turns it round). `picked`: the runs
 * ticked already (on this page or another), kept in the address's `pick`.
 * @param {Array<RunRow>} rows
 * @param {boolean} pick
 * @param {Array<string>} [picked] */
export function runTable(rows, pick, picked = []) {
  const chosen = picked.slice(0, 2);
  const label = () => chosen.length ? `Compare selected (${chosen.length} of 2 picked)` : "Compare selected (pick 2)";
  const cmp = h("button", { id: "compare-selected", text: label(), disabled: chosen.length !== 2, onclick: async () => {
    // a run ticked on another page is not among these rows: when each was recorded is asked
    /** @type {Array<RunView>} */
    try {
      const runs = await Promise.all(chosen.map((id) => api(`/api/runs/${enc(id)}`)));
      const [old, young] = runs.sort((x, y) => x.created - y.created);
      go(link("compare", old.run_id, young.run_id));
    } catch (err) { toast("Not compared: " + err.message, true); }
  } });
  // cases not evaluated apart from failed ones, as `agenteval runs` lists them: a column when a row has such a case
  const unevaluated = rows.some((r) => r.cases_not_evaluated);
  const body = rows.map((r) => {
    const rate = r.cases_total ? r.cases_passed / r.cases_total : null;
    const box = pick ? h("input", { type: "checkbox", "data-run": r.run_id, "aria-label": "pick " + r.run_id, checked: chosen.includes(r.run_id), onchange: (e) => {
      if (e.target.checked) chosen.push(r.run_id); else chosen.splice(chosen.indexOf(r.run_id), 1);
      cmp.disabled = chosen.length !== 2;
      cmp.textContent = label();
      setQuery("pick", chosen.join(","));
    } }) : null;
    return h("tr", {}, pick ? h("td", {}, box) : null,
      h("td", {}, h("a", { href: link("runs", r.run_id), class: "mono", title: `document ${r.run_id}`, text: runLabel(r) })),
      h("td", { text: fmtTime(r.created) }), h("td", { text: r.agent || "–" }), h("td", { text: r.eval_set_id }),
      h("td", {}, badge(r.status)),
      h("td", { text: `${r.cases_passed}/${r.cases_total}` + (r.num_runs > 1 ? ` ×${r.num_runs}` : "") }),
      unevaluated ? h("td", { class: "not-evaluated", text: r.cases_not_evaluated }) : null,
      h("td", { text: rate === null ? "–" : Math.round(rate * 100) + "%" }),
      h("td", { text: fmtSecs(r.duration_seconds) }), h("td", { text: fmt(r.total_tokens, 0) }),
      h("td", { class: "muted", text: [r.agent_model, r.judge_model].filter(Boolean).join(" / ") || "–" }));
  });
  const head = ["run", "created", "agent", "eval set", "verdict", "passed", ...(unevaluated ? ["not evaluated"] : []), "rate", "time", "tokens", "models"];
  const table = h("div", { class: "table-wrap" }, h("table", { class: "runs" }, h("thead", {}, h("tr", {}, pick ? h("th") : null, head.map((t) => h("th", { text: t })))), h("tbody", {}, body)));
  return pick ? h("div", {}, h("div", { class: "row", style: "margin: 6px 0" }, cmp), table) : table;
}

/** Pass rate and mean score per criterion, one point per run, oldest first.
 * @param {Array<TrendPoint>} trends
 * @param {boolean} mixed */
function trendCharts(trends, mixed) {
  const names = [...new Set(trends.flatMap((t) => Object.keys(t.criteria)))];
  const series = [{ name: "pass rate", values: trends.map((t) => t.pass_rate) },
    ...names.map((n) => ({ name: n, values: trends.map((t) => t.criteria[n] ?? null) }))];
  return h("div", { class: "card" }, h("h3", { text: "Trends across the run history" + (mixed ? " (filter by eval set to compare like with like)" : "") }),
    h("div", { class: "charts" }, chart("Pass rate and mean score per criterion", lineChart(series, trends.map((t) => t.run_id), 640, 200), series)));
}
