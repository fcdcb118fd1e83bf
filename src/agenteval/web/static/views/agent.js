/* An agent's page: the sidebar beside the chat or an eval set. */

import { api, sessionsPath } from "../api.js";
import { $, errorBox, h } from "../dom.js";
import { enc } from "../format.js";
import { link, paint, parseHash } from "../nav.js";
import { S } from "../state.js";
import { chatView } from "./chat.js";
import { evalSetView } from "./evalset.js";
import { SIDE_TABS, renderSide } from "./side.js";

export async function showApp(token, app, sub) {
  $("#app-picker").value = app;
  $("#nav-chat").setAttribute("href", link("app", app));
  const info = S.apps.find((a) => a.name === app);
  if (!info) throw new Error(`no agent named ${app} in the agents folder`);
  const [kind, id, more, caseId] = sub;
  const { query } = parseHash();
  if (SIDE_TABS.includes(query.tab)) S.sideTab = query.tab; // the address names the side tab
  else if (kind === "evalsets" && S.sideTab !== "eval") S.sideTab = "eval";
  if (kind === "chat" && id && (!S.session || S.session.id !== id || S.session.app_name !== app)) {
    S.session = await api(`${sessionsPath(app)}/${enc(id)}`);
  }
  if (S.session && S.session.app_name !== app) S.session = null;
  // the bare app address shows the session in hand, so its address names it (a deep link)
  if (!kind && S.session) history.replaceState(null, "", link("app", app, "chat", S.session.id) + (query.tab ? "?tab=" + query.tab : ""));
  const main = h("section", { class: "main" });
  const side = h("aside", { class: "side" });
  const view = h("div", { class: "app" }, side, main);
  if (info.error) main.append(h("div", { class: "page" }, errorBox(new Error(`${app} failed to load: ${info.error}`))));
  else if (kind === "evalsets" && id) await evalSetView(main, app, id, more === "cases" ? caseId : null);
  else chatView(main, app);
  // below 900 px the sidebar folds away behind this button
  main.prepend(h("button", { class: "side-toggle", id: "side-toggle", "aria-expanded": "false", text: "☰ Sessions, eval sets, trace",
    onclick: (e) => { const open = view.classList.toggle("side-open"); e.currentTarget.setAttribute("aria-expanded", String(open)); } }));
  paint(token, view);
  renderSide(side, app, kind === "evalsets" ? id : null);
}
