/* A started run's live progress in the dock. */

import { api } from "../api.js";
import { $, h, toast } from "../dom.js";
import { enc, short, statusOf } from "../format.js";
import { link } from "../nav.js";

/** m:ss of seconds. */
const clock = (secs) => `${Math.floor(secs / 60)}:${String(Math.floor(secs % 60)).padStart(2, "0")}`;

/** Follows a run's server-sent events in the dock (outside the routed view, so it survives
 * navigation); offers Cancel while it runs and the results when it ends. While it runs it shows
 * the step in hand of each case run in flight (turn k of n; judge call k of n once its judging
 * has begun, with the time it has taken and, after its first answer, an estimate of the time
 * left for it), the time taken and, once a case run has finished, an estimate of the time left. A finished run's box folds to
 * its verdict and goes when the next run starts (or with its ✕); the pages showing runs are
 * told (`agenteval:run-finished` on window) so that they list it. */
export function watchRun(runId, label) {
  for (const old of document.querySelectorAll("#dock .prog.done")) old.remove();
  const bar = h("div", { style: "width: 0%" });
  const status = h("div", { class: "pstatus", text: "starting…" });
  const step = h("div", { class: "pstep", text: "" });
  const log = h("div", { class: "log" });
  const actions = h("div", { class: "row" });
  const box = h("div", { class: "prog", "data-run": runId }, h("div", { class: "row" }, h("strong", { class: "grow", text: "Run " + label }),
    h("button", { class: "icon", title: "close", text: "✕", onclick: () => { es.close(); box.remove(); } })),
  h("div", { class: "bar" }, bar), status, step, log, actions);
  $("#dock").append(box);
  const cancel = h("button", { class: "danger", text: "Cancel", onclick: async () => {
    try { await api(`/api/runs/${enc(runId)}/cancel`, { method: "POST" }); } catch (err) { toast(err.message, true); }
  } });
  actions.append(cancel);
  let total = 0, done = 0, passed = 0, failed = 0, judged = 0, ended = false;
  const started = Date.now();
  const inFlight = new Map(); // "eval_id run" → its turns so far ("turn 2 of 3" once one finished)
  const judging = new Map(); // "eval_id run" → its judge questions: { done, calls, since }
  const keyOf = (e) => e.eval_id + (e.run_index ? " run " + e.run_index : "");
  const judgeStep = (j) => {
    const secs = (Date.now() - j.since) / 1000;
    const left = j.done && j.done < j.calls ? `, about ${clock((secs / j.done) * (j.calls - j.done))} left` : "";
    return `judge call ${Math.min(j.done + 1, j.calls)} of ${j.calls}, ${clock(secs)}${left}`;
  };
  const showStep = () => {
    const secs = (Date.now() - started) / 1000;
    const names = [...inFlight.entries()].map(([k, t]) => {
      const step = judging.has(k) ? judgeStep(judging.get(k)) : t;
      return step ? `${k} (${step})` : k;
    });
    const parts = [
      // how many run at once (the counts above say how far the run is): "running case 2 of 6"
      // read as one case in flight while four were
      names.length ? `running ${names.length > 1 ? names.length + " case runs" : "case run"}: ${short(names.slice(0, 2).join(", "), 110)}${names.length > 2 ? ` and ${names.length - 2} more` : ""}` : "",
      judged ? `${judged} judge question${judged > 1 ? "s" : ""} answered` : "",
      `${clock(secs)} elapsed`, done && total > done ? `about ${clock((secs / done) * (total - done))} left` : ""];
    step.textContent = parts.filter(Boolean).join(" · ");
  };
  const timer = setInterval(() => { if (!box.isConnected) clearInterval(timer); else showStep(); }, 1000);
  const say = (t) => { log.append(h("div", { text: t })); log.scrollTop = log.scrollHeight; };
  const finish = (text, resultId) => {
    ended = true; es.close(); clearInterval(timer); status.textContent = text; cancel.remove();
    step.textContent = `took ${clock((Date.now() - started) / 1000)}`;
    box.classList.add("done");
    if (resultId) actions.append(h("a", { class: "btn primary open-results", href: link("runs", resultId), text: "Open results" }));
    else if (resultId === null) actions.append(h("a", { class: "btn", href: link("runs"), text: "Run history" }));
    window.dispatchEvent(new CustomEvent("agenteval:run-finished", { detail: { runId, resultId: resultId || null } }));
  };
  const es = new EventSource(`/api/runs/${enc(runId)}/events`);
  es.onmessage = (msg) => {
    const e = JSON.parse(msg.data);
    if (e.type === "RunStarted") total = e.total;
    else if (e.type === "CaseStarted") {
      inFlight.set(e.eval_id + (e.run_index ? " run " + e.run_index : ""), "");
      say(`started ${e.eval_id}${e.run_index ? " run " + e.run_index : ""}`);
    } else if (e.type === "TurnDone") {
      // the turn after the one that finished is the one in hand
      const next = e.turns === null || e.turn < e.turns ? `turn ${e.turn + 1}${e.turns ? " of " + e.turns : ""}` : "scoring";
      inFlight.set(e.eval_id + (e.run_index ? " run " + e.run_index : ""), next);
      say(`${e.eval_id}: turn ${e.turn}${e.turns ? " of " + e.turns : ""} done`);
    } else if (e.type === "CaseFinished") {
      inFlight.delete(keyOf(e)); judging.delete(keyOf(e));
      done++; statusOf(e.status) === "passed" ? passed++ : failed++;
      say(`${statusOf(e.status)}: ${e.eval_id}${e.error ? " (" + short(e.error, 60) + ")" : ""}`);
    } else if (e.type === "JudgeCallsPlanned") {
      const j = judging.get(keyOf(e)) || { done: 0, calls: 0, since: Date.now() };
      j.calls = e.calls; judging.set(keyOf(e), j);
    } else if (e.type === "JudgeCallDone") {
      judged++;
      if (e.eval_id !== null && e.calls) { // where this case run's judging stands
        const j = judging.get(keyOf(e)) || { since: Date.now() - 1000 * (e.seconds || 0) };
        j.done = e.call; j.calls = e.calls; judging.set(keyOf(e), j);
      }
      say(`judge ${e.model}${e.eval_id !== null ? ` on ${e.eval_id}: call ${e.call} of ${e.calls},` : ":"} ${e.samples} sample(s)${e.cached ? " (cached)" : ""}`);
    } else if (e.type === "RunFinished") {
      finish(`finished: ${e.passed} passed, ${e.failed} failed, ${e.not_evaluated} not evaluated`, e.result_ids[0]);
    }
    else if (e.type === "RunFailed") { finish("failed: " + (e.error || "the run stopped")); box.classList.add("bad"); }
    else if (e.type === "RunCancelled") {
      // the cases done are in the run's journal: the set's run dialog offers to resume it
      finish(e.reason ? `cancelled: ${e.reason}; the case runs done are kept: resume the run from the Run evaluation dialog once the server is back` : "cancelled");
    }
    if (!ended) { status.textContent = `${done} / ${total || "?"} case runs · ${passed} passed · ${failed} failed`; showStep(); }
    bar.style.width = total ? `${Math.round((100 * done) / total)}%` : "0%";
  };
  // (the run id is no recorded run's: "Open results" of it was a 404; the history lists the run
  // once recorded, its set's run dialog offers to resume it if it was interrupted)
  es.onerror = () => { if (!ended) finish("the progress stream closed (the server stopped or could not be reached); see the run history", null); };
}
