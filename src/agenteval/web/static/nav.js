/* Navigation: hash routes (`#/runs/<id>`), links to them, and painting a view unless a newer
 * navigation came first. The router itself is app.js's; views reach it through go() and reroute(). */

import { $, replace } from "./dom.js";
import { enc } from "./format.js";
import { S } from "./state.js";

/** `#/runs/abc%2Fd?app=x` → {parts: ["runs", "abc/d"], query: {app: "x"}}. */
export function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, qs] = raw.split("?");
  const decode = (p) => { try { return decodeURIComponent(p); } catch { return p; } };
  return { parts: path ? path.split("/").map(decode) : [], query: Object.fromEntries(new URLSearchParams(qs || "")) };
}

export function link(...parts) { return "#/" + parts.map((p) => enc(String(p))).join("/"); }

/** The router (app.js's `route`): set once at start, called when a link leads to the page shown. */
let router = () => {};
export function setRouter(fn) { router = fn; }
export function reroute() { return router(); }

export function go(hash) { if (location.hash === hash) reroute(); else location.hash = hash; }

/** What leaving the view would lose: a view with unsaved work sets a function returning the
 * question to ask (null when nothing would be lost); the router asks it before every navigation. */
let leaving = () => null;
export function guardLeaving(fn) { leaving = fn; }

/** The question leaving would ask (null: nothing unsaved). */
export function unsaved() { return leaving(); }

/** True when the view may be left: nothing unsaved, or the user agreed to drop it. */
export function mayLeave() {
  const question = leaving();
  if (!question) return true;
  if (!confirm(question)) return false;
  leaving = () => null;
  return true;
}

/** Rewrites one query parameter of the address (null removes it) without navigating: the view
 * keeps its state, and a reload or a shared link comes back to it. */
export function setQuery(key, value) {
  const { parts, query } = parseHash();
  if (value === null || value === undefined || value === "") delete query[key]; else query[key] = String(value);
  const q = new URLSearchParams(query).toString();
  history.replaceState(null, "", link(...parts) + (q ? "?" + q : ""));
}

/** Shows agent `app` in the header's agent picker: the agent of the page on screen (left as it
 * is when the page names none, or an agent the picker does not list). @param {string|null|undefined} app */
export function showAgent(app) {
  const picker = /** @type {HTMLSelectElement} */ ($("#app-picker"));
  if (app && S.apps.some((a) => a.name === app)) picker.value = app;
}

/** Paints a view's node unless the user navigated elsewhere meanwhile. */
export function paint(token, node) { if (token === S.route) replace($("#view"), node); }
