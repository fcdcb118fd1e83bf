/* The case editor's knowledge of the agent's tools (GET /apps/{app}/tools): tool names offered
 * as the call name is typed, and under each expected call its declared arguments (type, required)
 * with a button adding the required ones it lacks. */

import { api } from "../api.js";
import { h, replace } from "../dom.js";
import { enc } from "../format.js";

/** The agent whose case is being edited (set by the case editor). */
export const editing = { app: "" };

/** @type {Map<string, Promise<Array<ToolInfo>>>} */
const asked = new Map();

/** The tools `app` declares (asked once per page). @param {string} app */
export function declaredTools(app) {
  if (!asked.has(app)) asked.set(app, api(`/apps/${enc(app)}/tools`).then((/** @type {Array<ToolInfo>} */ t) => t).catch(() => []));
  return asked.get(app);
}

/** The tool names, for the call-name inputs' `list`. */
export function toolDatalist() {
  const list = h("datalist", { id: "declared-tools" });
  declaredTools(editing.app).then((tools) => replace(list, tools.map((t) => h("option", { value: t.name, label: t.description.split("\n")[0] }))));
  return list;
}

const EMPTY = { string: "", integer: 0, number: 0, boolean: false, object: {}, array: [] };

/** Under one expected call: the declared tool's arguments, and "+ required arguments" adding
 * the missing ones (an empty value of their type); a name the agent does not declare says so. */
export function callHint(call, commit) {
  const hint = h("div", { class: "call-hint muted small" });
  declaredTools(editing.app).then((tools) => {
    if (!tools.length) return;
    const tool = tools.find((t) => t.name === call.name);
    if (!tool) { replace(hint, `the agent declares no tool ${JSON.stringify(call.name)}`); return; }
    const missing = tool.params.filter((p) => p.required && !(p.name in call.args));
    replace(hint, tool.params.length ? tool.params.map((p, i) => [i ? ", " : "", h("span", { class: p.required ? "req" : "", title: p.description, text: `${p.name}: ${p.type}${p.required ? "*" : ""}` })]) : "no arguments",
      missing.length ? h("button", { class: "icon fill-args", text: "+ required arguments", onclick: () => {
        for (const p of missing) call.args[p.name] = structuredClone(EMPTY[p.type] ?? "");
        commit();
      } }) : null);
  });
  return hint;
}
