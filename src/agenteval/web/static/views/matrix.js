/* The run matrix: N runs side by side (cases as rows, runs as columns; a repeated run has a
 * column per repeat, "run · #k", or the repeat picked), each cell the answer and tool calls with
 * the diff against the column to its left; "only changed" keeps the cases whose output changed
 * (between repeats too); a verdict people reviewed carries its marks (✓ / ✗, the comment on hover),
 * as on the run's case table. Address: #/matrix?runs=a,b,c[&changed=1][&cases=x,y][&index=k]. */

import { api, qs } from "../api.js";
import { badge, h } from "../dom.js";
import { fmt, fmtTime, short } from "../format.js";
import { go, link, paint, showAgent } from "../nav.js";
import { S } from "../state.js";
import { loadReviews, reviewKey, reviewMark } from "./review.js";

/** The matrix page's address. @param {Array<string>} runs @param {Object<string, string>} [extra] */
export function matrixLink(runs, extra = {}) { return "#/matrix?" + qs({ runs: runs.join(","), ...extra }); }

export async function showMatrix(token, query) {
  const runs = (query.runs || "").split(",").filter(Boolean);
  const changed = query.changed === "1";
  const cases = (query.cases || "").split(",").filter(Boolean);
  const index = query.index || "";
  const keep = () => ({ changed: changed ? "1" : "", cases: cases.join(","), index });
  const page = h("div", { class: "page matrix-page" }, h("h2", { text: "Run matrix" }));
  if (!runs.length) {
    page.append(h("p", { class: "muted", text: "Pick runs to put side by side: open a run, choose “Search, groups & review”, then “Matrix with earlier runs”." }));
    return paint(token, page);
  }
  const params = new URLSearchParams();
  for (const r of runs) params.append("runs", r);
  for (const c of cases) params.append("eval_id", c);
  if (changed) params.set("changed_only", "true");
  if (index) params.set("run_index", index);
  params.set("limit", "500");
  // each run's reviews, asked with the matrix (a run whose reviews cannot be read shows none)
  const reviewed = Promise.all(runs.map((r) => loadReviews(r).catch(() => new Map())));
  /** @type {MatrixView} */
  const m = await api("/api/matrix?" + params);
  const byRun = new Map((await reviewed).map((reviews, k) => [runs[k], reviews]));
  const toggle = h("label", { class: "row" }, h("input", { type: "checkbox", id: "only-changed", checked: changed,
    onchange: (e) => go(matrixLink(runs, { ...keep(), changed: e.target.checked ? "1" : "" })) }), "only cases whose output changed");
  const repeats = Math.max(...m.columns.map((c) => c.run_indices));
  const repeat = repeats > 1 ? h("select", { id: "run-index", title: "repeated runs: every repeat as its own column, or one of them" },
    h("option", { value: "", text: "every repeat" }), [...Array(repeats).keys()].map((k) => h("option", { value: String(k), text: `repeat #${k} only` }))) : null;
  if (repeat) { repeat.value = index; repeat.addEventListener("change", () => go(matrixLink(runs, { ...keep(), index: repeat.value }))); }
  const picker = h("select", { id: "add-run", "aria-label": "add a run" }, h("option", { value: "", text: "Add a run…" }));
  picker.addEventListener("change", () => { if (picker.value) go(matrixLink([...runs, picker.value], keep())); });
  api(`/api/runs/${encodeURIComponent(runs[0])}`).then(async (/** @type {RunView|JobView} */ first) => {
    if (token === S.route) showAgent(first.app); // the agent of the page (a deep link says none)
    if (first.state !== "finished") return;
    /** @type {Array<RunRow>} */
    const rows = await api("/api/runs?" + qs({ app: first.app, eval_set: first.eval_set_id, limit: 50 }));
    for (const r of rows) if (!runs.includes(r.run_id)) picker.append(h("option", { value: r.run_id, text: `${r.run_group || r.run_id} · ${fmtTime(r.created)}` }));
  }).catch(() => {});
  page.append(h("div", { class: "row", style: "margin-bottom: 8px" }, toggle, repeat, picker,
    h("span", { class: "muted", text: `${m.total} case${m.total === 1 ? "" : "s"}` + (cases.length ? ` (of ${cases.join(", ")})` : "") })));
  // a run's repeats are adjacent columns; its remove button sits on the first of them
  const head = h("tr", {}, h("th", { text: "case" }), m.columns.map((c, i) => h("th", { "data-run": c.run_id, "data-index": c.run_index },
    h("a", { href: link("runs", c.run_id), class: "mono", text: short(c.label, 40) }),
    c.run_indices > 1 ? h("span", { class: "repeat", title: `repeat ${c.run_index} of ${c.run_indices} of this run`, text: ` · #${c.run_index}` }) : null,
    h("div", { class: "muted small", text: fmtTime(c.created) }),
    (i === 0 || m.columns[i - 1].run_id !== c.run_id) && c.run_id !== runs[0] ? h("button", { class: "icon", title: "remove this run", "aria-label": "remove run", text: "✕",
      onclick: () => go(matrixLink(runs.filter((r) => r !== c.run_id), keep())) }) : null)));
  // a case's name opens it in the first column that ran it (a case new in a later run is in no
  // earlier one: the first column's page of it would be a 404)
  const body = m.rows.map((row) => h("tr", { "data-case": row.eval_id, class: row.changed ? "changed" : "" },
    h("td", {}, h("a", { href: caseLink(m.columns[Math.max(0, row.cells.findIndex(Boolean))], row.eval_id), text: row.eval_id })),
    row.cells.map((cell, i) => matrixCell(cell, m.columns[i], row.eval_id, byRun.get(m.columns[i].run_id)))));
  page.append(h("div", { class: "matrix-scroll" }, h("table", { class: "matrix" }, h("thead", {}, head), h("tbody", {}, body))));
  if (!m.rows.length) page.append(h("p", { class: "muted", text: changed ? "No case's output changed between these runs." : "No cases." }));
  paint(token, page);
}

