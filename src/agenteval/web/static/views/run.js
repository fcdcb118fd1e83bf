/* One run: its summary, why cases failed, charts and the case table, a page at a time. */

import { api, apiPage, qs } from "../api.js";
import { COLORS, barChart, chart, histogram } from "../charts.js";
import { badge, errorBox, h, kvs, replace, toast } from "../dom.js";
import { INFORMATIONAL, enc, fmt, fmtSecs, fmtTime, oneLine, short, statusClass, statusOf } from "../format.js";
import { go, link, paint, reroute, showAgent } from "../nav.js";
import { loadReviews, reviewKey, reviewMark } from "./review.js";
import { runLabel } from "./runs.js";

const PAGE = 100; // rows fetched per page of a run: a 10,000-case run is never shipped whole

/**
 * A page of a run's case runs (`apiPage` of /api/runs/{run_id}/cases).
 * @typedef {Object} CasePage
 * @property {Array<CaseRow>} items - the page's rows
 * @property {number} total - the case runs that match
 */

/** Deletes the run's document from the history (`agenteval runs delete` does the same), once
 * confirmed: what goes is named first, its reviews too. A run being written is refused (409). */
async function deleteRun(run) {
  const label = runLabel(run);
  const doc = run.run_group && run.run_group !== run.run_id ? ` (document ${run.run_id})` : "";
  if (!confirm(`Delete run ${label}${doc}: eval set ${run.eval_set_id}, ${run.counts.total} case${run.counts.total === 1 ? "" : "s"}, with its result document and reviews? This cannot be undone.`)) return;
  try {
    /** @type {DeletedRunView} */
    const done = await api(`/api/runs/${enc(run.run_id)}`, { method: "DELETE" });
    toast(`run ${label} deleted` + (done.reviews ? `, with ${done.reviews} review${done.reviews === 1 ? "" : "s"}` : "")
      + (done.kept.length ? `; its document ${done.kept.join(", ")} was written outside the history and is left` : ""));
    go(link("runs"));
  } catch (err) { toast(err.message, true); }
}

export async function showRun(token, runId, query) {
  const status = query.status || "";
  /** @type {RunView|JobView} */
  const run = await api(`/api/runs/${enc(runId)}`);
  if (run.state !== "finished") return paint(token, unfinishedRun(runId, run));
  const id = run.run_id;
  const reviewed = loadReviews(id).catch(() => new Map()); // asked with the first page, not after it
  /** @type {CasePage} */
  const first = await apiPage(casesUrl(id, 0, status));
  const reviews = await reviewed;
  const spec = run.header;
  const counts = run.counts;
  const cases = [...first.items];
  const total = first.total;
  const names = run.criteria; // gating criteria first, as the server orders them
  const failing = run.cases; // the cases that did not pass, each with why
  const page = h("div", { class: "page run" });
  showAgent(run.app);
  page.append(h("div", { class: "row" }, h("h2", { class: "grow" }, "Run ", h("span", { class: "mono", text: runLabel(run) }),
    run.run_group && run.run_group !== id ? h("span", { class: "muted small", text: ` · document ${id}` }) : null),
    h("a", { class: "btn", id: "explore", href: link("runs", id, "explore"), text: "Search, groups & review" }),
    h("a", { class: "btn", href: `/api/runs/${enc(id)}/export`, download: `${id}.html`, id: "export", text: "Export HTML" }),
    compareMenu(id, run),
    h("button", { class: "danger", id: "delete-run", text: "Delete run…", onclick: () => deleteRun(run) })),
  h("div", { class: "card" }, h("dl", { class: "kv" }, kvs({
    agent: run.agent, "eval set": run.eval_set_id, command: spec ? spec.command : null,
    created: fmtTime(run.created), "agent model": run.agent_model, "judge model": run.judge_model,
    runs: run.num_runs > 1 ? `${run.num_runs} per case (gating: ${run.gating})` : null,
    time: fmtSecs(run.duration_seconds), tokens: fmt(run.total_tokens, 0),
    criteria: spec && spec.config.criteria ? oneLine(spec.config.criteria) : null })),
  h("div", { class: "row", style: "margin-top: 8px" }, badge("passed", `${counts.passed} passed`),
    badge("failed", `${counts.failed} failed`), counts.not_evaluated ? badge(3, `${counts.not_evaluated} not evaluated`) : null,
    h("span", { class: "muted", text: `${counts.total} cases`
      + (counts.max_runs > 1 ? `, up to ${counts.max_runs} runs each` : "") }))));
  if (failing.length) {
    const all = run.cases_not_passed;
    const title = "Why cases did not pass" + (all > failing.length ? ` (first ${failing.length} of ${all})` : "");
    page.append(h("div", { class: "card failing" }, h("h3", { text: title }), h("ul", {}, failing.map((f) =>
      h("li", {}, h("a", { href: link("runs", id, "cases", f.eval_id), text: f.eval_id }), ": ", f.problems.join("; "))))));
  }
  const charts = h("div", { class: "charts" });
  const filter = h("select", { id: "status-filter", "aria-label": "show cases", onchange: (e) => go(link("runs", id) + (e.target.value ? "?status=" + e.target.value : "")) },
    ["", "passed", "failed", "not_evaluated"].map((s) => h("option", { value: s, text: s ? s.replace("_", " ") : "every case" })));
  filter.value = status;
  const tbody = h("tbody");
  const more = h("button", { text: "Load more" });
  const loaded = h("span", { class: "muted" });
  const addRows = (list) => {
    for (const c of list) tbody.append(caseRow(id, c, names, reviews));
    loaded.textContent = `${cases.length} of ${total} case runs shown`;
    more.hidden = cases.length >= total;
    replace(charts, runCharts(cases, names));
  };
  more.addEventListener("click", async () => {
    more.disabled = true;
    /** @type {CasePage} */
    const next = await apiPage(casesUrl(id, cases.length, status));
    cases.push(...next.items);
    addRows(next.items);
    more.disabled = false;
  });
  page.append(h("h3", { text: "Charts" }), charts,
    h("div", { class: "row", style: "margin: 14px 0 6px" }, h("h3", { class: "grow", style: "margin: 0", text: "Cases" }), filter, loaded),
    // a column a criterion: in a narrow window the table scrolls sideways, not the whole page
    h("div", { class: "cases-wrap" }, h("table", { class: "cases" },
      h("thead", {}, h("tr", {}, ["case", "run", "verdict", ...names].map((t) => h("th", { text: t })))), tbody)), more);
  addRows(cases);
  page.append(h("p", { class: "muted small", text: "Keys: j / k next / previous case that did not pass, Enter opens it." }));
  paint(token, page);
  failureKeys(page, tbody);
}

