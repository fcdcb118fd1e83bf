/* The judge verdicts of a case, each with its prompt and raw replies. */

import { $, badge, h, kvs, replace, toast } from "../dom.js";
import { fmt } from "../format.js";
import { reviewMark } from "./review.js";

/** The review that covers a judge verdict: of its rubric on its turn, else of its turn, else of
 * its criterion (as `agenteval judge calibrate --from_reviews` reads them).
 * @param {JudgeRecord} r
 * @param {(target: string) => (ReviewView|undefined)} review */
function reviewOf(r, review) {
  if (r.step || typeof r.invocation_index !== "number") return undefined;
  const turn = `${r.metric_name}@${r.invocation_index}`;
  return (r.item ? review(`${turn}/${r.item}`) : undefined) || review(turn) || review(r.metric_name);
}

/** The judge verdicts, each with the review that covers it once `reviews` (target → review of
 * this case run) are in.
 * @param {Array<JudgeRecord>} records
 * @param {Promise<(target: string) => (ReviewView|undefined)>} [reviews] */
export function judgeTable(records, reviews) {
  const head = ["criterion", "invocation", "item", "verdict", "score", "rationale", ""];
  const cells = records.map((r) => h("td", {}, r.error ? badge(2, "error") : verdictBadge(r)));
  if (reviews) reviews.then((review) => records.forEach((r, k) => { const m = reviewMark(reviewOf(r, review)); if (m) cells[k].append(m); })).catch(() => null);
  return h("div", { class: "card judges" }, h("h3", { text: "Judge verdicts" }), h("table", {},
    h("thead", {}, h("tr", {}, head.map((t) => h("th", { text: t })))),
    h("tbody", {}, records.map((r, k) => h("tr", { class: r.step ? "muted" : "" }, h("td", { text: r.metric_name }), h("td", { text: r.invocation_index ?? "–" }),
      h("td", { text: r.item || "" }), cells[k],
      h("td", { text: fmt(r.score) }), h("td", { class: "rationale", text: r.rationale || r.error || "" }),
      h("td", { class: "nowrap" }, h("button", { class: "icon judge-audit", text: "prompt & reply", onclick: () => judgeDialog(r) }),
        r.span_id ? h("button", { class: "icon", title: "show this judge call in the trace", text: "trace", onclick: () => showSpan(r.span_id) }) : null))))));
}

/** Opens a span of the trace on the page (a judge call's, from its record) as if its row were clicked. */
function showSpan(spanId) {
  const row = document.querySelector(`.trow[data-span="${CSS.escape(spanId)}"]`);
  if (row) { row.scrollIntoView({ block: "nearest" }); row.click(); } else toast("that span is not in the trace", true);
}

/** @param {JudgeRecord} r */
function verdictBadge(r) {
  const tone = r.score === null || r.score === undefined ? "info" : r.score >= 1 ? "ok" : "bad";
  return h("span", { class: "badge " + tone, text: r.step || r.verdict || "–" });
}

/** @param {JudgeRecord} r */
function judgeDialog(r) {
  const dialog = $("#dialog");
  const title = `${r.metric_name} · ${r.judge_model}${r.prompt_version ? " · prompts " + r.prompt_version : ""}`;
  replace(dialog, h("div", { class: "dhead" }, h("span", { class: "grow", text: title }),
    h("button", { class: "icon", text: "✕", onclick: () => dialog.close() })),
  h("div", { class: "dbody" }, h("dl", { class: "kv" }, kvs({ verdict: r.verdict, score: fmt(r.score), rationale: r.rationale, error: r.error,
    "prompt tokens": r.prompt_tokens, cached: r.cached ? "yes" : null, "votes": (r.verdicts || []).map((v) => v ?? "unreadable").join(", ") })),
  (r.screened || []).length ? [h("h4", { text: "Cut from the agent's text before judging" }), h("pre", { class: "box", text: r.screened.join("\n") })] : null,
  (r.flagged || []).length ? [h("h4", { text: "Addressed to the judge in the quoted material (tool results, user turns)" }), h("pre", { class: "box", text: r.flagged.join("\n") })] : null,
  h("h4", { text: "Prompt" }), h("pre", { class: "box judge-prompt", text: r.prompt }),
  (r.replies || []).map((reply, k) => [h("h4", { text: `Raw reply ${k + 1}` }), h("pre", { class: "box judge-reply", text: reply })])));
  dialog.showModal();
}
