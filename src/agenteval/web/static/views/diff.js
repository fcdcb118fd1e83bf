/* Differences between expected and actual: words of a response, arguments of tool calls. */

import { h } from "../dom.js";
import { oneLine } from "../format.js";

/** Argument-level diff rows (which call, which argument, expected vs actual) from the server's
 * pairing of expected and actual calls; calls not made or not expected are rows of their own.
 * @param {InvocationView} diff */
export function argDiffRows(diff) {
  const show = (v, missing) => (missing ? "(missing)" : oneLine(v ?? null));
  return diff.argument_diff.flatMap((p) => {
    const call = p.expected_index !== null ? `#${p.expected_index + 1}` : `actual #${p.actual_index + 1}`;
    if (p.status === "missing") return [{ call, tool: p.tool, arg: "–", expected: "(this call)", actual: "(not made)" }];
    if (p.status === "unexpected") return [{ call, tool: p.tool, arg: "–", expected: "(not expected)", actual: "(this call)" }];
    return p.arguments.map((a) => ({ call, tool: p.tool, arg: a.name,
      expected: show(a.expected, a.missing === "expected"), actual: show(a.actual, a.missing === "actual") }));
  });
}

/** Word-level diff (LCS) of two texts: words only in `a` struck out, only in `b` marked. Long
 * texts skip the O(n·m) table and show plainly. */
export function wordDiff(a, b) {
  const x = a.split(/(\s+)/), y = b.split(/(\s+)/);
  if (x.length * y.length > 400000 || a === b) return [h("span", { text: a }), h("span", { text: b })];
  const L = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--) for (let j = y.length - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const left = h("span"), right = h("span");
  let i = 0, j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) { left.append(x[i]); right.append(y[j]); i++; j++; }
    else if (j < y.length && (i === x.length || L[i][j + 1] >= L[i + 1][j])) right.append(h("ins", { text: y[j++] }));
    else left.append(h("del", { text: x[i++] }));
  }
  return [left, right];
}
