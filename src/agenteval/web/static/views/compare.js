/* Two runs compared case by case, and the picker of the two. Runs are named as the CLI prints
 * them (their run id, else the document id) with the date they ran. The counts and the paired
 * statistics are of every case; the cases come a page at a time, filtered by the server
 * (address: #/compare/A/B?show=changed|regressed|improved|unchanged|added|removed|all&margin=m). */

import { api, qs } from "../api.js";
import { add, badge, h } from "../dom.js";
import { enc, fmt, fmtTime } from "../format.js";
import { go, link, paint } from "../nav.js";
import { runLabel } from "./runs.js";

// Which cases are listed (the server filters and pages them; its counts are of every case).
const SHOWN = { changed: "changed", regressed: "regressed", improved: "improved", unchanged: "unchanged", added: "added", removed: "removed", all: "every case" };
const PAGE = 100;

export async function showCompare(token, a, b, query) {
  if (!a || !b) return comparePicker(token);
  const margin = query.margin || "0";
  const show = query.show in SHOWN ? query.show : query.all === "1" ? "all" : "changed";
  const base = `a=${enc(a)}&b=${enc(b)}`;
  /** @returns {Promise<ComparisonView>} */
  const casesFrom = (offset) => api(`/api/compare?${base}&margin=${enc(margin)}&show=${show}&offset=${offset}&limit=${PAGE}`);
  /** The paired view of these cases (its measures and counts are of every case).
   * @param {Array<CaseChange>} cases @returns {Promise<PairedView>} */
  const pairedOf = (cases) => api(`/api/compare/paired?${base}&limit=${cases.length}` + cases.map((x) => `&eval_id=${enc(x.eval_id)}`).join(""));
  const c = await casesFrom(0);
  const p = await pairedOf(c.cases);
  /** @type {Array<RunView>} */
  const [runA, runB] = await Promise.all([a, b].map((id) => api(`/api/runs/${enc(id)}`)));
  const showAll = show === "all" || show === "unchanged";
  /** @param {SummaryMetric|null} m */
  const flaky = (m) => m && m.runs > 1 && m.passed_runs > 0 && m.passed_runs < m.runs;
  const tone = { "newly failed": "bad", regressed: "bad", "newly passed": "ok", improved: "ok", added: "info", removed: "na", unchanged: "info" };
  const pick = h("select", { id: "cmp-show", title: "which cases are listed" }, Object.entries(SHOWN).map(([v, t]) => h("option", { value: v, text: t })));
  pick.value = show;
  pick.addEventListener("change", () => go(link("compare", a, b) + "?" + qs({ margin, show: pick.value })));
  const flips = h("span", { class: "badge na flips", hidden: true });
  let flipped = 0;
  const page = h("div", { class: "page compare" }, h("h2", { text: "Compare runs" }), pairedCard(p),
    h("div", { class: "card" }, h("dl", { class: "kv" },
      h("dt", { text: "baseline" }), runCell(runA, c.baseline_id, c.baseline_set),
      h("dt", { text: "candidate" }), runCell(runB, c.candidate_id, c.candidate_set),
      h("dt", { text: "margin" }), h("dd", { text: fmt(c.margin) })),
    h("div", { class: "row counts", style: "margin-top: 8px" },
      Object.entries(c.counts).map(([k, n]) => h("span", { class: "badge " + (tone[k] || "info"), text: `${n} ${k}` })), flips)),
  h("div", { class: "row" }, h("label", {}, "cases listed ", pick),
    h("a", { class: "btn", href: link("compare", b, a), text: "Swap" })));
  const body = h("tbody");
  /** The rows of a page of cases, with each case's change from its own runs.
   * @param {Array<CaseChange>} cases @param {PairedView} paired */
  const addRows = (cases, paired) => {
    const byId = new Map(paired.cases.map((x) => [x.eval_id, x]));
    for (const x of cases) {
      const crit = x.criteria.filter((k) => showAll || k.change !== "unchanged");
      flipped += x.criteria.some((k) => flaky(k.after) || flaky(k.before)) ? 1 : 0;
      body.append(h("tr", { "data-case": x.eval_id }, h("td", {}, h("a", { href: link("runs", c.candidate_id, "cases", x.eval_id), text: x.eval_id })),
        h("td", {}, h("span", { class: "badge " + (tone[x.change] || "info"), text: x.change })),
        h("td", {}, x.before === null ? "–" : badge(x.before)), h("td", {}, x.after === null ? "–" : badge(x.after)),
        h("td", {}, caseChange(byId.get(x.eval_id))),
        h("td", {}, crit.map((k) => h("div", { class: tone[k.change] === "bad" ? "bad" : "" },
          `${k.metric_name}: ${fmt(k.before && k.before.mean)} → ${fmt(k.after && k.after.mean)}`,
          k.delta !== null && k.delta !== undefined ? ` (${k.delta >= 0 ? "+" : ""}${fmt(k.delta)})` : "", ` ${k.change}`,
          k.significant ? " · significant" : "", flaky(k.after) ? ` · flips (${k.after.passed_runs}/${k.after.runs} passed)` : "")))));
    }
    flips.hidden = !flipped;
    flips.textContent = `${flipped} listed flip between repeated runs`;
  };
  addRows(c.cases, p);
  const listed = h("span", { class: "muted listed" });
  const more = h("button", { id: "cmp-more", text: `Show ${PAGE} more` });
  const footer = h("div", { class: "row" }, listed, more);
  const update = () => {
    const n = body.childElementCount;
    listed.textContent = `${n} of ${c.total} ${show === "all" ? "" : SHOWN[show] + " "}case${c.total === 1 ? "" : "s"} listed`;
    more.hidden = n >= c.total;
  };
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      const next = await casesFrom(body.childElementCount);
      addRows(next.cases, await pairedOf(next.cases));
    } finally { more.disabled = false; update(); }
  });
  update();
  add(page, h("div", { class: "table-wrap" }, h("table", { class: "cmp" }, h("thead", {}, h("tr", {}, ["case", "change", "before", "after", "from its runs", "criteria"].map((t) => h("th", { text: t })))), body)),
    c.total ? footer : h("p", { class: "muted", text: show === "changed" ? "Nothing changed." : `No ${SHOWN[show]} case.` }));
  paint(token, page);
}

