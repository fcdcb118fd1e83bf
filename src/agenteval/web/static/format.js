/* Text formatting, and readers of ADK's data forms (statuses, contents, tool calls): pure functions,
 * no DOM. */

export const enc = encodeURIComponent;

export function fmt(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  return typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toFixed(digits)) : String(x);
}

export function fmtTime(epoch) { return epoch ? new Date(epoch * 1000).toLocaleString() : "–"; }

export function fmtSecs(s) {
  if (s === null || s === undefined) return "–";
  return s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(s < 10 ? 2 : 1)} s`;
}

export function json(v) { return JSON.stringify(v, null, 2); }

export function oneLine(v) { return JSON.stringify(v); }

export function short(text, n = 60) { text = String(text ?? ""); return text.length > n ? text.slice(0, n - 1) + "…" : text; }

/** Statuses come as ADK's integers or as names; the page shows one word and one colour each. */
const STATUS = { 1: "passed", 2: "failed", 3: "not evaluated", 4: "informational" };

export function statusOf(v) {
  if (v === null || v === undefined) return "none";
  if (typeof v === "number") return STATUS[v] || String(v);
  const s = String(v).toLowerCase().replace(/_/g, " ");
  return s === "pass" ? "passed" : s === "fail" ? "failed" : s;
}

export function statusClass(v) {
  return { passed: "ok", failed: "bad", "not evaluated": "na", informational: "info" }[statusOf(v)] || "info";
}

export const INFORMATIONAL = new Set(["tool_call_count_v1", "inference_call_count_v1", "token_usage_v1", "invocation_duration_v1"]);

/** Text of a genai Content ({role, parts: [{text}]}), as the runner reads it. */
export function contentText(c) {
  if (!c || !c.parts) return "";
  return c.parts.filter((p) => p.text).map((p) => p.text).join("\n");
}

/** Tool calls of an invocation, from either of ADK's intermediate-data forms. */
export function invCalls(inv) {
  const d = inv && inv.intermediate_data;
  if (!d) return [];
  if (Array.isArray(d.tool_uses)) return d.tool_uses;
  return (d.invocation_events || []).flatMap((e) =>
    ((e.content && e.content.parts) || []).filter((p) => p.function_call).map((p) => p.function_call));
}

export function callLine(c) { return `${c.name}(${c.args === null || c.args === undefined ? "" : oneLine(c.args)})`; }

/** "412/18" (input/output tokens of a model or judge call), "412 in" without an output count. */
export function tokenText(a) {
  const i = a["gen_ai.usage.input_tokens"], o = a["gen_ai.usage.output_tokens"];
  if (i === undefined || i === null) return "";
  return o === undefined || o === null ? `${i} in` : `${i}/${o}`;
}
