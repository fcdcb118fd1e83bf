/* Exploring one run: its failing cases grouped by what failed, flaky cases across the history,
 * search / filter / sort over its cases (j / k jump between failures, Enter opens one), a human
 * review of each case's verdict, and re-running a case (again, or with another agent or judge
 * model) to see both side by side. Address: #/runs/<id>/explore?<filters>. */

import { api, qs, setPath } from "../api.js";
import { badge, h, replace, toast } from "../dom.js";
import { enc, fmt, fmtSecs, short } from "../format.js";
import { go, link, paint, setQuery, showAgent } from "../nav.js";
import { matrixLink } from "./matrix.js";
import { loadReviews, reviewControls, reviewKey } from "./review.js";

const FILTERS = ["text", "status", "criterion", "tool", "argument", "error", "min_score", "max_score", "sort", "descending"];

export async function showExplore(token, runId, query) {
  /** @type {RunView|JobView} */
  const run = await api(`/api/runs/${enc(runId)}`);
  if (run.state !== "finished") return go(link("runs", runId));
  showAgent(run.app);
  const id = run.run_id;
  const [groups, reviews] = await Promise.all([
    api(`/api/runs/${enc(id)}/groups`).then((/** @type {Array<FailureGroupView>} */ g) => g),
    loadReviews(id)]);
  const page = h("div", { class: "page explore" });
  /** @type {Array<RunRow>} */
  const earlier = await api("/api/runs?" + qs({ app: run.app, eval_set: run.eval_set_id, limit: 50 })).catch(() => []);
  const older = earlier.filter((r) => r.created < run.created).slice(0, 2).map((r) => r.run_id).reverse();
  page.append(h("p", {}, h("a", { href: link("runs", runId), text: "← run " + (run.run_group || id) })),
    h("div", { class: "row" }, h("h2", { class: "grow", text: "Explore run " + (run.run_group || id) }),
      older.length ? h("a", { class: "btn", id: "open-matrix", href: matrixLink([...older, id]), text: `Matrix with ${older.length} earlier run${older.length > 1 ? "s" : ""}` }) : null));
  const flaky = flakyCard(run);
  page.append(groupsCard(groups, id), flaky.card);
  const results = h("div", { class: "search-results" });
  const form = filterForm(query, () => refresh());
  page.append(h("div", { class: "card" }, h("h3", { text: "Search the cases" }), form.node,
    h("p", { class: "muted small", text: "Keys: j / k next / previous failing case, Enter opens it." }), results));
  let rows = [];
  let at = -1;
  // a repeated case's seconds and tokens are its runs' sums (`CaseFacts`): said in the heading,
  // or 0.25 s read as one run's latency where the case page shows 0.18 s
  const over = run.num_runs > 1 ? " (all runs)" : "";
  const refresh = async () => {
    const values = form.values();
    for (const k of FILTERS) setQuery(k, values[k]);
    // a score the number box cannot hold reads as empty: searching without it would look like
    // the filter matched everything
    const bad = form.unreadable();
    if (bad.length) return replace(results, h("p", { class: "bad", role: "alert", text: `Not searched: ${bad.join("; ")}.` }));
    /** @type {CaseSearch} */
    const found = await api(`/api/runs/${enc(id)}/search?` + qs({ ...values, limit: 500 }));
    form.offer(found);
    rows = found.cases.map((c) => caseRow(run, c, reviews));
    at = -1;
    replace(results, h("p", { class: "muted", id: "search-count", text: `${found.total} of ${run.counts.total} cases` + (found.total > found.cases.length ? ` (first ${found.cases.length})` : "") }),
      h("div", { class: "table-wrap" }, h("table", { class: "cases search" }, h("thead", {}, h("tr", {}, ["case", "verdict", "score", "latency" + over, "tokens" + over, "failing", "review", ""].map((t) => h("th", { text: t })))),
        h("tbody", {}, rows.map((r) => r.node)))));
  };
  const jump = (step) => {
    const failing = rows.map((r, i) => [r, i]).filter(([r]) => r.failing);
    if (!failing.length) return;
    const next = step > 0 ? failing.find(([, i]) => i > at) || failing[0] : [...failing].reverse().find(([, i]) => i < at) || failing[failing.length - 1];
    for (const r of rows) r.node.classList.remove("sel");
    at = next[1];
    next[0].node.classList.add("sel");
    next[0].node.scrollIntoView({ block: "nearest" });
  };
  const keys = (e) => {
    if (!page.isConnected) return document.removeEventListener("keydown", keys);
    if (e.target instanceof HTMLElement && e.target.closest("input, select, textarea") || e.metaKey || e.ctrlKey || e.altKey) return;
    if (e.key === "j") jump(1);
    else if (e.key === "k") jump(-1);
    else if (e.key === "Enter" && at >= 0) go(rows[at].href);
  };
  document.addEventListener("keydown", keys);
  await refresh();
  paint(token, page);
  flaky.load(); // over the eval set's history: asked once the cases are on screen
}