/** One side of the comparison: its run id (the document id on hover) and when it ran.
 * @param {RunView} run @param {string} id @param {string} set */
function runCell(run, id, set) {
  return h("dd", { class: "run-named" }, h("a", { class: "mono", href: link("runs", id), title: `document ${id}`, text: runLabel(run) }),
    h("span", { class: "muted", text: ` · ${fmtTime(run.created)} · ${set}` }));
}

const pct = (x) => (x === null || x === undefined ? "–" : `${(100 * x).toFixed(1)}%`);
const pval = (x) => (x === null || x === undefined ? "–" : x < 0.001 ? "<0.001" : x.toFixed(3));
const ci = (c, scale, digits) => (c ? ` [${(c[0] * scale).toFixed(digits)}, ${(c[1] * scale).toFixed(digits)}]` : "");
const caseTone = { REGRESSED: "bad", IMPROVED: "ok", INCONCLUSIVE: "na", UNCHANGED: "info", ADDED: "info", REMOVED: "na" };

/** @param {PairedCaseView|undefined} x */
function caseChange(x) {
  if (!x) return "–";
  const k = (v) => (v ? `pass@k ${v[0].toFixed(2)}, pass^k ${v[1].toFixed(2)}` : "–");
  return h("span", {}, h("span", { class: "badge " + caseTone[x.change], title: `Fisher p ${pval(x.p_value)}`, text: x.change }),
    h("div", { class: "muted", text: `A ${x.passed_a}/${x.runs_a} (${k(x.pass_k_a)})` }),
    h("div", { class: "muted", text: `B ${x.passed_b}/${x.runs_b} (${k(x.pass_k_b)})` }));
}

/** The decision first (and whether the runs' criteria differ), then each measure's differences with
 * intervals and p-values, the cases' counts and why some are INCONCLUSIVE (all computed by the server).
 * @param {PairedView} p */
