/* Human review of a verdict (a case's, or one judged criterion's): agree / disagree with a
 * comment, stored with the run (PUT /api/runs/{run_id}/reviews), shown wherever the verdict is. */

import { api } from "../api.js";
import { h, replace, toast } from "../dom.js";
import { enc, fmtTime } from "../format.js";

/** A run's reviews, by `eval_id|run_index|target`.
 * @param {string} runId
 * @returns {Promise<Map<string, ReviewView>>} */
export async function loadReviews(runId) {
  /** @type {Array<ReviewView>} */
  const list = await api(`/api/runs/${enc(runId)}/reviews`);
  return new Map(list.map((r) => [reviewKey(r.eval_id, r.run_index, r.target), r]));
}

export function reviewKey(evalId, runIndex, target) { return `${evalId}|${runIndex}|${target}`; }

/** A person's review of a verdict as a mark beside it (✓ agreed, ✗ disagreed; the comment on hover).
 * @param {ReviewView|undefined} r */
export function reviewMark(r) {
  if (!r) return null;
  const agreed = r.agreement === "agree";
  return h("span", { class: "review-mark " + (agreed ? "ok" : "bad"), "data-review": r.target || "case",
    title: `reviewed: ${agreed ? "agreed" : "disagreed"}${r.comment ? " — " + r.comment : ""}`, text: agreed ? " ✓" : " ✗" });
}

/** Agree / disagree buttons for one verdict, with the stored review (if any) beside them; a
 * click asks for a comment and stores the review.
 * @param {string} runId
 * @param {string} evalId
 * @param {number} runIndex
 * @param {string} target - "" for the case's verdict, else the criterion
 * @param {ReviewView|undefined} review */
export function reviewControls(runId, evalId, runIndex, target, review) {
  const box = h("span", { class: "review", "data-review": target || "case" });
  const paintBox = (/** @type {ReviewView|undefined} */ r) => {
    const save = async (agreement) => {
      const comment = window.prompt(agreement === "agree" ? "Agree — comment (optional):" : "Disagree: what was wrong? (optional)", r ? r.comment : "");
      if (comment === null) return;
      try {
        /** @type {ReviewView} */
        const saved = await api(`/api/runs/${enc(runId)}/reviews`, { method: "PUT", body: { eval_id: evalId, run_index: runIndex, target, agreement, comment } });
        paintBox(saved);
      } catch (err) { toast(err.message, true); }
    };
    const on = r ? r.agreement : "";
    replace(box,
      h("button", { class: "icon" + (on === "agree" ? " primary" : ""), title: "agree with this verdict", "aria-label": "agree", text: "✓", onclick: () => save("agree") }),
      h("button", { class: "icon" + (on === "disagree" ? " danger on" : ""), title: "disagree: the verdict is wrong", "aria-label": "disagree", text: "✗", onclick: () => save("disagree") }),
      r ? h("span", { class: "review-note " + (on === "agree" ? "ok" : "bad"), title: (r.comment ? r.comment + "\n" : "") + `reviewed ${fmtTime(r.created)}`,
        text: (on === "agree" ? "agreed" : "disagreed") + (r.comment ? `: ${r.comment}` : "") }) : null);
  };
  paintBox(review);
  return box;
}

/** The review card of one case run: its verdict and each of its criteria (a judged criterion's
 * review is the judge's label: "disagree" says the judge was wrong), with the stored reviews.
 * A judged criterion also lists its verdict on each turn (of several) and on each rubric of a
 * turn (targets `criterion@turn` and `criterion@turn/rubric`, as `store.reviews.ReviewTarget`),
 * since `agenteval judge calibrate --from_reviews` labels those questions one by one.
 * @param {string} runId
 * @param {string} evalId
 * @param {number} runIndex
 * @param {Array<string>} criteria - the judged ones (`CaseView.reviewable`): only their reviews are labels
 * @param {EvalCaseResult} [result] - the case run, for its judged turns and rubrics */
export function reviewPanel(runId, evalId, runIndex, criteria, result) {
  const card = h("div", { class: "card reviews" }, h("h3", { text: "Your review" }),
    h("p", { class: "muted small", text: "A judged criterion's review is a label for agenteval judge calibrate --from_reviews; a review of the case's verdict labels the judged criteria its comment names."
      + (criteria.length ? "" : " This case run has no judged criterion.") }));
  loadReviews(runId).then((reviews) => {
    const line = (target, label) => h("div", { class: "row", "data-target": target || "case" },
      h("span", { class: "review-label", text: label }), reviewControls(runId, evalId, runIndex, target, reviews.get(reviewKey(evalId, runIndex, target))));
    card.append(line("", "the case's verdict"), ...criteria.flatMap((c) => [line(c, c), questions(c, result, line, reviews, evalId, runIndex)]).filter(Boolean));
  }).catch((err) => card.append(h("p", { class: "muted", text: err.message })));
  return card;
}

/** The judged questions of criterion `c` a review can name one by one: its verdict on each turn
 * (when there are several) and each rubric of a turn (rubric criteria), from the judge's records;
 * open when one of them was reviewed. */
function questions(c, result, line, reviews, evalId, runIndex) {
  if (!result) return null;
  const records = result.judge_records.filter((r) => r.metric_name === c && !r.step && typeof r.invocation_index === "number");
  if (!records.length) return null;
  const turns = result.eval_metric_result_per_invocation.length;
  const rubric = c.startsWith("rubric_based_");
  const lines = [];
  for (let i = 0; i < turns; i++) {
    // a turn the criterion gave no verdict on (a multi-turn criterion's earlier turns) has nothing to review
    if (turns > 1 && records.some((r) => r.invocation_index === i)) lines.push(line(`${c}@${i}`, `turn ${i + 1}`));
    if (!rubric) continue;
    const items = [...new Set(records.filter((r) => r.invocation_index === i && r.item).map((r) => r.item))];
    for (const item of items) {
      const verdict = records.find((r) => r.invocation_index === i && r.item === item);
      const met = verdict && typeof verdict.score === "number" ? (verdict.score >= 1 ? " (met)" : " (not met)") : "";
      lines.push(line(`${c}@${i}/${item}`, `turn ${i + 1} · rubric ${item}${met}`));
    }
  }
  if (!lines.length) return null;
  const open = [...reviews.keys()].some((k) => k.startsWith(`${evalId}|${runIndex}|${c}@`));
  return h("details", { class: "review-questions", open }, h("summary", { class: "muted small", text: `${c}: by ${rubric ? "rubric" : "turn"}` }), lines);
}
