/* The chat with an agent: a session's turns and the composer. */

import { api, sessionsPath } from "../api.js";
import { $, h, replace, toast } from "../dom.js";
import { callLine, enc, json, oneLine, short } from "../format.js";
import { link } from "../nav.js";
import { S } from "../state.js";
import { renderSide } from "./side.js";

export function chatView(main, app) {
  const s = S.session;
  const messages = h("div", { class: "messages", id: "messages" });
  const head = h("div", { class: "chathead row" },
    h("strong", { id: "chat-title", text: s ? `Session ${s.id}` : "New session" }),
    h("span", { class: "muted", id: "chat-model", text: `model: ${(s ? s.model : S.model) || "the agent's own"}` }));
  const input = h("textarea", { id: "chat-input", placeholder: `Message ${app}… (Enter sends, Shift+Enter new line)` });
  const send = h("button", { class: "primary", id: "send", text: "Send" });
  const submit = async () => {
    const text = input.value.trim();
    if (!text) return;
    input.value = ""; send.disabled = true;
    try { await sendMessage(app, text, messages); } catch (err) { toast(err.message, true); }
    send.disabled = false; input.focus();
  };
  send.addEventListener("click", submit);
  input.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); submit(); } });
  replace(main, head, messages, h("div", { class: "composer" }, input, send));
  for (const [i, t] of ((s && s.turns) || []).entries()) messages.append(turnView(t, i));
  if (!s || !s.turns.length) messages.append(h("p", { class: "muted", text: "Talk to the agent; the conversation is saved as a session." }));
  messages.scrollTop = messages.scrollHeight;
}

/** One turn: the user's message, the tool calls with their results inline, the reply.
 * @param {ChatTurnView} t
 * @param {number} i */
function turnView(t, i) {
  const results = t.tool_responses;
  const calls = t.tool_calls.map((c, k) => {
    const r = results[k];
    const result = r ? "  →  " + short(oneLine(r.response), 80) : "";
    return h("details", { class: "tool" }, h("summary", {}, h("span", { class: "tag", text: "tool" }), " " + callLine(c) + result),
      h("pre", { text: "args: " + json(c.args ?? null) + (r ? "\nresult: " + json(r.response) : "") }));
  });
  const reply = t.error ? h("div", { class: "msg error", text: "Agent error: " + t.error })
    : h("div", { class: "msg agent", text: t.response || "(no text)" });
  return h("div", { class: "turn", "data-turn": i }, h("div", { class: "msg user", text: t.user }), calls, reply);
}

async function sendMessage(app, text, messages) {
  if (!S.session) {
    const body = S.model ? { model: S.model } : {};
    S.session = await api(sessionsPath(app), { method: "POST", body });
    // the address names the session now, without a re-render that would drop the typed text
    history.replaceState(null, "", link("app", app, "chat", S.session.id));
    messages.replaceChildren();
    $("#chat-title").textContent = `Session ${S.session.id}`;
    $("#chat-model").textContent = `model: ${S.session.model || "the agent's own"}`;
  }
  const pending = h("div", { class: "turn" }, h("div", { class: "msg user", text }), h("div", { class: "msg agent pending", text: "…" }));
  messages.append(pending);
  messages.scrollTop = messages.scrollHeight;
  const sid = S.session.id;
  try { await api(`${sessionsPath(app)}/${enc(sid)}/messages`, { method: "POST", body: { text } }); }
  finally { pending.remove(); }
  if (!S.session || S.session.id !== sid) return; // the user moved to another session meanwhile
  // re-read the session: the state after the turn, and the turn exactly as stored
  S.session = await api(`${sessionsPath(app)}/${enc(sid)}`);
  const turns = S.session.turns;
  messages.append(turnView(turns[turns.length - 1], turns.length - 1));
  messages.scrollTop = messages.scrollHeight;
  const side = $(".side");
  if (side) renderSide(side, app, null);
}
