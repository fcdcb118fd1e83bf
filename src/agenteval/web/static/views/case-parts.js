/* The case editor's case-wide parts: the initial session state (JSON, checked as it is typed)
 * and the case's rubrics (`rubrics`, ADK's format: id, type, text), which the rubric_based_*
 * criteria read by type. Both edit the draft in place and keep every field they do not show. */

import { h } from "../dom.js";
import { json } from "../format.js";

export const RUBRIC_TYPES = ["FINAL_RESPONSE_QUALITY", "TOOL_USE_QUALITY", "TRAJECTORY_QUALITY"];
const READ_BY = { FINAL_RESPONSE_QUALITY: "rubric_based_final_response_quality_v1", TOOL_USE_QUALITY: "rubric_based_tool_use_quality_v1",
  TRAJECTORY_QUALITY: "rubric_based_multi_turn_trajectory_quality_v1" };

/** The initial session state: shown (when any), or edited as JSON. `report(message|null)` is
 * told whether the text is a JSON object; a case without `session_input` gets one (app, user
 * "user") only once the state is not empty.
 * @param {Object} c - the case (the draft when editing) @param {boolean} edit @param {string} app
 * @param {boolean} hadInput - whether the saved case has a session_input
 * @param {(message: string|null) => void} report */
export function stateEditor(c, edit, app, hadInput, report) {
  const state = (c.session_input && c.session_input.state) || {};
  if (!edit) {
    return Object.keys(state).length ? h("details", { class: "state-view" }, h("summary", { text: "initial session state" }), h("pre", { class: "box", text: json(state) })) : null;
  }
  const error = h("div", { class: "field-error", role: "alert" });
  const box = h("textarea", { id: "edit-state", rows: 4, class: "mono", value: json(state), "aria-label": "initial session state (JSON object)",
    oninput: (e) => {
      let value;
      try { value = JSON.parse(e.target.value || "{}"); } catch (err) { return say(`initial session state is not valid JSON (${err.message})`); }
      if (value === null || typeof value !== "object" || Array.isArray(value)) return say("initial session state must be a JSON object ({…})");
      if (c.session_input) c.session_input.state = value;
      else if (Object.keys(value).length) c.session_input = { app_name: app, user_id: "user", state: value };
      if (!hadInput && c.session_input && !Object.keys(value).length && !c.session_input.session_id) delete c.session_input;
      return say(null);
    } });
  const say = (message) => { error.textContent = message || ""; box.classList.toggle("invalid", !!message); report(message); };
  return h("div", { class: "state-edit" }, h("h4", { text: "Initial session state" }),
    h("p", { class: "muted small", text: "A JSON object: the session's state before the first turn." }), box, error);
}

/** The case's rubrics: listed, or edited (id, type, text; add, remove). An emptied list is
 * removed from a case that had none.
 * @param {Object} c @param {boolean} edit @param {boolean} hadRubrics @param {() => void} rerender @param {() => void} changed */
export function rubricsEditor(c, edit, hadRubrics, rerender, changed) {
  const rubrics = c.rubrics || [];
  if (!edit) {
    if (!rubrics.length) return null;
    return h("div", { class: "rubrics-view" }, h("h4", { text: "Rubrics" }), h("ul", {}, rubrics.map((r) =>
      h("li", { "data-rubric": r.rubric_id }, h("span", { class: "mono", text: r.rubric_id }), r.type ? h("span", { class: "badge info", text: r.type }) : null, " ",
        (r.rubric_content && r.rubric_content.text_property) || r.description || ""))));
  }
  const drop = (k) => { rubrics.splice(k, 1); if (!rubrics.length && !hadRubrics) delete c.rubrics; rerender(); };
  const rows = rubrics.map((r, k) => {
    const type = h("select", { class: "rubric-type", "aria-label": "rubric type" }, h("option", { value: "", text: "(no type)" }),
      RUBRIC_TYPES.map((t) => h("option", { value: t, text: t })));
    type.value = r.type || "";
    type.addEventListener("change", () => { if (type.value) r.type = type.value; else delete r.type; rerender(); });
    return h("div", { class: "rubric", "data-rubric": k },
      h("input", { class: "rubric-id mono", value: r.rubric_id, "aria-label": "rubric id", oninput: (e) => { r.rubric_id = e.target.value.trim(); changed(); } }),
      type,
      h("textarea", { class: "rubric-text", rows: 2, value: (r.rubric_content && r.rubric_content.text_property) || "", "aria-label": "rubric text",
        placeholder: "a property the answer must have, e.g. “The answer names the city asked about.”",
        oninput: (e) => { r.rubric_content = { ...(r.rubric_content || {}), text_property: e.target.value }; changed(); } }),
      h("button", { class: "icon danger", title: "remove rubric", "aria-label": "remove rubric", text: "✕", onclick: () => drop(k) }),
      h("div", { class: "muted small", text: r.type ? `read by ${READ_BY[r.type] || r.type}` : "no type: no rubric criterion reads it (pick one)" }));
  });
  const add = () => {
    let n = rubrics.length + 1;
    while (rubrics.some((r) => r.rubric_id === `r${n}`)) n++;
    c.rubrics = [...rubrics, { rubric_id: `r${n}`, rubric_content: { text_property: "" }, type: "FINAL_RESPONSE_QUALITY" }];
    rerender();
  };
  return h("div", { class: "rubrics-edit" }, h("h4", { text: "Rubrics" }),
    h("p", { class: "muted small", text: "The case's rubrics, for the rubric_based_* criteria (each reads the rubrics of its type)." }),
    rows, h("button", { id: "add-rubric", text: "+ rubric", onclick: add }));
}

/** What is wrong with the case's rubrics (empty ids or texts, ids used twice), naming each;
 * an id used twice in the words the API refuses it with (`schema.rubric.unique_rubric_ids`). */
export function rubricProblems(c) {
  const out = [], seen = new Map();
  (c.rubrics || []).forEach((r, k) => {
    const name = r.rubric_id || `rubric ${k + 1}`;
    if (!r.rubric_id) out.push(`rubric ${k + 1}: the id is empty`);
    else if (seen.has(r.rubric_id)) {
      out.push(`rubrics: duplicate rubric_id '${r.rubric_id}' (rubrics[${seen.get(r.rubric_id)}] and rubrics[${k}])`);
    } else seen.set(r.rubric_id, k);
    if (!(r.rubric_content && r.rubric_content.text_property && r.rubric_content.text_property.trim())) out.push(`rubric ${name}: the text is empty`);
  });
  return out;
}
