/* The dialog that starts a run: criteria, thresholds, judge and argument-matching options. */

import { api, setPath } from "../api.js";
import { $, h, replace, toast } from "../dom.js";
import { invCalls } from "../format.js";
import { S } from "../state.js";
import { watchRun } from "./progress.js";

/** Options of built-in criteria beyond the threshold (the API lists names and ranges only). */
function criterionOptions(c) {
  if (c.name === "tool_trajectory_avg_score") return ["match_type", "ignore_args"];
  if (c.name === "tool_trajectory_single_tool_use") return ["tool_name"];
  if (c.name.startsWith("tool_trajectory_")) return ["ignore_args"];
  return [];
}

// criteria that take `args_match` (per tool and argument matchers)
const ARGS_MATCH = new Set(["tool_trajectory_avg_score", "tool_trajectory_precision", "tool_trajectory_recall"]);

const MATCHERS = ["exact", "ignore", "text", "number", "regex", "subset", "superset"];

/** Every (tool, argument) of the expected calls of these cases: what args_match can name. */
export function expectedArgs(cases) {
  const out = new Map();
  for (const c of cases) for (const inv of c.conversation || []) for (const call of invCalls(inv)) {
    if (!out.has(call.name)) out.set(call.name, new Set());
    for (const k of Object.keys(call.args || {})) out.get(call.name).add(k);
  }
  return out;
}

/** The argument-matching table of a trajectory criterion; value() → its args_match or null. */
function argsMatchEditor(name, args) {
  const rows = [...args].flatMap(([tool, names]) => [...names].map((arg) => {
    const matcher = h("select", { "data-args-match": `${name}:${tool}:${arg}`, "aria-label": `${tool}.${arg} matching` }, MATCHERS.map((m) => h("option", { value: m, text: m })));
    const param = h("input", { placeholder: "", style: "width: 140px", hidden: true, "aria-label": `${tool}.${arg} tolerance or pattern` });
    matcher.addEventListener("change", () => {
      param.hidden = !["number", "regex"].includes(matcher.value);
      param.placeholder = matcher.value === "number" ? "tolerance (abs)" : "pattern (default: expected)";
    });
    return { tool, arg, matcher, param };
  }));
  const el = rows.length ? h("details", { class: "argsmatch" }, h("summary", { text: `argument matching (${rows.length} arguments in the expected calls)` }),
    h("table", {}, h("tbody", {}, rows.slice(0, 60).map((r) =>
      h("tr", {}, h("td", { class: "mono", text: `${r.tool}.${r.arg}` }), h("td", {}, r.matcher), h("td", {}, r.param)))))) : null;
  const value = () => {
    const out = {};
    for (const r of rows) {
      const m = r.matcher.value, p = r.param.value.trim();
      if (m === "exact") continue;
      const spec = m === "number" ? { match: "number", abs: p ? numberIn(r.param, `${name}, ${r.tool}.${r.arg}: tolerance`, { min: 0 }) : 0 } : m === "regex" && p ? { match: "regex", pattern: p } : m;
      (out[r.tool] = out[r.tool] || {})[r.arg] = spec;
    }
    return Object.keys(out).length ? out : null;
  };
  return { el, value };
}

/** The number typed in `input`; an Error naming `field` when the box is empty or holds no
 * number (a number box's value is "" then), is not whole where it must be, or is below `min`. */
function numberIn(input, field, { integer = false, min = -Infinity } = {}) {
  const text = input.value.trim();
  const n = Number(text);
  if (!text || !Number.isFinite(n)) throw new Error(`${field}: empty or not a number`);
  if (integer && !Number.isInteger(n)) throw new Error(`${field}: ${text} is not a whole number`);
  if (n < min) throw new Error(`${field}: ${text} is below ${min}`);
  return n;
}

/** The run dialog. It opens with exactly what `agenteval eval` would use for this set (the
 * server resolves test_config.json beside it, else the defaults) and says where that came from;
 * left untouched, it sends no criteria, so the server applies the same rule. */
