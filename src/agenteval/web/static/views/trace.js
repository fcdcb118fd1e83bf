/* A trace as rows grouped by user message, with timings and tokens. */

import { $, h } from "../dom.js";
import { contentText, fmtSecs, tokenText } from "../format.js";
import { parseHash, setQuery } from "../nav.js";
import { openSpan } from "./span.js";

/** Spans in tree order with their depth, children by start time, from the given roots. */
function treeOrder(spans, roots) {
  const kids = new Map();
  for (const s of spans) { const k = s.parent_id || ""; if (!kids.has(k)) kids.set(k, []); kids.get(k).push(s); }
  for (const list of kids.values()) list.sort((p, q) => p.start - q.start);
  const out = [];
  const walk = (s, depth) => { out.push({ span: s, depth }); for (const c of kids.get(s.span_id) || []) walk(c, depth + 1); };
  for (const r of roots) walk(r, 0);
  return out;
}

function rootsOf(spans) {
  const ids = new Set(spans.map((s) => s.span_id));
  return spans.filter((s) => !s.parent_id || !ids.has(s.parent_id)).sort((p, q) => p.start - q.start);
}

/** A case's trace grouped by invocation (its user message), then what came after (scoring).
 * @param {EvalCaseResult} r */
export function caseGroups(r) {
  const spans = r.trace.spans;
  const index = (s) => s.attributes["agenteval.invocation_index"] ?? 0;
  const invs = spans.filter((s) => s.kind === "invocation").sort((p, q) => index(p) - index(q) || p.start - q.start);
  const pers = r.eval_metric_result_per_invocation;
  const userText = (i) => contentText(pers[i] && pers[i].actual_invocation.user_content);
  const groups = invs.map((inv, i) => ({ label: userText(i) || inv.attributes["input.value"] || inv.name,
    spans, roots: [inv], target: `#inv-${i}`, invocation: index(inv) }));
  const rest = rootsOf(spans).flatMap((root) => (root.kind === "case"
    ? spans.filter((s) => s.parent_id === root.span_id && s.kind !== "invocation") : root.kind === "invocation" ? [] : [root]));
  if (rest.length) groups.push({ label: "scoring and other steps", spans, roots: rest, target: null });
  return groups;
}

/** An invocation's agent tree, as the server computed it (facts and verdicts included): each
 * agent nested under the one that handed it control, called it as a tool or ran it as a
 * workflow stage; clicking an agent opens its run's span in the drawer.
 * @param {InvocationAgentsView} inv */
export function agentTree(inv, rows) {
  const box = h("ul", { class: "agent-tree", "data-invocation": inv.index });
  const stack = inv.roots.slice().reverse().map((node) => ({ node, into: box }));
  while (stack.length) {
    const { node, into } = stack.pop();
    const verdict = node.verdict ? h("span", { class: "verdict " + (node.passed ? "ok" : "bad"), text: node.verdict }) : null;
    const name = h("button", { class: "agent-name link", text: node.agent, title: node.via ? `reached by ${node.via}` : "first agent" });
    const run = rows.find((r) => r.span.span_id === node.span_ids[0]);
    if (run) name.addEventListener("click", () => openSpan(run.span, rows));
    else name.disabled = true;
    const kids = h("ul");
    into.append(h("li", { class: "agent", "data-agent": node.agent }, name, " ", h("span", { class: "muted", text: node.facts.join(" · ") }),
      verdict ? " " : null, verdict, node.children.length ? kids : null));
    for (const c of node.children.slice().reverse()) stack.push({ node: c, into: kids });
  }
  return h("div", { class: "agents" }, h("div", { class: "sublabel", text: "agents" }), box);
}

/** Rows grouped by user message; hovering highlights the message (group.target), clicking
 * opens the span in the drawer. Each row shows its timing against the group and its tokens.
 * `agents` (the case view's, empty for a single agent) puts each invocation's agent tree above
 * its rows. @param {Array<InvocationAgentsView>} [agents] */
export function traceView(groups, agents = []) {
  const box = h("div", { class: "trace" });
  const wanted = parseHash().query.span; // the span the address names (a reload, a shared link)
  let reopen = null;
  for (const g of groups) {
    const rows = treeOrder(g.spans, g.roots || rootsOf(g.spans));
    const t0 = Math.min(...rows.map((r) => r.span.start)), t1 = Math.max(...rows.map((r) => r.span.end ?? r.span.start));
    const span = Math.max(1e-6, t1 - t0);
    const el = h("div", { class: "tgroup" }, h("div", { class: "label", title: g.label, text: g.label || "(no message)" }));
    const tree = g.invocation === undefined ? null : agents.find((a) => a.index === g.invocation);
    if (tree) el.append(agentTree(tree, rows));
    for (const { span: s, depth } of rows) {
      const a = s.attributes;
      const tokens = tokenText(a);
      const dur = s.end === null || s.end === undefined ? null : s.end - s.start;
      const row = h("div", { class: "trow" + (s.status === "error" ? " err" : ""), "data-span": s.span_id, tabindex: 0, role: "button",
        title: `${s.name} · ${fmtSecs(dur)}${tokens ? " · tokens in/out " + tokens : ""}` },
        h("div", { class: "name", style: `padding-left: ${Math.min(depth, 12) * 12}px` }, h("span", { class: "k k-" + s.kind }), s.name),
        h("div", { class: "wf" }, h("div", { style: `left: ${(100 * (s.start - t0)) / span}%; width: ${(100 * (dur || 0)) / span}%` })),
        h("div", { class: "tok", text: tokens || fmtSecs(dur) }));
      row.addEventListener("mouseenter", () => highlight(g.target, true));
      row.addEventListener("mouseleave", () => highlight(g.target, false));
      const open = () => {
        for (const o of document.querySelectorAll(".trow.on")) o.classList.remove("on");
        row.classList.add("on");
        openSpan(s, rows);
      };
      row.addEventListener("click", () => { open(); setQuery("span", s.span_id); });
      row.addEventListener("focus", () => highlight(g.target, true));
      row.addEventListener("blur", () => highlight(g.target, false));
      if (s.span_id === wanted) reopen = open;
      el.append(row);
    }
    box.append(el);
  }
  box.addEventListener("keydown", (e) => keys(e, box));
  if (reopen) reopen();
  return box;
}

/** The trace from the keyboard: up and down (j, k) move between rows, Home and End to the
 * first and last, Enter or Space opens the row's span. */
function keys(e, box) {
  const row = e.target instanceof Element ? e.target.closest(".trow") : null;
  if (!row) return;
  const all = [...box.querySelectorAll(".trow")];
  const at = all.indexOf(row);
  const to = { ArrowDown: at + 1, j: at + 1, ArrowUp: at - 1, k: at - 1, Home: 0, End: all.length - 1 }[e.key];
  if (to !== undefined) { e.preventDefault(); const next = all[Math.max(0, Math.min(all.length - 1, to))]; next.focus(); next.scrollIntoView({ block: "nearest" }); }
  else if (e.key === "Enter" || e.key === " ") { e.preventDefault(); row.click(); }
}

function highlight(selector, on) {
  const el = selector && $(selector);
  if (!el) return;
  el.classList.toggle("hl", on);
  if (on) el.scrollIntoView({ block: "nearest" });
}
