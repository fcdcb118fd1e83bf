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

/** Paints a view's node unless the user navigated elsewhere meanwhile. */
export function paint(token, node) { if (token === S.route) replace($("#view"), node); }
