/* A case of an eval set, viewed and edited (ADK's edit mode, and more): the turns (add, remove),
 * each turn's user message, expected tool calls with typed arguments from the agent's declared
 * tools, and expected response; the case's rubrics; its initial session state. Save is refused
 * while any field does not fit (the messages name the field); leaving with unsaved edits asks. */

import { api, apiTagged, casePath } from "../api.js";
import { h, replace, toast } from "../dom.js";
import { callLine, contentText, invCalls, oneLine } from "../format.js";
import { go, guardLeaving, link } from "../nav.js";
import { rubricProblems, rubricsEditor, stateEditor } from "./case-parts.js";
import { callHint, callProblems, declaredTools, editing, toolDatalist, typedInput } from "./case-tools.js";

export function caseEditor(app, setId, original) {
  const box = h("div", { class: "card", id: "case-editor" });
  editing.app = app;
  let draft = null; // a deep copy while editing; null in view mode
  let saved = ""; // the draft as it was when editing began: leaving asks only when it changed
  /** @type {Array<ToolInfo>} */
  let tools = [];
  const bad = new Map(); // field -> why its text does not parse (kept out of the draft)
  const problemsBox = h("ul", { class: "edit-problems", role: "alert" });
  guardLeaving(() => (draft && box.isConnected && (JSON.stringify(draft) !== saved || bad.size)
    ? `Case ${original.eval_id} has unsaved edits. Leave and lose them?` : null));
  const problems = () => {
    if (!draft) return [];
    const out = [...bad.values()];
    if (draft.conversation) {
      if (!draft.conversation.length) out.push("the case has no turn: add one");
      draft.conversation.forEach((inv, i) => {
        if (!contentText(inv.user_content).trim()) out.push(`Turn ${i + 1}: the user message is empty`);
        authoredCalls(inv).forEach((call, k) => {
          if (!call.name) out.push(`Turn ${i + 1}, call ${k + 1}: the tool name is empty`);
          for (const m of callProblems({ ...call, args: call.args || {} }, tools)) out.push(`Turn ${i + 1}, ${call.name}: ${m}`);
        });
      });
    }
    return [...out, ...rubricProblems(draft)];
  };
  const check = () => { const list = problems(); replace(problemsBox, list.map((m) => h("li", { text: m }))); return list; };
  /** @param {string} field @param {string|null} message */
  const report = (field, message) => { if (message) bad.set(field, message); else bad.delete(field); check(); };
  const render = () => {
    const c = draft || original;
    const edit = !!draft;
    bad.clear(); // the inputs are drawn again from the draft: text that did not parse is gone
    const head = h("div", { class: "row" }, h("h3", { class: "grow", text: `Case ${c.eval_id}` }),
      edit ? [h("button", { class: "primary", id: "save-case", text: "Save", onclick: save }),
        h("button", { text: "Cancel", onclick: () => { draft = null; bad.clear(); render(); } })]
        : [h("button", { id: "edit-case", title: "Edit current eval case", text: "✎ Edit", onclick: startEditing }),
          h("button", { class: "danger", id: "delete-case", text: "Delete case", onclick: del })]);
    const ctx = { edit, tools, rerender: render, changed: check, report };
    const body = c.conversation ? c.conversation.map((inv, i) => invocationEditor(c, inv, i, ctx))
      : [h("pre", { class: "box", text: JSON.stringify(c.conversation_scenario, null, 2) })];
    replace(box, head, edit ? problemsBox : null,
      stateEditor(c, edit, app, !!original.session_input, (m) => report("state", m)),
      rubricsEditor(c, edit, !!original.rubrics, render, check), body,
      edit && c.conversation ? h("button", { id: "add-turn", text: "+ turn", title: "add a turn: a user message, the calls and the answer expected", onclick: () => { addTurn(c); render(); } }) : null,
      edit ? toolDatalist(tools) : null);
    if (edit) check();
  };
  // The case's version, read as editing begins (the page may have been loaded before another
  // tab saved it): a save is only of that version, never over an edit made meanwhile.
  let tag = null;
  const startEditing = async () => {
    try {
      const read = await apiTagged(casePath(app, setId, original.eval_id));
      if (JSON.stringify(read.data) !== JSON.stringify(original)) toast(`case ${original.eval_id} was changed since this page was loaded: editing it as it is saved now`);
      original = read.data; tag = read.tag;
    } catch (err) { toast(err.message, true); return; }
    draft = structuredClone(original); saved = JSON.stringify(draft); render();
  };
  // asked as the case is shown, so that editing starts with them (drawn again once if later)
  declaredTools(app).then((t) => { tools = t; if (draft && t.length) render(); });
  const save = async () => {
    const list = check();
    if (list.length) { toast(`Not saved: ${list[0]}${list.length > 1 ? ` (and ${list.length - 1} more)` : ""}`, true); return; }
    try {
      const out = await apiTagged(casePath(app, setId, original.eval_id), { method: "PUT", body: draft, ifMatch: tag });
      tag = out.tag; original = draft; draft = null; render(); toast("case saved");
    } catch (err) { toast(err.message, true); }
  };
  // A delete is only of the case as this page shows it: its version is the one read as editing
  // began or saved since, else read now and compared with what the page shows (another tab may
  // have saved it since the page was loaded: deleting would take that edit unseen).
  const del = async () => {
    if (!confirm(`Delete case ${original.eval_id}?`)) return;
    try {
      let version = tag;
      if (!version) {
        const read = await apiTagged(casePath(app, setId, original.eval_id));
        if (JSON.stringify(read.data) !== JSON.stringify(original)) {
          toast(`Not deleted: case ${original.eval_id} was changed since this page was loaded (saved from another tab or window, or its file edited). Open it again to see it as it is now.`, true);
          return;
        }
        version = read.tag;
      }
      await api(casePath(app, setId, original.eval_id), { method: "DELETE", ifMatch: version });
      toast("case deleted"); go(link("app", app, "evalsets", setId));
    } catch (err) { toast(err.message, true); }
  };
  render();
  return box;
}

