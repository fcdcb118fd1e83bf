/* agenteval web: one page over the JSON API documented in docs/web-api.md. This module is the
 * entry point (index.html loads it as a module): the router from the hash to a view, and the start.
 * The views are in views/, one per screen; dom.js, format.js, api.js, nav.js and state.js are shared.
 *
 * Safety rule for every module: every string that came from an agent, a judge, a file or the
 * server goes into the page as text (dom.js's h() sets textContent or setAttribute), never
 * through innerHTML, so a reply like `<script>` or `"><img onerror=...>` stays text.
 * Links are built from hash routes with encodeURIComponent, never from data alone.
 */

import { api } from "./api.js";
import { $, errorBox, h, replace, toast } from "./dom.js";
import { go, guardLeaving, link, mayLeave, paint, parseHash, setRouter, unsaved } from "./nav.js";
import { S } from "./state.js";
import { showApp } from "./views/agent.js";
import { showCaseResult } from "./views/case.js";
import { showCompare } from "./views/compare.js";
import { showExplore } from "./views/explore.js";
import { showMatrix } from "./views/matrix.js";
import { showRun } from "./views/run.js";
import { showRuns } from "./views/runs.js";
import { closeDrawer, dismissDrawer } from "./views/span.js";

let shownHash = location.hash; // the address of the view on screen: where a refused navigation returns

async function route() {
  if (location.hash !== shownHash && !mayLeave()) { history.replaceState(null, "", shownHash || "#/"); return; }
  shownHash = location.hash;
  guardLeaving(() => null); // the new view sets its own
  // a finished run's box whose results are now on screen has done its job: it would only cover them
  for (const a of document.querySelectorAll("#dock .prog.done .open-results")) if (a.getAttribute("href") === location.hash) a.closest(".prog")?.remove();
  const token = ++S.route;
  const { parts, query } = parseHash();
  closeDrawer();
  markNav(parts[0] || "app");
  try {
    if (!parts.length) return await goHome();
    const [head, a, b, c, ...rest] = parts;
    if (head === "app" && a) return await showApp(token, a, parts.slice(2));
    if (head === "runs" && !a) return await showRuns(token, query);
    if (head === "runs" && b === "cases" && c) return await showCaseResult(token, a, c, pairs(rest));
    if (head === "runs" && a && b === "explore") return await showExplore(token, a, query);
    if (head === "matrix") return await showMatrix(token, query);
    if (head === "runs") return await showRun(token, a, query);
    if (head === "compare") return await showCompare(token, a, b, query);
    paint(token, h("div", { class: "page" }, errorBox(new Error("no such page: " + location.hash))));
  } catch (err) {
    paint(token, h("div", { class: "page" }, errorBox(err)));
  }
}

/** ["run", "1", "inv", "2"] → {run: "1", inv: "2"}: optional parts of a deep link. */
function pairs(list) { const o = {}; for (let i = 0; i + 1 < list.length; i += 2) o[list[i]] = list[i + 1]; return o; }

function markNav(head) {
  const on = head === "runs" || head === "matrix" ? "nav-runs" : head === "compare" ? "nav-compare" : "nav-chat";
  for (const id of ["nav-chat", "nav-runs", "nav-compare"]) $("#" + id).classList.toggle("on", id === on);
}

async function loadApps() {
  S.apps = await api("/api/apps");
  const picker = $("#app-picker");
  replace(picker, h("option", { value: "", text: S.apps.length ? "choose…" : "no agents found" }),
    S.apps.map((a) => h("option", { value: a.name, text: a.name + (a.error ? " (failed to load)" : "") })));
}

async function goHome() {
  const first = S.apps.find((a) => !a.error) || S.apps[0];
  if (!first) {
    paint(S.route, h("div", { class: "page" }, h("p", { class: "muted", text: "No agents found in the agents folder." })));
    return;
  }
  history.replaceState(null, "", link("app", first.name));
  route();
}

async function openResultFile(file) {
  try {
    const text = await file.text();
    /** @type {RunRef} */
    const out = await api("/api/results/open", { method: "POST", body: text });
    toast(`opened ${file.name}`);
    go(link("runs", out.run_id));
  } catch (err) { toast(`${file.name}: ${err.message}`, true); }
}

async function start() {
  setRouter(route);
  $("#app-picker").addEventListener("change", (e) => { if (e.target.value) { S.session = null; go(link("app", e.target.value)); } });
  // a button (a label around the hidden input could not be reached with Tab) opens the file chooser
  $("#open-file-button").addEventListener("click", () => $("#open-file").click());
  $("#open-file").addEventListener("change", (e) => { const f = e.target.files[0]; e.target.value = ""; if (f) openResultFile(f); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") dismissDrawer(); });
  window.addEventListener("hashchange", route);
  // a link to the address already shown is no hashchange: rebuild the view (after a failed
  // request, the page's own link is how a user retries), unless unsaved work would be lost
  document.addEventListener("click", (e) => {
    const a = e.target instanceof Element ? e.target.closest("a[href^='#']") : null;
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
    if (a.getAttribute("href") === location.hash && mayLeave()) { e.preventDefault(); route(); }
  });
  // unsaved work: the browser asks its own question before a reload or closing the tab
  window.addEventListener("beforeunload", (e) => { if (unsaved()) e.preventDefault(); });
  try { await loadApps(); } catch (err) { replace($("#view"), h("div", { class: "page" }, errorBox(err))); return; }
  route();
}

start();
