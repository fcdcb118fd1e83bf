/* The case editor's knowledge of the agent's tools (GET /apps/{app}/tools): tool names offered
 * as the call name is typed; under each expected call its declared arguments, each edited with
 * an input of its JSON schema type (number, integer, boolean, enum, object, array, string),
 * required ones marked, and messages naming the field whose value does not fit. */

import { api } from "../api.js";
import { h, replace } from "../dom.js";
import { enc, oneLine } from "../format.js";

/** The agent whose case is being edited (set by the case editor). */
export const editing = { app: "" };

/** @type {Map<string, Promise<Array<ToolInfo>>>} */
const asked = new Map();

/** The tools `app` declares (asked once per page). @param {string} app */
export function declaredTools(app) {
  if (!asked.has(app)) asked.set(app, api(`/apps/${enc(app)}/tools`).then((/** @type {Array<ToolInfo>} */ t) => t).catch(() => []));
  return asked.get(app);
}

/** The tool names, for the call-name inputs' `list`. @param {Array<ToolInfo>} tools */
export function toolDatalist(tools) {
  return h("datalist", { id: "declared-tools" }, tools.map((t) => h("option", { value: t.name, label: t.description.split("\n")[0] })));
}

const EMPTY = { string: "", integer: 0, number: 0, boolean: false, object: {}, array: [] };

/** An empty value of a schema's type (its first choice for an enum; required fields of an object). */
export function emptyValue(schema) {
  if (schema.enum && schema.enum.length) return structuredClone(schema.enum[0]);
  if (schema.type === "object") {
    const out = {};
    for (const k of schema.required || []) out[k] = emptyValue((schema.properties || {})[k] || {});
    return out;
  }
  return structuredClone(EMPTY[schema.type] ?? "");
}

const KIND = { integer: "an integer", number: "a number", boolean: "true or false", string: "text", object: "an object", array: "a list" };

/** What is wrong with `value` for `schema`, each message naming the field (`path`, e.g.
 * `when.day` or `guests[2]`); empty when it fits. Checks type, enum, bounds, an object's
 * required fields and its known fields' values, a list's items.
 * @returns {Array<string>} */