/** j / k move between the loaded rows that did not pass (marked, scrolled to), Enter opens the
 * marked one; not while typing, and gone with the page (`page`, holding the rows' `tbody`). */
function failureKeys(page, tbody) {
  const keys = (e) => {
    if (!page.isConnected) return document.removeEventListener("keydown", keys);
    if (e.target instanceof HTMLElement && e.target.closest("input, select, textarea") || e.metaKey || e.ctrlKey || e.altKey) return;
    const rows = [...tbody.querySelectorAll("tr[data-status]:not([data-status=passed])")];
    const at = rows.findIndex((r) => r.classList.contains("sel"));
    // Enter on a focused link or button is that control's; on the page it opens the marked row
    if (e.key === "Enter" && at >= 0 && !(e.target instanceof HTMLElement && e.target.closest("a, button"))) { const a = rows[at].querySelector("a"); if (a) go(a.getAttribute("href")); return; }
    if ((e.key !== "j" && e.key !== "k") || !rows.length) return;
    const next = rows[e.key === "j" ? (at + 1) % rows.length : (at <= 0 ? rows.length : at) - 1];
    for (const r of tbody.querySelectorAll("tr.sel")) r.classList.remove("sel");
    next.classList.add("sel");
    next.scrollIntoView({ block: "nearest" });
  };
  document.addEventListener("keydown", keys);
}

/** A run this server started that is not recorded yet (or never will be): its state, and its
 * documents once there are some.
 * @param {string} runId
 * @param {JobView} run */
function unfinishedRun(runId, run) {
  const docs = run.result_ids;
  return h("div", { class: "page" }, h("h2", {}, "Run ", h("span", { class: "mono", text: runId })),
    h("div", { class: "card" }, h("p", {}, "This run is ", h("strong", { text: run.state }), "."),
      run.error ? errorBox(new Error(run.error)) : null,
      docs.map((d) => h("p", {}, h("a", { href: link("runs", d), text: "Results " + d }))),
      h("button", { text: "Reload", onclick: () => reroute() })));
}

function casesUrl(runId, offset, status) {
  return `/api/runs/${enc(runId)}/cases?offset=${offset}&limit=${PAGE}` + (status ? "&status=" + enc(status) : "");
}