export async function metricDialog(app, setId, evalIds, args) {
  if (!S.criteria) S.criteria = await api("/api/criteria");
  /** @type {RunDefaults} */
  const defaults = await api(`${setPath(app, setId)}/run-defaults`);
  /** @type {UnfinishedRun[]} */
  const unfinished = await api(`${setPath(app, setId)}/unfinished`);
  const dialog = $("#dialog");
  // the criteria in force first, then the rest by name
  const ordered = [...S.criteria].sort((a, b) => Number(!(a.name in defaults.criteria)) - Number(!(b.name in defaults.criteria)));
  const rows = ordered.map((c) => criterionRow(c, args, defaults.criteria[c.name]));
  const collect = () => {
    const criteria = {};
    for (const r of rows) { const v = r.value(); if (v !== undefined) criteria[r.name] = v; }
    return criteria;
  };
  const initial = JSON.stringify(collect());
  const runs = h("input", { type: "number", id: "num-runs", min: 1, value: 1, style: "width: 70px" });
  const escalate = h("input", { id: "escalate-to", placeholder: "none", style: "width: 220px" });
  // Which verdicts the judge writes a reason for (judge_rationales); "never" is the cheapest.
  const rationales = h("select", { id: "judge-rationales", "aria-label": "judge rationales" },
    ["", "negative", "always", "never"].map((v) => h("option", { value: v, text: v || "each criterion's own" })));
  const post = async (body) => {
    try {
      /** @type {RunRef} */
      const out = await api(`${setPath(app, setId)}/run`, { method: "POST", body });
      dialog.close();
      watchRun(out.run_id, `${app} / ${setId}`);
    } catch (err) { toast(err.message, true); }
  };
  const start = () => {
    let body;
    try {  // a box left empty or not a number is named, never sent as 0 or a default
      const criteria = collect();
      body = { eval_ids: evalIds, criteria: JSON.stringify(criteria) === initial ? null : criteria,
        num_runs: numberIn(runs, "Runs per case", { integer: true, min: 1 }), escalate_judge_model: escalate.value.trim() || null,
        judge_rationales: rationales.value || null };
    } catch (err) { toast(err.message, true); return; }
    post(body);
  };
  const source = defaults.source ? `Criteria from ${defaults.source}, as agenteval eval uses them.`
    : "Default criteria (no test_config.json beside this set), as agenteval eval uses them.";
  const resumable = unfinished.filter((u) => u.status === "interrupted").map((u) => h("div", { class: "row", "data-unfinished": u.run_id },
    h("span", { class: "grow mono", text: `${u.run_id}: ${u.done} of ${u.total} case runs finished${u.errors ? `, ${u.errors} with errors` : ""}` }),
    h("button", { text: "Resume", "data-resume": u.run_id, onclick: () => post({ resume: u.run_id }) }),
    u.errors ? h("button", { text: "Retry errors", onclick: () => post({ resume: u.run_id, retry_errors: true }) }) : null));
  replace(dialog, h("div", { class: "dhead" }, h("span", { class: "grow", text: "EVALUATION METRIC" }),
    h("span", { class: "muted", text: evalIds ? `${evalIds.length} case(s)` : "all cases" })),
  h("div", { class: "dbody" }, h("p", { class: "muted", id: "criteria-source", text: source }),
    resumable.length ? h("details", { open: true, class: "unfinished" }, h("summary", { text: `Interrupted runs (${resumable.length})` }), resumable) : null,
    h("h4", { class: "crit-group", text: "In force for this set" }),
    rows.map((r, i) => (i && !(r.name in defaults.criteria) && rows[i - 1].name in defaults.criteria
      ? [h("h4", { class: "crit-group", text: "Other criteria" }), r.el] : r.el)),
    h("div", { class: "row", style: "margin-top: 10px" }, h("label", { for: "num-runs", text: "Runs per case " }), runs),
    h("div", { class: "row" }, h("label", { for: "escalate-to", text: "Escalate uncertain verdicts to " }), escalate),
    h("div", { class: "row" }, h("label", { for: "judge-rationales", text: "Judge rationales " }), rationales)),
  h("div", { class: "dfoot" }, h("button", { text: "Cancel", onclick: () => dialog.close() }),
    h("button", { class: "primary", id: "start-run", text: "Start", onclick: start })));
  dialog.showModal();
}

/** One criterion in the dialog: enable box, threshold (slider for scored ones), judge model and
 * samples for judged ones, match options for trajectory ones. value() → what the API takes.
 * @param {CriterionInfo} c */
