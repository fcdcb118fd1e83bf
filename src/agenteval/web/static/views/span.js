/* The drawer of one span: its raw event, request, response, and the steps as a graph. */

import { $, h, replace, svg } from "../dom.js";
import { fmtSecs, json, short, tokenText } from "../format.js";
import { parseHash, setQuery } from "../nav.js";

const DRAWER_TABS = ["Event", "Request", "Response", "Graph"];

/** @param {Span} s */
export function openSpan(s, rows, tab = "Event") {
  const drawer = $("#drawer");
  drawer.hidden = false;
  const content = h("div", { class: "dcontent" });
  const tabs = h("nav", { class: "tabs" }, DRAWER_TABS.map((t) =>
    h("button", { class: t === tab ? "on" : "", "data-tab": t, text: t, onclick: () => openSpan(s, rows, t) })));
  const took = fmtSecs(s.end === null || s.end === undefined ? null : s.end - s.start);
  replace(drawer, h("div", { class: "dtop" }, h("strong", { text: s.name }), h("span", { class: "muted", text: `${s.kind} · ${took}` }),
    tabs, h("span", { class: "grow" }), h("button", { class: "icon", title: "close", text: "✕", onclick: dismissDrawer })), content);
  const a = s.attributes;
  if (tab === "Event") content.append(h("pre", { class: "raw-span", text: json(s) }));
  if (tab === "Request") content.append(spanPayload(s, a, "request"));
  if (tab === "Response") content.append(spanPayload(s, a, "response"));
  if (tab === "Graph") content.append(stepGraph(rows, s.span_id));
}

/** Closes the drawer at the user's asking: the address no longer names the span. The address
 * is what a trace drawn again reopens (a reload, a route, a reply re-rendering the side), and
 * such a render hides the drawer while it loads: so the span leaves the address even when the
 * drawer is hidden, or the render would reopen what the user closed. */
export function dismissDrawer() {
  if (parseHash().query.span !== undefined) setQuery("span", null);
  closeDrawer();
}

export function closeDrawer() { const d = $("#drawer"); if (d) { d.hidden = true; d.replaceChildren(); } }

/** Structured attribute values are JSON text in the trace; show them parsed when they parse. */
function attr(v) { if (typeof v === "string" && /^[[{]/.test(v.trim())) { try { return JSON.parse(v); } catch { /* text */ } } return v; }

/** @param {Span} s */
function spanPayload(s, a, which) {
  const keys = which === "request"
    ? { llm: ["gen_ai.input.messages", "gen_ai.request.tools"], tool: ["gen_ai.tool.call.arguments"], judge: ["input.value"], other: ["input.value"] }
    : { llm: ["gen_ai.output.messages", "output.value"], tool: ["gen_ai.tool.call.result", "output.value"], judge: ["output.value"], other: ["output.value"] };
  const list = keys[s.kind] || keys.other;
  const out = h("div", { class: "msgs payload" });
  if (which === "request" && a["gen_ai.request.model"]) out.append(h("p", { class: "muted", text: "model: " + a["gen_ai.request.model"] }));
  if (which === "response" && a["gen_ai.usage.input_tokens"] !== undefined) {
    const cached = a["gen_ai.usage.cache_read.input_tokens"];
    out.append(h("p", { class: "muted", text: `tokens: ${a["gen_ai.usage.input_tokens"]} in / ${a["gen_ai.usage.output_tokens"] ?? "?"} out`
      + (cached ? ` (${cached} cached)` : "") }));
  }
  let any = false;
  for (const k of list) {
    if (a[k] === undefined || a[k] === null) continue;
    if (k.endsWith(".output.messages") && a["output.value"] !== undefined && list.includes("output.value")) { /* both shown: messages carry tool calls */ }
    any = true;
    const v = attr(a[k]);
    out.append(h("h4", { text: k }));
    if (Array.isArray(v) && v.every((m) => m && typeof m === "object" && "role" in m)) {
      for (const m of v) out.append(h("div", { class: "m" }, h("div", { class: "role", text: m.role }),
        h("pre", { text: typeof m.content === "string" ? m.content : json(m.content ?? null) }),
        m.tool_calls ? h("pre", { class: "muted", text: "tool calls: " + json(m.tool_calls) }) : null));
    } else out.append(h("pre", { class: "box", text: typeof v === "string" ? v : json(v) }));
  }
  if (s.error) { any = true; out.append(h("div", { class: "error-box", text: s.error })); }
  const hint = s.kind === "agent" || s.kind === "invocation" ? ": open one of its model or tool steps" : "";
  if (!any) out.append(h("p", { class: "muted", text: `No ${which} recorded on this span${hint}.` }));
  if (s.truncated.length) out.append(h("p", { class: "muted", text: "cut to 2,000 characters: " + s.truncated.join(", ") }));
  return out;
}

/** The steps of the message as a graph: lanes for agent, model and tools, time going down,
 * arrows from each step to the next; the selected span is outlined. */
function stepGraph(rows, selected) {
  const lane = { case: 0, invocation: 0, agent: 0, user_simulator: 0, scoring: 0, other: 0, llm: 1, judge: 1, tool: 2 };
  const W = 200, H = 34, GAP = 14;
  const steps = rows.slice(0, 80);
  const width = 3 * (W + 40) + 20, height = 30 + steps.length * (H + GAP);
  const root = svg("svg", { class: "graph", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" },
      svg("path", { d: "M0,0L10,5L0,10z", fill: "#98a2b3" }))));
  ["agent", "model", "tools"].forEach((t, i) => root.append(svg("text", { x: 20 + i * (W + 40), y: 14, text: t.toUpperCase() })));
  const pos = steps.map(({ span: s }, i) => ({ s, x: 20 + (lane[s.kind] ?? 0) * (W + 40), y: 24 + i * (H + GAP) }));
  pos.forEach((p, i) => {
    if (!i) return;
    const q = pos[i - 1];
    root.append(svg("path", { d: `M${q.x + W / 2},${q.y + H} L${p.x + W / 2},${p.y}`, stroke: "#98a2b3", fill: "none", "marker-end": "url(#arrow)" }));
  });
  for (const p of pos) {
    const s = p.s, a = s.attributes;
    const color = { llm: "#7c5cd6", tool: "#e08a1e", judge: "#16794a" }[s.kind] || "#2f6fde";
    const sub = [fmtSecs(s.end == null ? null : s.end - s.start), tokenText(a) && tokenText(a) + " tokens"].filter(Boolean).join(" · ");
    root.append(svg("g", { "data-span": s.span_id },
      svg("rect", { x: p.x, y: p.y, width: W, height: H, rx: 6, fill: s.span_id === selected ? "#d4e3fb" : "#fff",
        stroke: s.status === "error" ? "#b42318" : color, "stroke-width": s.span_id === selected ? 3 : 1.5 }),
      svg("text", { x: p.x + 8, y: p.y + 14, style: "font-weight: 600; fill: #1d2430", text: short(s.name, 27) }),
      svg("text", { x: p.x + 8, y: p.y + 27, text: sub }), svg("title", { text: s.name })));
  }
  return root;
}
