/* The chat with an agent: a session's turns and the composer. */

import { api, postStream, sessionsPath } from "../api.js";
import { $, h, replace, toast } from "../dom.js";
import { callLine, enc, fmtSecs, json, oneLine, short } from "../format.js";
import { markdown } from "../markdown.js";
import { link } from "../nav.js";
import { S } from "../state.js";
import { renderSide } from "./side.js";

/** Where the composer's unsent text of the session shown is kept (the tab's sessionStorage, so
 * it survives leaving the page and a reload): one draft per agent and session ("" = new session). */
const draftKey = (app) => `agenteval.draft.${app}/${S.session ? S.session.id : ""}`;
function keepDraft(app, text) {
  try { if (text.trim()) sessionStorage.setItem(draftKey(app), text); else sessionStorage.removeItem(draftKey(app)); } catch { /* storage off: the draft lives as long as the view */ }
}
function draftOf(app) { try { return sessionStorage.getItem(draftKey(app)) || ""; } catch { return ""; } }

export function chatView(main, app) {
  const s = S.session;
  const messages = h("div", { class: "messages", id: "messages" });
  const head = h("div", { class: "chathead row" },
    h("strong", { id: "chat-title", text: s ? `Session ${s.id}` : "New session" }),
    h("span", { class: "muted", id: "chat-model", text: `model: ${(s ? s.model : S.model) || "the agent's own"}` }));
  const input = h("textarea", { id: "chat-input", "aria-label": `message to ${app}`, placeholder: `Message ${app}… (Enter sends, Shift+Enter new line)` });
  const send = h("button", { class: "primary", id: "send", text: "Send" });
  const submit = async () => {
    const text = input.value.trim();
    if (!text || send.disabled) return;
    input.value = ""; send.disabled = true;
    keepDraft(app, "");
    try { await sendMessage(app, text, messages); } catch (err) {
      // the message is not lost: back in the composer (unless something new was typed), and the
      // reason in the conversation where the reply would have been
      if (!input.value.trim()) input.value = text;
      keepDraft(app, input.value);
      const reason = err.name === "AbortError" ? "Stopped: the turn was cancelled and not saved."
        : "Not sent: " + err.message;
      messages.append(h("div", { class: "msg error send-failed", role: "alert", text: reason }));
      messages.scrollTop = messages.scrollHeight;
    }
    send.disabled = false; input.focus();
  };
  send.addEventListener("click", submit);
  input.value = draftOf(app);
  input.addEventListener("input", () => keepDraft(app, input.value));
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
    // the line is cut (a long argument would widen the chat); the whole call is in the details
    return h("details", { class: "tool" }, h("summary", { title: short(callLine(c), 2000) }, h("span", { class: "tag", text: "tool" }), " " + short(callLine(c), 120) + result),
      h("pre", { text: "args: " + json(c.args ?? null) + (r ? "\nresult: " + json(r.response) : "") }));
  });
  const reply = t.error ? h("div", { class: "msg error", text: "Agent error: " + t.error })
    : t.response ? h("div", { class: "msg agent" }, markdown(t.response)) : h("div", { class: "msg agent muted", text: "(no text)" });
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
  // while the agent works: its steps as they finish (model and tool calls), the reply as the
  // model writes it (a draft per model call: a new call, or a tool call, starts it again), the
  // time taken, and Stop, which cancels the turn and the generation in flight
  const stopper = new AbortController();
  const waited = h("span", { class: "waited", text: "working…" });
  const steps = h("div", { class: "steps" });
  const draft = h("div", { class: "draft", id: "reply-draft", "aria-live": "polite" });
  let draftCall = null;
  const started = Date.now();
  const tick = setInterval(() => { waited.textContent = `${draft.textContent ? "writing" : "working"}… ${Math.round((Date.now() - started) / 1000)} s`; }, 1000);
  const pending = h("div", { class: "turn pending-turn" }, h("div", { class: "msg user", text }),
    h("div", { class: "msg agent pending" }, waited, " ", h("button", { class: "icon stop", id: "stop-reply", title: "stop this turn (it is not saved)", text: "■ Stop", onclick: () => stopper.abort() }), steps, draft));
  messages.append(pending);
  messages.scrollTop = messages.scrollHeight;
  const sid = S.session.id;
  let finished = false;
  const onEvent = (type, data) => {
    if (type === "turn") { finished = true; return; }
    if (type === "chunk") {
      if (data.call !== draftCall) { draftCall = data.call; draft.textContent = ""; }
      draft.textContent += data.text;
      messages.scrollTop = messages.scrollHeight;
      return;
    }
    if (type !== "step") return;
    if (data.kind === "tool") { draft.textContent = ""; draftCall = null; } // that draft was a call
    const what = data.kind === "tool" ? "tool " + data.name : "model";
    steps.append(h("div", { class: "step", "data-kind": data.kind, text: `${steps.childElementCount + 1}. ${what} · ${fmtSecs(data.seconds)}${data.text ? ": " + short(data.text, 200) : ""}` }));
    messages.scrollTop = messages.scrollHeight;
  };
  try {
    await postStream(`${sessionsPath(app)}/${enc(sid)}/messages/stream`, { text }, onEvent, stopper.signal);
    if (!finished) throw new Error("the server ended the turn's stream before the turn (see its log)");
  } finally { clearInterval(tick); pending.remove(); }
  if (!S.session || S.session.id !== sid) return; // the user moved to another session meanwhile
  // re-read the session: the state after the turn, and the turn exactly as stored
  S.session = await api(`${sessionsPath(app)}/${enc(sid)}`);
  const turns = S.session.turns;
  messages.append(turnView(turns[turns.length - 1], turns.length - 1));
  messages.scrollTop = messages.scrollHeight;
  const side = $(".side");
  if (side) renderSide(side, app, null);
}
