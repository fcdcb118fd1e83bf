/* One case of a run: criteria, expected against actual per invocation, judge verdicts, the trace. */

import { api, apiTagged, casePath, setPath } from "../api.js";
import { $, badge, errorBox, h, headRow, toast } from "../dom.js";
import { INFORMATIONAL, callLine, contentText, enc, fmt, fmtSecs, invCalls, statusClass, statusOf } from "../format.js";
import { go, link, paint, showAgent } from "../nav.js";
import { S } from "../state.js";
import { argDiffRows, wordDiff } from "./diff.js";
import { judgeTable } from "./judges.js";
import { loadReviews, reviewKey, reviewPanel } from "./review.js";
import { caseGroups, traceView } from "./trace.js";

export async function showCaseResult(token, runId, caseId, opts) {
  const runIndex = Number(opts.run || 0);
  /** @type {CaseView} */
  const d = await api(`/api/runs/${enc(runId)}/cases/${enc(caseId)}?run_index=${runIndex}`);
  const r = d.result;
  const runs = d.runs;
  const summary = d.summary;
  const page = h("div", { class: "page case-result" });
  page.append(h("p", {}, h("a", { href: link("runs", runId), text: "← run " + (d.run_group || runId), title: "document " + runId })),
    h("div", { class: "row" }, h("h2", { class: "grow" }, "Case ", h("span", { text: caseId })),
      runs.length > 1 ? h("span", { class: "muted", text: `run ${runIndex}: ` }) : null, badge(r.final_eval_status),
      runs.length > 1 ? [h("span", { class: "muted", text: " over all runs: " }), badge(d.verdict)] : null,
      d.app ? h("button", { id: "make-case", text: "Make eval case…", title: "add what the agent did here to an eval set as a new case (then edit it)",
        onclick: () => makeCase(d, runId) }) : null));
  if (runs.length > 1) {
    page.append(h("div", { class: "row" }, h("span", { text: "Repeated runs:" }), runs.map((k) =>
      h("a", { class: "btn" + (k === runIndex ? " primary" : ""), href: link("runs", runId, "cases", caseId, "run", k), text: `run ${k}` }))));
    if (summary.length) page.append(repeatStats(summary));
  }
  if (d.problems.length) {
    page.append(h("div", { class: "card problems" }, h("h3", { text: d.verdict === "passed"
      ? "What counted against it (the case passed)" : "Why it did not pass" }), h("ul", {}, d.problems.map((p) => h("li", { text: p })))));
  }
  // what the case run said of itself, passed or not (a conversation the simulator's turn limit
  // ended, a value that lost characters to be written), as the reports list them
  if (r.warnings && r.warnings.length) {
    page.append(h("div", { class: "card warnings" }, h("h3", { text: runs.length > 1 ? `Warnings (run ${runIndex})` : "Warnings" }),
      h("ul", {}, r.warnings.map((w) => h("li", { text: w })))));
  }
  page.append(h("div", { class: "card" }, h("h3", { text: "Criteria" }), h("div", { class: "row criteria" }, r.overall_eval_metric_results.map((m) =>
    h("span", { class: "badge " + statusClass(m.eval_status), "data-metric": m.metric_name, title: statusOf(m.eval_status),
      text: `${m.metric_name} ${fmt(m.score)}${m.threshold !== null && m.threshold !== undefined ? " / " + fmt(m.threshold) : ""}` })))));
  page.append(reviewPanel(runId, caseId, runIndex, d.reviewable, r));
  if (r.error_message) page.append(errorBox(new Error("The agent failed: " + r.error_message)));
  // (metric errors are among `d.problems`, a not-evaluated criterion's as its reason: not repeated here)
  // invocations on the left, the trace beside them (sticky), so hovering a trace row shows its turn
  const left = h("div", { class: "case-main" });
  r.eval_metric_result_per_invocation.forEach((per, i) => left.append(invocationResult(d, per, i, d.invocations[i], runId)));
  const reviewed = loadReviews(runId).then((m) => (/** @type {string} */ target) => m.get(reviewKey(caseId, runIndex, target)));
  if (r.judge_records.length) left.append(judgeTable(r.judge_records, reviewed));
  const spans = r.trace && r.trace.spans.length;
  const right = h("aside", { class: "case-trace card" }, h("h3", { text: "Trace" }),
    spans ? traceView(caseGroups(r), d.agents) : h("p", { class: "muted", text: "No trace was recorded for this case run." }));
  page.append(h("div", { class: "case-grid" }, left, right));
  paint(token, page);
  if (token === S.route) showAgent(d.app); // the agent of the page (a deep link says none)
  if (opts.inv) { const el = $(`#inv-${CSS.escape(opts.inv)}`); if (el) { el.scrollIntoView(); el.classList.add("hl"); } }
}