export function problemsOf(value, schema, path) {
  const t = schema.type;
  const isType = { integer: Number.isInteger, number: (v) => typeof v === "number" && Number.isFinite(v), boolean: (v) => typeof v === "boolean",
    string: (v) => typeof v === "string", object: (v) => v !== null && typeof v === "object" && !Array.isArray(v), array: Array.isArray };
  if (t in isType && !isType[t](value)) return [`${path} must be ${KIND[t]}`];
  if (schema.enum && !schema.enum.some((e) => oneLine(e) === oneLine(value))) return [`${path} must be one of ${schema.enum.map((e) => oneLine(e)).join(", ")}`];
  const out = [];
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) out.push(`${path} must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) out.push(`${path} must be at most ${schema.maximum}`);
  }
  if (t === "object") {
    for (const k of schema.required || []) if (!(k in value)) out.push(`${path}.${k} is required`);
    for (const [k, s] of Object.entries(schema.properties || {})) if (k in value) out.push(...problemsOf(value[k], s, `${path}.${k}`));
  }
  if (t === "array" && schema.items) value.forEach((v, i) => out.push(...problemsOf(v, schema.items, `${path}[${i}]`)));
  return out;
}

/** What is wrong with one expected call's arguments for its declared tool: required arguments
 * missing and values that do not fit their schema, each naming the argument; none for a tool
 * the agent does not declare (its arguments are free).
 * @param {{name: string, args: Object}} call @param {Array<ToolInfo>} tools */
export function callProblems(call, tools) {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return [];
  const out = [];
  for (const p of tool.params) {
    if (!(p.name in call.args)) { if (p.required) out.push(`${p.name} is required`); continue; }
    out.push(...problemsOf(call.args[p.name], { type: p.type === "any" ? undefined : p.type, ...p.json_schema }, p.name));
  }
  return out;
}

/** One input for a value of `schema`: a checkbox (boolean), a number field (integer, number), a
 * choice (enum), a JSON box (object, array, or no type), else a text field. `set(value)` gets
 * each edit that parses; text that does not parse as JSON is kept in the box and reported by
 * `onBad(message)` naming the field.
 * @param {Object} schema @param {*} value @param {string} name
 * @param {(v: *) => void} set @param {(message: string|null) => void} onBad */
export function typedInput(schema, value, name, set, onBad) {
  const t = schema.type;
  const label = { "aria-label": name, title: schema.description || name };
  if (schema.enum && schema.enum.length) {
    const keys = schema.enum.map((e) => oneLine(e));
    const known = keys.includes(oneLine(value));
    const sel = h("select", { class: "arg-value", ...label }, known ? null : h("option", { value: "", text: `${oneLine(value)} (not allowed)` }),
      schema.enum.map((e, i) => h("option", { value: keys[i], text: typeof e === "string" ? e : keys[i] })));
    sel.value = known ? oneLine(value) : "";
    sel.addEventListener("change", () => { if (sel.value) set(JSON.parse(sel.value)); });
    return sel;
  }
  if (t === "boolean") return h("input", { type: "checkbox", class: "arg-value", checked: value === true, ...label, onchange: (e) => set(e.target.checked) });
  if (t === "integer" || t === "number") {
    return h("input", { type: "number", class: "arg-value", step: t === "integer" ? "1" : "any", value: typeof value === "number" ? String(value) : "", ...label,
      oninput: (e) => {
        const text = e.target.value;
        if (text === "" || Number.isNaN(Number(text))) { onBad(`${name} must be ${KIND[t]}`); return; }
        onBad(null); set(Number(text));
      } });
  }
  if (t === "string") return h("input", { class: "arg-value", value: typeof value === "string" ? value : oneLine(value), ...label, oninput: (e) => set(e.target.value) });
  // objects, lists and values of no declared type: JSON (plain text is a string where any type goes)
  const box = h(t ? "textarea" : "input", { class: "arg-value json", rows: 2, value: typeof value === "string" && !t ? value : oneLine(value), ...label,
    title: (schema.description ? schema.description + "\n" : "") + (t ? `${KIND[t]}, as JSON` : "a JSON value; plain text is a string"),
    oninput: (e) => {
      try { onBad(null); set(JSON.parse(e.target.value)); }
      catch { if (t) onBad(`${name} is not valid JSON`); else set(e.target.value); }
    } });
  return box;
}

/** Under one expected call: the declared tool's arguments (type, required) and "+ required
 * arguments" adding the missing ones; a name the agent does not declare says so.
 * @param {{name: string, args: Object}} call @param {Array<ToolInfo>} tools @param {() => void} commit */
export function callHint(call, tools, commit) {
  const hint = h("div", { class: "call-hint muted small" });
  if (!tools.length) return hint;
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return replace(hint, `the agent declares no tool ${JSON.stringify(call.name)}`);
  const missing = tool.params.filter((p) => p.required && !(p.name in call.args));
  const optional = tool.params.filter((p) => !p.required && !(p.name in call.args));
  return replace(hint, tool.params.length ? tool.params.map((p, i) => [i ? ", " : "", h("span", { class: p.required ? "req" : "", title: p.description,
    text: `${p.name}: ${p.json_schema.enum ? "one of " + p.json_schema.enum.map((e) => oneLine(e)).join(" | ") : p.type}${p.required ? "*" : ""}` })]) : "no arguments",
  missing.length ? h("button", { class: "icon fill-args", text: "+ required arguments", onclick: () => {
    for (const p of missing) call.args[p.name] = emptyValue({ type: p.type, ...p.json_schema });
    commit();
  } }) : null,
  optional.map((p) => h("button", { class: "icon add-optional", "data-arg": p.name, title: p.description || `add ${p.name}`, text: `+ ${p.name}`, onclick: () => {
    call.args[p.name] = emptyValue({ type: p.type, ...p.json_schema }); commit();
  } })));
}