/** A new turn in the form the case's turns use (ADK's events, or the legacy lists). */
function addTurn(c) {
  const events = c.conversation.some((inv) => inv.intermediate_data && Array.isArray(inv.intermediate_data.invocation_events));
  c.conversation.push({ invocation_id: globalThis.crypto && crypto.randomUUID ? `e-${crypto.randomUUID()}` : "",
    user_content: { role: "user", parts: [{ text: "" }] }, final_response: { role: "model", parts: [{ text: "" }] },
    intermediate_data: events ? { invocation_events: [] } : { tool_uses: [], tool_responses: [], intermediate_responses: [] },
    creation_timestamp: Date.now() / 1000 });
}

/** One invocation of a case: user message, expected tool calls, expected response; in edit
 * mode every part is editable, calls can be added, removed and moved, the turn removed. */
function invocationEditor(c, inv, i, ctx) {
  const { edit, rerender, changed } = ctx;
  const calls = invCalls(inv);
  const el = h("div", { class: "inv", "data-inv": i });
  const head = h("div", { class: "head" }, h("strong", { text: `Turn ${i + 1}` }), h("span", { class: "grow" }),
    edit ? h("button", { class: "icon danger remove-turn", title: "remove this turn (its message, calls and answer)", text: "Remove turn",
      onclick: () => { c.conversation.splice(i, 1); rerender(); } }) : null);
  const userText = contentText(inv.user_content);
  const user = edit ? h("textarea", { class: "edit-user", rows: 2, value: userText, "aria-label": `turn ${i + 1} user message`,
    oninput: (e) => { inv.user_content = { ...inv.user_content, role: "user", parts: [{ text: e.target.value }] }; changed(); } })
    : h("div", { class: "msg user", text: userText });
  const resp = contentText(inv.final_response);
  const response = edit ? h("textarea", { class: "edit-response", rows: 3, value: resp, "aria-label": `turn ${i + 1} expected response`,
    oninput: (e) => { inv.final_response = { ...(inv.final_response || {}), role: "model", parts: [{ text: e.target.value }] }; changed(); } })
    : h("div", { class: "msg agent", text: resp || "(no expected response)" });
  const callList = edit ? callsEditor(inv, authoredCalls(inv), i, ctx)
    : calls.length ? h("pre", { class: "box calls-view", text: callsText(authoredCalls(inv)) })
      : h("p", { class: "muted", text: "no tool calls expected" });
  return replace(el, head, h("h4", { text: "User" }), user, h("h4", { text: "Expected tool calls" }), callList,
    h("h4", { text: "Expected response" }), response);
}