/** The filter form: its fields from the address, and the run's facets offered as choices. */
function filterForm(query, onChange) {
  const select = (name, first) => h("select", { name, "aria-label": name }, h("option", { value: "", text: first }));
  const f = {
    text: h("input", { name: "text", type: "search", placeholder: "prompt or answer text…", "aria-label": "search text" }),
    status: h("select", { name: "status", "aria-label": "status" }, ["", "passed", "failed", "not_evaluated"].map((s) => h("option", { value: s, text: s ? s.replace("_", " ") : "any verdict" }))),
    criterion: select("criterion", "any failing criterion"), tool: select("tool", "any tool"),
    argument: h("input", { name: "argument", placeholder: "tool.arg[=value]", list: "arg-names", "aria-label": "argument" }),
    error: select("error", "any error"),
    min_score: h("input", { name: "min_score", type: "number", step: "0.05", min: "0", max: "1", placeholder: "score ≥", class: "num", "aria-label": "lowest score" }),
    max_score: h("input", { name: "max_score", type: "number", step: "0.05", min: "0", max: "1", placeholder: "score ≤", class: "num", "aria-label": "highest score" }),
    sort: h("select", { name: "sort", "aria-label": "sort" }, [["position", "case order"], ["score", "by score"], ["latency", "by latency"], ["tokens", "by tokens"]].map(([v, t]) => h("option", { value: v, text: t }))),
    descending: h("input", { type: "checkbox", name: "descending", "aria-label": "descending" }),
  };
  const names = h("datalist", { id: "arg-names" });
  const offered = new Set();
  /** What the address gave a score box that it could not hold (a number box drops "abc"). */
  const given = {};
  for (const k of FILTERS) {
    const el = f[k];
    if ((k === "min_score" || k === "max_score") && query[k] && !Number.isFinite(Number(query[k]))) given[k] = query[k];
    if (k === "descending") el.checked = query.descending === "true";
    else if (query[k]) { if (el.tagName === "SELECT" && !el.querySelector(`option[value="${CSS.escape(query[k])}"]`)) el.append(h("option", { value: query[k], text: query[k] })); el.value = query[k]; }
    el.addEventListener("input", () => { delete given[k]; });
    if (k === "min_score" || k === "max_score") {
      // A number box holding what is not a number reads "" and fires no change (nor does
      // emptying it then): it searches as typed while readable ("0." is not, on the way to
      // "0.5") and says what is wrong when left unreadable.
      const box = /** @type {HTMLInputElement} */ (el), later = debounce(onChange, 250);
      box.addEventListener("input", () => { if (!box.validity.badInput) later(); });
      box.addEventListener("blur", () => { if (box.validity.badInput) onChange(); });
      continue;
    }
    el.addEventListener(k === "text" || k === "argument" ? "input" : "change", debounce(onChange, k === "text" || k === "argument" ? 250 : 0));
  }
  const node = h("form", { class: "row filters", onsubmit: (e) => { e.preventDefault(); onChange(); } },
    f.text, f.status, f.criterion, f.tool, f.argument, names, f.error, f.min_score, f.max_score, f.sort, h("label", { class: "row" }, f.descending, "descending"),
    h("button", { type: "button", text: "Clear", onclick: () => { for (const k of Object.keys(given)) delete given[k]; for (const k of FILTERS) { if (k === "descending") f[k].checked = false; else f[k].value = k === "sort" ? "position" : ""; } onChange(); } }));
  return {
    node,
    values: () => Object.fromEntries(FILTERS.map((k) => [k, k === "descending" ? (f[k].checked ? "true" : "") : k === "sort" && f[k].value === "position" ? "" : given[k] ?? f[k].value])),
    /** The score boxes holding what is not a number: from the address (quoted), or typed (the
     * browser does not give a number box's bad text: `validity.badInput`). */
    unreadable: () => ["min_score", "max_score"].flatMap((k) => given[k] !== undefined ? [`${k} ${JSON.stringify(given[k])} is not a number`]
      : /** @type {HTMLInputElement} */ (f[k]).validity.badInput ? [`${k} is not a number`] : []),
    /** @param {CaseSearch} found */
    offer: (found) => {
      for (const [k, list] of [["criterion", found.criteria], ["tool", found.tools], ["error", found.errors]]) {
        for (const v of list) if (!offered.has(k + v) && !f[k].querySelector(`option[value="${CSS.escape(v)}"]`)) { offered.add(k + v); f[k].append(h("option", { value: v, text: v })); }
      }
      replace(names, found.arguments.map((a) => h("option", { value: a })));
    },
  };
}

function debounce(fn, ms) {
  let t = 0;
  return () => { clearTimeout(t); t = setTimeout(fn, ms); };
}