function criterionRow(c, args, preset) {
  const lo = c.min_value ?? 0, hi = c.max_value ?? 1;
  const on = h("input", { type: "checkbox", "data-criterion": c.name, checked: Boolean(preset) && !c.informational, disabled: c.informational, "aria-label": c.name });
  const thr = h("input", { type: "number", class: "thr", step: "any", min: lo, max: hi, value: preset?.threshold ?? c.default_threshold ?? hi, "data-threshold": c.name, "aria-label": c.name + " threshold" });
  const slider = h("input", { type: "range", min: lo, max: hi, step: (hi - lo) / 100 || 0.01, value: thr.value, "aria-label": c.name + " threshold slider" });
  slider.addEventListener("input", () => { thr.value = slider.value; });
  thr.addEventListener("input", () => { slider.value = thr.value; });
  const opts = {};
  const optEls = [];
  const judging = preset?.judge_model_options;
  if (c.judged) {
    opts.judge_model = h("input", { "data-judge-model": c.name, value: judging?.judge_model ?? "local", style: "width: 260px" });
    opts.num_samples = h("input", { type: "number", min: 1, value: judging?.num_samples ?? 5, style: "width: 60px", "data-samples": c.name });
    optEls.push(h("label", {}, "judge model ", opts.judge_model), h("label", {}, "samples ", opts.num_samples));
  }
  for (const o of criterionOptions(c)) {
    if (o === "match_type") opts[o] = h("select", { "data-match": c.name }, ["EXACT", "IN_ORDER", "ANY_ORDER", "SUBSET", "SUPERSET"].map((m) => h("option", { value: m, text: m, selected: preset?.match_type === m })));
    if (o === "ignore_args") opts[o] = h("input", { type: "checkbox", checked: preset?.ignore_args === true });
    if (o === "tool_name") opts[o] = h("input", { placeholder: "tool name", value: preset?.tool_name ?? "" });
    optEls.push(h("label", {}, o.replace("_", " ") + " ", opts[o]));
  }
  const matching = ARGS_MATCH.has(c.name) && args ? argsMatchEditor(c.name, args) : null;
  // a rubric criterion checks rubrics: written here (they apply to every case), else each case's own
  const rubrics = c.name.startsWith("rubric_based_") ? h("textarea", { class: "rubrics", "data-rubrics": c.name, rows: 3,
    placeholder: "One rubric a line, e.g. \"The answer names the city.\" Left empty: each case's own rubrics are used (a case without any is not evaluated).",
    value: (preset?.rubrics || []).map((r) => r.rubric_content?.text_property || "").filter(Boolean).join("\n") }) : null;
  if (rubrics) optEls.push(h("label", { class: "rubrics-label" }, "rubrics ", rubrics));
  const el = h("div", { class: "crit" }, on, h("strong", { text: c.name }),
    c.informational ? h("span", { class: "muted", text: "informational: always reported" }) : h("span", {}, slider, " ", thr),
    h("div", { class: "desc", text: c.description || "" }), optEls.length ? h("div", { class: "opts" }, optEls) : null,
    matching && matching.el ? h("div", { class: "opts" }, matching.el) : null);
  const value = () => {
    if (!on.checked || c.informational) return undefined;
    const threshold = numberIn(thr, `${c.name}: threshold`);
    const extra = {};
    if (opts.match_type) extra.match_type = opts.match_type.value;
    if (opts.ignore_args && opts.ignore_args.checked) extra.ignore_args = true;
    if (opts.tool_name) extra.tool_name = opts.tool_name.value.trim();
    const argsMatch = matching && matching.value();
    if (argsMatch) extra.args_match = argsMatch;
    const written = rubrics ? rubrics.value.split("\n").map((t) => t.trim()).filter(Boolean) : [];
    if (written.length) extra.rubrics = written.map((t, i) => ({ rubric_id: `r${i + 1}`, rubric_content: { text_property: t } }));
    if (c.judged) extra.judge_model_options = { judge_model: opts.judge_model.value.trim() || "local", num_samples: numberIn(opts.num_samples, `${c.name}: samples`, { integer: true, min: 1 }) };
    const plain = Object.keys(extra).length === 0 || (extra.match_type === "EXACT" && Object.keys(extra).length === 1);
    return plain ? threshold : { threshold, ...extra };
  };
  return { name: c.name, el, value };
}