function callsEditor(inv, calls, i, ctx) {
  const { rerender, changed } = ctx;
  const list = calls.map((call) => {
    const c = { ...call, args: { ...(call.args || {}) } };
    if (call.args == null) bareArgs.set(c, call.args);
    return c;
  });
  const authorOf = list.find((c) => c.author);  // a new call is first credited to the first agent named
  const commit = () => { setInvCalls(inv, list); rerender(); };
  const update = () => { setInvCalls(inv, list); changed(); };
  const move = (k, d) => { swapResponses(inv, list, k, k + d); const [x] = list.splice(k, 1); list.splice(k + d, 0, x); commit(); };
  const rows = list.map((call, k) => h("div", { class: "call", "data-call": k },
    h("input", { class: "call-name", value: call.name || "", "aria-label": "tool name", list: "declared-tools", oninput: (e) => { call.name = e.target.value; update(); }, onchange: commit }),
    h("input", { class: "call-author", value: call.author || "", placeholder: "any agent", "aria-label": "agent (author)",
      title: "the agent expected to make this call (ADK's event author); when calls name two agents or more, each agent's calls are matched on their own",
      oninput: (e) => { call.author = e.target.value.trim(); update(); } }),
    argsEditor(call, ctx, `Turn ${i + 1}`, update, commit),
    callHint(call, ctx.tools, commit),
    h("div", { class: "row" },
      h("button", { class: "icon", title: "move up", text: "↑", disabled: k === 0, onclick: () => move(k, -1) }),
      h("button", { class: "icon", title: "move down", text: "↓", disabled: k === list.length - 1, onclick: () => move(k, 1) }),
      h("button", { class: "icon danger", title: "remove call", text: "✕", onclick: () => { dropResponse(inv, list, k); list.splice(k, 1); commit(); } }))));
  return h("div", { class: "calls" }, rows, h("button", { class: "add-call", text: "+ tool call",
    onclick: () => { list.push({ name: "tool_name", args: {}, author: authorOf ? authorOf.author : "" }); commit(); } }));
}

/** Arguments as name / value rows: a declared argument's value is an input of its schema type
 * (required ones marked *), any other a JSON value where plain text is a string. */
function argsEditor(call, ctx, where, update, commit) {
  const tool = ctx.tools.find((t) => t.name === call.name);
  const grid = h("div", { class: "args" });
  for (const name of Object.keys(call.args)) {
    const param = tool && tool.params.find((p) => p.name === name);
    const field = `${where} ${call.name} ${name}`;
    const value = param ? typedInput({ type: param.type === "any" ? undefined : param.type, ...param.json_schema }, call.args[name], name,
      (v) => { call.args[name] = v; update(); }, (m) => ctx.report(field, m && `${where}, ${call.name}: ${m}`))
      : h("input", { class: "arg-value", value: oneLine(call.args[name]), title: "a JSON value; plain text is a string",
        oninput: (e) => { call.args[name] = parseLoose(e.target.value); update(); } });
    const key = h("input", { class: "arg-name" + (param && param.required ? " required" : ""), value: name, "aria-label": "argument name",
      title: param ? `${param.type}${param.required ? ", required" : ""}${param.description ? ": " + param.description : ""}` : "argument name",
      onchange: (e) => {
        const to = e.target.value.trim();
        if (to === name) return;
        // Renaming onto another argument's name would silently drop that argument's value.
        if (!to || to in call.args) {
          toast(to ? `${where}, ${call.name}: there is an argument ${to} already` : `${where}, ${call.name}: an argument needs a name`, true);
          e.target.value = name;
          return;
        }
        const v = call.args[name]; delete call.args[name]; call.args[to] = v; commit();
      } });
    grid.append(h("span", { class: "arg-key" }, key, param && param.required ? h("span", { class: "req", title: "required", text: "*" }) : null), value,
      h("button", { class: "icon", title: "remove argument", text: "✕", onclick: () => { delete call.args[name]; commit(); } }));
  }
  grid.append(h("button", { class: "icon add-arg", style: "grid-column: 1 / 4; justify-self: start", text: "+ argument",
    onclick: () => { let n = "arg"; for (let i = 2; n in call.args; i++) n = "arg" + i; call.args[n] = ""; commit(); } }));
  return grid;
}

function parseLoose(text) { try { return JSON.parse(text); } catch { return text; } }

/** Edited calls whose `args` the file left out (undefined) or gave as null. */
const bareArgs = new WeakMap();

/** The expected calls with the agent credited for each (`author`: its event's author; "" in
 * the legacy `tool_uses` form, which names no agent). */
function authoredCalls(inv) {
  const d = inv && inv.intermediate_data;
  if (!d || !Array.isArray(d.invocation_events)) return invCalls(inv).map((c) => ({ ...c, author: "" }));
  return d.invocation_events.flatMap((e) => ((e.content && e.content.parts) || [])
    .filter((p) => p.function_call).map((p) => ({ ...p.function_call, author: e.author || "" })));
}

/** The calls one a line, each after its agent when they name two agents or more. */
function callsText(calls) {
  const multi = new Set(calls.map((c) => c.author).filter(Boolean)).size > 1;
  return calls.map((c) => (multi && c.author ? c.author + ": " : "") + callLine(c)).join("\n");
}

/** Writes edited calls back in the invocation's own form (legacy `tool_uses` or ADK's current
 * `invocation_events`, where other events such as tool responses and texts are kept), each
 * call an event of its own authored by its agent. A call credited to an agent turns the legacy
 * form into events (the form that names agents), its tool responses following the calls. */
