/* SVG charts: line and bar charts, a score histogram, a titled chart with its legend. */

import { h, svg } from "./dom.js";
import { fmt, fmtSecs } from "./format.js";

export const COLORS = ["#2f6fde", "#e08a1e", "#16794a", "#b42318", "#7c5cd6", "#0e9384", "#c11574", "#667085"];

export function chart(title, svgEl, series) {
  return h("div", { class: "chart" }, h("div", { class: "t", text: title }), svgEl,
    series ? h("div", { class: "legend" }, series.map((s, i) => h("span", {}, h("i", { style: `background: ${COLORS[i % COLORS.length]}` }), s.name))) : null);
}

/** A line chart of values in [0, 1]; each point's tooltip names the run. */
export function lineChart(series, labels, w, ht) {
  const pad = { l: 30, r: 10, t: 8, b: 18 };
  const n = labels.length;
  const x = (i) => pad.l + (n > 1 ? (i * (w - pad.l - pad.r)) / (n - 1) : 0);
  const y = (v) => pad.t + (1 - v) * (ht - pad.t - pad.b);
  const root = svg("svg", { width: w, height: ht, viewBox: `0 0 ${w} ${ht}`, role: "img" });
  for (const v of [0, 0.5, 1]) {
    root.append(svg("line", { x1: pad.l, x2: w - pad.r, y1: y(v), y2: y(v), stroke: "#e4e7ec" }),
      svg("text", { x: 4, y: y(v) + 3, text: v.toFixed(1) }));
  }
  series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length];
    const pts = s.values.map((v, i) => (v === null || v === undefined ? null : [x(i), y(Math.max(0, Math.min(1, v)))]));
    const d = pts.map((p, i) => (p ? `${i && pts[i - 1] ? "L" : "M"}${p[0].toFixed(1)},${p[1].toFixed(1)}` : "")).join("");
    root.append(svg("path", { d, fill: "none", stroke: color, "stroke-width": 2 }));
    pts.forEach((p, i) => p && root.append(svg("circle", { cx: p[0], cy: p[1], r: 3, fill: color },
      svg("title", { text: `${s.name} ${fmt(s.values[i])} · ${labels[i]}` }))));
  });
  return root;
}

/** Vertical bars, one per item ({label, value}); the tooltip gives the exact value. */
export function barChart(items, w, ht, unit, xTicks) {
  const pad = { l: 46, r: 6, t: 8, b: 18 };
  const label = (v) => (unit === " s" ? fmtSecs(v) : fmt(v, v < 10 ? 2 : 0) + unit);
  const root = svg("svg", { width: w, height: ht, viewBox: `0 0 ${w} ${ht}`, role: "img" });
  // ticks spread evenly along the x axis (the histogram's 0, 0.5, 1)
  (xTicks || []).forEach((t, i, all) => root.append(svg("text", { x: pad.l + (i * (w - pad.l - pad.r - 12)) / Math.max(1, all.length - 1), y: ht - 4, text: t })));
  const max = Math.max(1e-9, ...items.map((i) => i.value || 0));
  const bw = Math.min(28, Math.max(1, (w - pad.l - pad.r) / Math.max(1, items.length))); // few cases: no slabs
  root.append(svg("text", { x: 2, y: pad.t + 8, text: label(max) }), svg("text", { x: 2, y: ht - pad.b, text: "0" }));
  items.forEach((it, i) => {
    const hgt = ((it.value || 0) / max) * (ht - pad.t - pad.b);
    root.append(svg("rect", { x: pad.l + i * bw, y: ht - pad.b - hgt, width: Math.max(1, bw - 1), height: hgt, fill: it.color || COLORS[0] },
      svg("title", { text: `${it.label}: ${label(it.value || 0)}` })));
  });
  return root;
}

/** Scores of one criterion in 10 bins over [lo, hi]: the run's score distribution. */
export function histogram(scores, lo = 0, hi = 1) {
  const bins = Array(10).fill(0);
  for (const s of scores) bins[Math.min(9, Math.max(0, Math.floor(((s - lo) / (hi - lo || 1)) * 10)))]++;
  const edge = (i) => fmt(lo + (i * (hi - lo)) / 10);
  // low scores red, middling amber, high green
  return bins.map((count, i) => ({ label: `${edge(i)}–${edge(i + 1)}`, value: count, color: i >= 8 ? COLORS[2] : i < 5 ? COLORS[3] : COLORS[1] }));
}
