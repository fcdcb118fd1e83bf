/* Building the page: elements and SVG through DOM calls only (the safety rule in app.js: data is
 * always text, never markup), toasts, and the small shared pieces (badges, key/value lists). */

import { statusClass, statusOf } from "./format.js";

/** Builds an element. props: class, text, style, on<event>, value, checked, other attributes. */
export function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = String(v);
    else if (k === "style") el.style.cssText = v; // literal styles written in the page's code only
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "value" || k === "checked") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : String(kid)); // a string becomes a Text node
  }
  return el;
}

const SVGNS = "http://www.w3.org/2000/svg";

/** Builds an SVG element; attribute values and text are set through DOM calls only. */
export function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") el.textContent = String(v);
    else if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  for (const kid of kids.flat(Infinity)) if (kid) el.append(kid);
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);

/** Appends the children that exist (null, undefined and false are skipped, unlike Element.append). */
export function add(el, ...kids) { for (const k of kids.flat(Infinity)) if (k) el.append(k); return el; }

export function replace(el, ...kids) { el.replaceChildren(); return add(el, ...kids); }

/** A message in the corner (bottom left, clear of the pages' action buttons), with a close
 * button; it goes by itself after a while (an error stays longer). */
export function toast(message, bad = false) {
  const el = h("div", { class: "toast" + (bad ? " bad" : ""), role: bad ? "alert" : "status" }, h("span", { text: message }),
    h("button", { class: "icon close", title: "dismiss", "aria-label": "dismiss", text: "✕", onclick: () => el.remove() }));
  $("#toasts").append(el);
  setTimeout(() => el.remove(), bad ? 10000 : 4000);
}

export function errorBox(err) { return h("div", { class: "error-box", role: "alert", text: String(err.message || err) }); }

export function badge(v, label) { return h("span", { class: "badge " + statusClass(v), text: label || statusOf(v) }); }

export function headRow(titles) { return h("thead", {}, h("tr", {}, titles.map((t) => h("th", { text: t })))); }

export function kvs(obj) {
  return Object.entries(obj).filter(([, v]) => v !== null && v !== undefined && v !== "–" && v !== "")
    .flatMap(([k, v]) => [h("dt", { text: k }), h("dd", { text: v })]);
}