/** @param {RunView} run @param {CaseHit} c @param {Map<string, ReviewView>} reviews */
function caseRow(run, c, reviews) {
  const href = link("runs", run.run_id, "cases", c.eval_id);
  const node = h("tr", { "data-case": c.eval_id },
    h("td", {}, h("a", { href, text: c.eval_id }), c.errors.length ? h("div", { class: "muted small", text: c.errors.join(", ") }) : null),
    h("td", {}, badge(c.status)), h("td", { class: "mono", text: fmt(c.score) }), h("td", { class: "mono", text: fmtSecs(c.seconds) }),
    h("td", { class: "mono", text: fmt(c.tokens, 0) }), h("td", { class: "small", text: c.failing.join(", ") }),
    h("td", {}, reviewControls(run.run_id, c.eval_id, 0, "", reviews.get(reviewKey(c.eval_id, 0, "")))),
    h("td", {}, run.app ? h("button", { class: "rerun", text: "Re-run…", onclick: (e) => rerunForm(run, c.eval_id, e.target) }) : null));
  return { node, href, failing: c.status !== "passed" };
}

/** @param {Array<FailureGroupView>} groups @param {string} runId */
function groupsCard(groups, runId) {
  if (!groups.length) return h("div", { class: "card groups" }, h("h3", { text: "Failure groups" }), h("p", { class: "muted", text: "No case failed." }));
  return h("div", { class: "card groups" }, h("h3", { text: "Failure groups" }), h("ul", {}, groups.map((g) => h("li", { "data-reason": g.reason },
    h("strong", { text: `${g.eval_ids.length} case${g.eval_ids.length > 1 ? "s" : ""}: ` }), h("span", { class: "reason" }, codeSpans(g.reason)), " — ",
    g.eval_ids.slice(0, 12).map((e, i) => [i ? ", " : "", h("a", { href: link("runs", runId, "cases", e), text: e })]),
    g.eval_ids.length > 12 ? ` … and ${g.eval_ids.length - 12} more` : ""))));
}

/** A group's reason as nodes: its `backquoted` names as code, the rest as text (no other markup:
 * names like final_response_match_v2 hold underscores that are not emphasis). */
function codeSpans(text) {
  const parts = text.split("`");
  if (parts.length % 2 === 0) return [text]; // an unpaired backquote: the text as it is
  return parts.map((part, i) => (i % 2 ? h("code", { text: part }) : part)).filter((p) => p !== "");
}

/** The flaky-cases card, and the function filling it. @param {RunView} run */
function flakyCard(run) {
  const card = h("div", { class: "card flaky" }, h("h3", { text: "Flaky cases across the history" }), h("p", { class: "muted", text: "Loading…" }));
  const load = () => api("/api/flaky?" + qs({ app: run.app, eval_set: run.eval_set_id })).then((/** @type {Array<FlakyView>} */ list) => {
    replace(card, h("h3", { text: "Flaky cases across the history" }), list.length ? h("table", {}, h("thead", {}, h("tr", {}, ["case", "passed", "pass rate", "flip rate", "runs"].map((t) => h("th", { text: t })))),
      h("tbody", {}, list.slice(0, 20).map((f) => h("tr", { "data-case": f.eval_id }, h("td", { text: f.eval_id }), h("td", { text: `${f.passed} / ${f.runs}` }),
        h("td", { text: fmt(f.pass_rate) }), h("td", { text: fmt(f.flip_rate) }), h("td", { text: f.stored_runs })))))
      : h("p", { class: "muted", text: "No case both passed and failed in this eval set's stored runs." }));
  }).catch((err) => replace(card, h("p", { class: "muted", text: short(err.message, 200) })));
  return { card, load };
}

/** Re-run one case (same criteria; optionally another agent or judge model), then open it
 * beside this run in the matrix.
 * @param {RunView} run @param {string} evalId @param {*} button */
function rerunForm(run, evalId, button) {
  const cell = button.closest("td");
  const agent = h("input", { name: "agent_model", placeholder: "agent model (same)", "aria-label": "agent model" });
  const judge = h("input", { name: "judge_model", placeholder: "judge model (same)", "aria-label": "judge model", value: run.judge_model || "" });
  const start = h("button", { class: "primary", text: "Run", onclick: async () => {
    start.disabled = true;
    const criteria = run.header && run.header.config.criteria ? run.header.config.criteria : null;
    try {
      /** @type {JobView} */
      const job = await api(`${setPath(run.app, run.eval_set_id)}/run`, { method: "POST", body: {
        eval_ids: [evalId], criteria, agent_model: agent.value || null, judge_model: judge.value || null } });
      toast(`re-running ${evalId}…`);
      const done = await finished(job.run_id);
      go(matrixLink([run.run_id, done], { cases: evalId }));
    } catch (err) { toast(err.message, true); start.disabled = false; }
  } });
  replace(cell, h("div", { class: "rerun-form" }, agent, judge, start));
  agent.focus();
}

/** Waits for a run started here to be recorded; its document id. @param {string} runId */
async function finished(runId) {
  for (;;) {
    /** @type {RunView|JobView} */
    const r = await api(`/api/runs/${enc(runId)}`);
    if (r.state === "finished" && "counts" in r) return r.run_id;
    if (r.state === "failed" || r.state === "cancelled") throw new Error(`the re-run ${r.state}` + ("error" in r && r.error ? `: ${r.error}` : ""));
    await new Promise((ok) => setTimeout(ok, 500));
  }
}