/** @param {Array<SummaryMetric>} metrics */
function repeatStats(metrics) {
  const head = ["criterion", "threshold", "runs", "passed", "mean", "std", "95% CI", "pass@k", "pass^k", "verdict"];
  return h("div", { class: "card" }, h("h3", { text: "Repeated-run statistics" }), h("div", { class: "table-wrap" }, h("table", { class: "repeat" },
    h("thead", {}, h("tr", {}, head.map((t) => h("th", { text: t })))),
    h("tbody", {}, metrics.filter((m) => !INFORMATIONAL.has(m.metric_name)).map((m) => h("tr", {}, h("td", { text: m.metric_name }), h("td", { text: fmt(m.threshold) }),
      h("td", { text: `${m.scored_runs}/${m.runs}` }), h("td", { text: m.passed_runs }), h("td", { text: fmt(m.mean) }), h("td", { text: fmt(m.std) }),
      h("td", { text: m.ci_low === null ? "–" : `${fmt(m.ci_low)} – ${fmt(m.ci_high)}` }),
      h("td", { text: fmt(m.pass_at_k) }), h("td", { text: fmt(m.pass_pow_k) }), h("td", {}, badge(m.eval_status))))))));
}

/** Expected vs actual side by side, with the call diff, argument diffs and the failing scores.
 * @param {CaseView} d
 * @param {EvalMetricResultPerInvocation} per
 * @param {number} i
 * @param {InvocationView} diff
 * @param {string} runId */