function pairedCard(p) {
  const rows = [];
  for (const m of p.measures) {
    const tone = m.significant === "regression" ? "bad" : m.significant === "improvement" ? "ok" : "";
    const diff = m.pass_a === null || m.pass_b === null ? "–" : `${(100 * (m.pass_b - m.pass_a)).toFixed(1)} pt${ci(m.pass_ci, 100, 1)}`;
    rows.push(h("tr", { class: tone }, h("td", { class: "mono", text: m.name }), h("td", { text: "pass" }),
      h("td", { text: `${pct(m.pass_a)} → ${pct(m.pass_b)}` }), h("td", { text: diff }),
      h("td", { text: pval(m.p_value) }), h("td", { text: pval(m.p_adjusted) }), h("td", { text: m.significant || "" })));
    if (m.score_a !== null && m.score_b !== null) {
      rows.push(h("tr", {}, h("td"), h("td", { text: "score" }), h("td", { text: `${fmt(m.score_a)} → ${fmt(m.score_b)}` }),
        h("td", { text: `${(m.score_b - m.score_a).toFixed(3)}${ci(m.score_ci, 1, 3)}` }), h("td", { text: pval(m.score_p) }), h("td"), h("td")));
    }
  }
  const k = (v) => (v ? `pass@${p.k} ${v[0].toFixed(3)}, pass^${p.k} ${v[1].toFixed(3)}` : "–");
  return h("div", { class: "card paired" },
    h("p", {}, h("span", { class: "badge decision " + (p.gate_failed ? "bad" : "ok"), text: p.decision })),
    // (as `agenteval compare` notes it: a bar lowered in B makes the same scores an "improvement")
    p.criteria_differ.length ? h("p", { class: "note na criteria-differ", text: `The runs' criteria differ, so their passes are judged against different bars: ${p.criteria_differ.join("; ")}.` }) : null,
    h("div", { class: "table-wrap" }, h("table", { class: "cmp measures" }, h("thead", {}, h("tr", {}, ["measure", "", "A → B", "Δ B−A [95% CI]", "p", "p (Holm)", ""].map((t) => h("th", { text: t })))),
      h("tbody", {}, rows))),
    h("div", { class: "row paired-counts", style: "margin-top: 8px" },
      Object.entries(p.counts).filter(([, n]) => n).map(([w, n]) => h("span", { class: "badge " + (caseTone[w] || "info"), text: `${n} ${w}` }))),
    p.inconclusive ? h("p", { class: "note na inconclusive", text: p.inconclusive }) : null,
    h("p", { class: "muted", text: `A: ${k(p.pass_k_a)} · B: ${k(p.pass_k_b)}. p: exact McNemar on run pairs (sign test on scores); the decision reads the Holm-adjusted p at alpha ${p.alpha}.` }));
}

/** Runs the compare page's menus list (the newest). */
const PICKED = 100;

async function comparePicker(token) {
  /** @type {Array<RunRow>} */
  const listed = await api(`/api/runs?limit=${PICKED + 1}`);
  const rows = listed.slice(0, PICKED);
  const opt = (r) => h("option", { value: r.run_id, text: `${runLabel(r)} · ${fmtTime(r.created)} · ${r.eval_set_id} · ${r.cases_passed}/${r.cases_total}` });
  const a = h("select", { id: "cmp-a" }, rows.map(opt)), b = h("select", { id: "cmp-b" }, rows.map(opt));
  if (rows.length > 1) a.value = rows[1].run_id;
  paint(token, h("div", { class: "page" }, h("h2", { text: "Compare two runs" }),
    h("div", { class: "card row" }, h("label", {}, "baseline ", a), h("label", {}, "candidate ", b),
      h("button", { class: "primary", text: "Compare", onclick: () => go(link("compare", a.value, b.value)) })),
    // a long history does not fit the menus: say so, and where any two runs can be picked
    listed.length > PICKED ? h("p", { class: "muted", id: "cmp-older" }, `The ${PICKED} newest runs are listed. To compare older ones, tick two in the `,
      h("a", { href: "#/runs", text: "run history" }), " (filter it by agent or eval set; ticks stay across its pages).") : null));
}