/** A case row: each criterion's cell is coloured by that criterion's own status; the verdicts
 * people reviewed carry their mark.
 * @param {string} runId
 * @param {CaseRow} c
 * @param {Array<string>} names
 * @param {Map<string, ReviewView>} reviews */
function caseRow(runId, c, names, reviews) {
  const byName = Object.fromEntries(c.metrics.map((m) => [m.name, m]));
  const href = link("runs", runId, "cases", c.eval_id) + (c.run_index ? "/run/" + c.run_index : "");
  const review = (target) => reviews.get(reviewKey(c.eval_id, c.run_index, target));
  return h("tr", { "data-case": c.eval_id, "data-status": c.status }, h("td", {}, h("a", { href, text: c.eval_id }), c.error ? h("div", { class: "muted", text: short(c.error, 80) }) : null,
    c.warnings.length ? h("div", { class: "muted warned", title: c.warnings.join("\n"), text: `⚠ ${c.warnings.length === 1 ? short(c.warnings[0], 80) : c.warnings.length + " warnings"}` }) : null),
    h("td", { text: c.run_index }), h("td", {}, badge(c.status), reviewMark(review(""))),
    names.map((n) => {
      const m = byName[n];
      if (!m) return h("td", { class: "muted", text: "–" });
      const judge = m.certificate ? `\njudge ${m.certificate}` : "";
      return h("td", { class: statusClass(m.status), title: `${n}: ${m.reason ?? `${fmt(m.score)} (threshold ${fmt(m.threshold)}), ${statusOf(m.status)}`}${judge}` },
        fmt(m.score), reviewMark(review(n)));
    }));
}

/** Score distributions per gating criterion, latency and tokens per case, over the rows loaded.
 * @param {Array<CaseRow>} cases
 * @param {Array<string>} names */
function runCharts(cases, names) {
  const out = [];
  for (const n of names.filter((x) => !INFORMATIONAL.has(x))) {
    const scores = cases.map((c) => c.metrics.find((m) => m.name === n)).filter((m) => m && typeof m.score === "number").map((m) => m.score);
    if (scores.length) out.push(chart(`${n}: score distribution (${scores.length} scores)`, barChart(histogram(scores), 260, 130, "", ["0", "0.5", "1"])));
  }
  // each case run's totals (its turns summed), the figures the run's header adds up
  const label = (c) => c.eval_id + (c.run_index ? ` run ${c.run_index}` : "");
  const lat = cases.slice(0, 200).map((c) => ({ label: label(c), value: c.seconds }));
  const tok = cases.slice(0, 200).map((c) => ({ label: label(c), value: c.tokens }));
  if (lat.some((x) => x.value)) out.push(chart("Latency per case (s, all turns)", barChart(lat, 300, 120, " s")));
  if (tok.some((x) => x.value)) out.push(chart("Tokens per case (all turns)", barChart(tok.map((t) => ({ ...t, color: COLORS[4] })), 300, 120, "")));
  return out.length ? out : [h("p", { class: "muted", text: "No scores to chart." })];
}

/** @param {string} id
 * @param {RunView} run */
function compareMenu(id, run) {
  const sel = h("select", { id: "compare-with", "aria-label": "compare with" }, h("option", { value: "", text: "Compare with…" }));
  // the set's newest runs and the runs just before this one (its baselines: an old run of a long
  // history has none among the newest), newest first
  const asked = [{}, { before: run.created }].map((more) => api("/api/runs?" + qs({ eval_set: run.eval_set_id, app: run.app, limit: 50, ...more })));
  Promise.all(asked).then((/** @type {Array<Array<RunRow>>} */ [newest, earlier]) => {
    const seen = new Set([id]);
    for (const r of [...newest, ...earlier].sort((x, y) => y.created - x.created)) {
      if (seen.has(r.run_id)) continue;
      seen.add(r.run_id);
      sel.append(h("option", { value: r.run_id, "data-created": r.created, text: `${runLabel(r)} · ${fmtTime(r.created)} (${r.cases_passed}/${r.cases_total})` }));
    }
  }).catch(() => {});
  // the older of the two is the baseline
  sel.addEventListener("change", () => {
    if (!sel.value) return;
    const other = Number(sel.selectedOptions[0].dataset.created);
    go(other <= run.created ? link("compare", sel.value, id) : link("compare", id, sel.value));
  });
  return sel;
}