function setInvCalls(inv, calls) {
  // A call keeps every key it was read with (`will_continue`, `partial_args`, an id null or
  // not): only `author`, its event's, is taken off; args absent or null stay so while none is added.
  const clean = calls.map((call) => {
    const c = { ...call };
    delete c.author;
    if (bareArgs.has(call) && !Object.keys(c.args || {}).length) {
      if (bareArgs.get(call) === null) c.args = null; else delete c.args;
    }
    return c;
  });
  const d = inv.intermediate_data;
  const named = calls.some((c) => c.author);
  if (!d || !Array.isArray(d.invocation_events)) {
    if (!d && !clean.length) return;
    if (!named) {
      inv.intermediate_data = { tool_uses: clean, tool_responses: (d && d.tool_responses) || [], intermediate_responses: (d && d.intermediate_responses) || [] };
      return;
    }
    const responses = ((d && d.tool_responses) || []).map((r) => ({
      author: (calls.find((c) => c.author && (r.id ? c.id === r.id : c.name === r.name)) || {}).author || calls.find((c) => c.author).author,
      content: { role: "user", parts: [{ function_response: r }] } }));
    inv.intermediate_data = { invocation_events: [] };
    setInvCalls(inv, calls);
    inv.intermediate_data.invocation_events.push(...responses);
    return;
  }
  const kept = [];
  let at = -1;
  for (const e of d.invocation_events) {
    const parts = (e.content && e.content.parts) || [];
    if (!parts.some((p) => p.function_call)) { kept.push(e); continue; }
    if (at < 0) at = kept.length;
    const rest = parts.filter((p) => !p.function_call);
    if (rest.length) kept.push({ ...e, content: { ...e.content, parts: rest } });
  }
  const fallback = (d.invocation_events.find((e) => e.author) || {}).author || "agent";
  const added = clean.map((c, k) => ({ author: calls[k].author || fallback, content: { role: "model", parts: [{ function_call: c }] } }));
  kept.splice(at < 0 ? kept.length : at, 0, ...added);
  inv.intermediate_data = { invocation_events: kept };
}

/** The recorded tool responses of an invocation, in order, each with how to replace or drop it. */
function responseRefs(d) {
  if (!Array.isArray(d.invocation_events)) {
    return (d.tool_responses || []).map((r, n) => ({ r,
      set: (v) => { d.tool_responses[n] = v; },
      drop: () => { d.tool_responses = d.tool_responses.filter((x) => x !== r); } }));
  }
  return d.invocation_events.flatMap((e) => ((e.content && e.content.parts) || []).filter((p) => p.function_response)
    .map((p) => ({ r: p.function_response,
      set: (v) => { p.function_response = v; },
      drop: () => {
        const parts = e.content.parts.filter((q) => q !== p);
        // an event that held only this response goes with it
        if (parts.length) e.content = { ...e.content, parts }; else d.invocation_events = d.invocation_events.filter((x) => x !== e);
      } })));
}

/** The recorded response of `calls[k]`, paired as the case's reader pairs them
 * (`Invocation.tool_calls_with_responses`): by id when the call has one, else the n-th response
 * without an id for the n-th call without one. */
function responseOf(inv, calls, k) {
  const d = inv.intermediate_data;
  const call = calls[k];
  if (!d || !call) return undefined;
  const refs = responseRefs(d).filter((x) => x.r);
  return call.id ? refs.find((x) => x.r.id === call.id)
    : refs.filter((x) => !x.r.id)[calls.slice(0, k).filter((c) => !c.id).length];
}

/** Drops the recorded response of `calls[k]`, a call being removed. Left behind, it became the
 * response of the next call without an id (a mocked run served it to that call). */
function dropResponse(inv, calls, k) {
  const own = responseOf(inv, calls, k);
  if (own) own.drop();
}

/** Keeps the recorded responses with `calls[a]` and `calls[b]`, calls being swapped: calls
 * without an id are paired with responses by position, so moving one alone handed it the other's
 * (both have one: they are swapped). When only one has a response (the other is past the last
 * response), position cannot pair it once it moves past the other: that call and its response
 * get an id of their own, which leaves every other pair as it was. */
function swapResponses(inv, calls, a, b) {
  if (calls[a].id || calls[b].id) return;
  const x = responseOf(inv, calls, a);
  const y = responseOf(inv, calls, b);
  if (x && y) {
    if (x === y) return;
    const r = x.r;
    x.set(y.r);
    y.set(r);
  } else if (x || y) {
    pinResponse(inv, calls, x ? a : b, x || y);
  }
}

/** Pairs `calls[k]` with its response `ref` by an id no other call or response of the turn has. */
function pinResponse(inv, calls, k, ref) {
  const used = new Set([...calls.map((c) => c.id), ...responseRefs(inv.intermediate_data).map((x) => x.r && x.r.id)]);
  let n = 1;
  while (used.has(`call_${n}`)) n += 1;
  const id = `call_${n}`;
  calls[k].id = id;
  ref.set({ ...ref.r, id });
}