/** The page of case `evalId` in column `col` (its repeat's, when the run was repeated).
 * @param {MatrixColumn} col @param {string} evalId */
function caseLink(col, evalId) {
  return col.run_indices > 1 ? link("runs", col.run_id, "cases", evalId, "run", col.run_index) : link("runs", col.run_id, "cases", evalId);
}

/** @param {MatrixCellView|null} cell @param {MatrixColumn} col @param {string} evalId
 * @param {Map<string, ReviewView>|undefined} reviews the column's run's, by `review.js` key */
function matrixCell(cell, col, evalId, reviews) {
  const href = caseLink(col, evalId);
  if (!cell) return h("td", { class: "muted", text: col.run_indices > 1 ? "not in this repeat" : "not in this run" });
  const answer = h("div", { class: "answer", text: cell.answer.join("\n") || (cell.error ? "" : "(no answer)") });
  const error = cell.error ? h("div", { class: "bad small", text: "The agent failed: " + cell.error }) : null;
  const calls = cell.calls.length ? h("div", { class: "calls mono", text: cell.calls.join("\n") }) : null;
  const diff = cell.changed ? h("details", { class: "diff" }, h("summary", { text: "changed: diff" }),
    h("div", { class: "mono" }, cell.diff.map((line) => h("div", { class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "", text: line })))) : null;
  // the case verdict's review beside its badge; the criteria's reviews (the cell shows no
  // criteria) on a line of their own, each named
  const prefix = reviewKey(evalId, col.run_index, "");
  const criteria = [...(reviews || new Map()).values()].filter((r) => r.eval_id === evalId && r.run_index === col.run_index && r.target)
    .map((r) => h("span", { class: "small mono" }, r.target, reviewMark(r)));
  return h("td", { class: cell.changed ? "cell changed" : "cell" },
    h("div", { class: "row" }, h("a", { href }, badge(cell.status)), reviewMark(reviews?.get(prefix)), h("span", { class: "muted", text: fmt(cell.score) })),
    criteria.length ? h("div", { class: "row reviewed" }, criteria) : null, answer, error, calls, diff);
}
