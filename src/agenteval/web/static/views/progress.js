/* A started run's live progress in the dock. */

import { api } from "../api.js";
import { $, h, toast } from "../dom.js";
import { enc, short, statusOf } from "../format.js";
import { link } from "../nav.js";

/** Follows a run's server-sent events in the dock (outside the routed view, so it survives
 * navigation); offers Cancel while it runs and the results when it ends. */
export function watchRun(runId, label) {
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
    if (e.type === "RunStarted") total = e.total;
    else if (e.type === "CaseStarted") say(`started ${e.eval_id}${e.run_index ? " run " + e.run_index : ""}`);
    else if (e.type === "CaseFinished") {
      done++; statusOf(e.status) === "passed" ? passed++ : failed++;
      say(`${statusOf(e.status)}: ${e.eval_id}${e.error ? " (" + short(e.error, 60) + ")" : ""}`);
    } else if (e.type === "JudgeCallDone") say(`judge ${e.model}: ${e.samples} sample(s)${e.cached ? " (cached)" : ""}`);
    else if (e.type === "RunFinished") {
      finish(`finished: ${e.passed} passed, ${e.failed} failed, ${e.not_evaluated} not evaluated`, e.result_ids[0]);
    }
    else if (e.type === "RunFailed") { finish("failed: " + (e.error || "the run stopped")); box.classList.add("bad"); }
    else if (e.type === "RunCancelled") finish("cancelled");
    if (!ended) status.textContent = `${done} / ${total || "?"} case runs · ${passed} passed · ${failed} failed`;
    bar.style.width = total ? `${Math.round((100 * done) / total)}%` : "0%";
  };
  es.onerror = () => { if (!ended) finish("the progress stream closed; see the run history", runId); };
}