function invocationResult(d, per, i, diff, runId) {
  const act = per.actual_invocation, exp = per.expected_invocation;
  const metrics = per.eval_metric_results;
  const failing = metrics.filter((m) => statusOf(m.eval_status) === "failed");
  // the reasons the criteria gave where they decided (stored in the result document)
  const explained = diff.scores.filter((m) => m.status !== "passed" && m.status !== "informational" && m.reason);
  // every judged score with its calibration certificate (or that it has none)
  const judged = diff.scores.filter((m) => m.certificate);
  const gating = metrics.filter((m) => !INFORMATIONAL.has(m.metric_name)), info = metrics.filter((m) => INFORMATIONAL.has(m.metric_name));
  const here = link("runs", runId, "cases", d.eval_id, "run", d.run_index, "inv", i);
  const want = exp ? contentText(exp.final_response) : null, got = contentText(act.final_response);
  const [wantEl, gotEl] = want === null ? [h("span", { class: "muted", text: "(no reference)" }), h("span", { text: got })] : wordDiff(want, got);
  // without a reference the actual calls are listed plainly
  const lines = exp ? diff.tool_call_diff.map((x) => [x.op, x.call]) : invCalls(act).map((c) => [" ", callLine(c)]);
  const argRows = argDiffRows(diff);
  const diffLine = ([k, t]) => h("div", { class: k === "-" ? "m" : k === "+" ? "x" : "", text: `${k} ${t}` });
  const callBox = h("pre", { class: "box diff" }, lines.length ? lines.map(diffLine) : h("span", { class: "muted", text: "(no tool calls)" }));
  const args = argRows.length ? h("table", { class: "argdiff" }, headRow(["call", "tool", "argument", "expected", "actual"]),
    h("tbody", {}, argRows.map((a) => h("tr", {}, h("td", { text: a.call }), h("td", { text: a.tool }), h("td", { class: "mono", text: a.arg }),
      h("td", { class: "mono", text: a.expected }), h("td", { class: "mono bad", text: a.actual }))))) : null;
  const accept = exp && failing.length ? h("button", { class: "accept", text: "Accept actual turn as expected",
    title: "write this actual turn into the eval set as the new expected one",
    onclick: () => acceptActual(d, i, act) }) : null;
  return h("div", { class: "inv card", id: `inv-${i}`, "data-inv": i },
    h("div", { class: "head" }, h("strong", { text: `Invocation ${i}` }), act.duration ? h("span", { class: "muted", text: fmtSecs(act.duration) }) : null,
      h("span", { class: "grow" }), gating.map((m) => h("span", { class: "badge " + statusClass(m.eval_status), text: `${m.metric_name} ${fmt(m.score)}` })),
      h("a", { class: "muted", href: here, title: "link to this invocation", text: "#" })),
    h("div", { class: "msg user", text: contentText(act.user_content) }),
    h("div", { class: "muted small", text: info.map((m) => `${m.metric_name.replace(/_v1$/, "").replace(/_/g, " ")} ${fmt(m.score)}`).join(" · ") }),
    h("div", { class: "sides" }, h("div", {}, h("h4", { text: "Expected response" }), h("pre", { class: "expected" }, wantEl)),
      h("div", {}, h("h4", { text: "Actual response" }), h("pre", { class: "actual" }, gotEl))),
    h("h4", { text: "Tool calls (− expected, not made · + made, not expected)" }), callBox, args,
    explained.length ? h("div", { class: "failing-scores" }, h("h4", { text: "Why it did not pass" }), explained.map((m) =>
      h("div", { class: "bad", "data-reason": m.name, text: `${m.name}: ${m.reason}` }))) : null,
    judged.length ? h("div", { class: "muted small" }, judged.map((m) =>
      h("div", { "data-certificate": m.name, text: `${m.name}: ${m.certificate}` }))) : null,
    accept);
}

/** Writes the actual turn into the eval set as the expected one (ADK's "accept actual").
 * @param {CaseView} d
 * @param {number} i
 * @param {Invocation} act */
async function acceptActual(d, i, act) {
  const setId = d.eval_set_id;
  try {
    if (!d.app) throw new Error("this run names no agent folder: its eval set cannot be edited from here");
    /** @type {EvalCase} */
    const { data: c, tag } = await apiTagged(casePath(d.app, setId, d.eval_id));
    const inv = c.conversation && c.conversation[i];
    if (!inv) throw new Error(`case ${d.eval_id} has no turn ${i}`);
    // The set may have changed since the run: the answer is only written under the question it answers.
    const asked = contentText(act.user_content), now = contentText(inv.user_content);
    if (asked !== now) throw new Error(`turn ${i} of ${d.eval_id} in ${setId} now asks "${now}", not "${asked}" as in this run: nothing written`);
    inv.final_response = act.final_response;
    inv.intermediate_data = act.intermediate_data;
    // only over the case as just read: an edit saved meanwhile elsewhere is refused, not lost
    await api(casePath(d.app, setId, d.eval_id), { method: "PUT", body: c, ifMatch: tag });
    toast(`turn ${i} of ${d.eval_id} in ${setId} now expects the actual turn`);
  } catch (err) { toast(err.message, true); }
}

/** A new eval case from this case run (its turns, answers, calls, final state), opened in the case editor.
 * @param {CaseView} d
 * @param {string} runId */
async function makeCase(d, runId) {
  const setId = window.prompt("Add the case to eval set (made when missing):", d.eval_set_id);
  if (!setId) return;
  const evalId = window.prompt("Id of the new case:", `${d.eval_id}_from_${runId.slice(0, 8)}`);
  if (!evalId) return;
  try {
    await api(setPath(d.app, setId) + "/from-run", { method: "POST", body: { eval_id: evalId, run_id: runId, case_id: d.eval_id } });
    toast(`case ${evalId} added to ${setId}`);
    go(link("app", d.app, "evalsets", setId, "cases", evalId));
  } catch (err) { toast(err.message, true); }
}
