/* The JSON API (docs/web-api.md): one request, a page of rows, and the ADK-style paths. */

import { enc, oneLine } from "./format.js";

export const USER = "user"; // chat sessions are stored under one user id: the page has one user

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

/** One JSON request. Same-origin fetch sends the page's Origin on POST/PUT/DELETE, which the
 * server checks, and the token cookie when the server was opened with ?token=. */
export async function api(path, options = {}) { return (await apiTagged(path, options)).data; }

/** api(), with the reply's version of what it returned (its `ETag`; null when it has none).
 * `ifMatch` sends a version read before: the server refuses the change (409) when what it
 * changes is no longer that version (edited in another tab, or on disk).
 * @returns {Promise<{data: any, tag: string|null}>} */
export async function apiTagged(path, { method = "GET", body, signal, ifMatch } = {}) {
  const init = { method, headers: { Accept: "application/json" }, signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  if (ifMatch) init.headers["If-Match"] = ifMatch;
  const res = await reach(path, init);
  const text = await res.text();
  let data = text;
  try { data = text ? JSON.parse(text) : null; } catch { /* a non-JSON body is shown as text */ }
  if (!res.ok) {
    const detail = data && typeof data === "object" && "detail" in data ? data.detail : data;
    throw new ApiError(res.status, `${res.status}: ${typeof detail === "string" ? detail : oneLine(detail)}`);
  }
  return { data, tag: res.headers.get("ETag") };
}

/** fetch, with the browser's bare "Failed to fetch" (the server stopped, the network is gone)
 * turned into a sentence saying what happened; an abort stays an AbortError. */
async function reach(path, init) {
  try { return await fetch(path, init); } catch (err) {
    if (err && err.name === "AbortError") throw err;
    // "nothing was saved" only where something was to be saved: a page that reads says it could not
    const writes = init && init.method && init.method !== "GET";
    throw new ApiError(0, "Cannot reach the agenteval server (it may have stopped or restarted): "
      + (writes ? "nothing was saved. Try again once it is back." : "nothing could be loaded. Click the page's link again once it is back."));
  }
}

/** A POST answered with server-sent events: `onEvent(type, data)` for each event as it comes
 * (data parsed as JSON); resolves when the stream ends. Errors before the stream are thrown as
 * api() throws them. */
export async function postStream(path, body, onEvent, signal) {
  const res = await reach(path, { method: "POST", signal, body: JSON.stringify(body),
    headers: { Accept: "text/event-stream", "Content-Type": "application/json" } });
  if (!res.ok) {
    const data = await res.json().catch(() => null);
    const detail = data && typeof data === "object" && "detail" in data ? data.detail : res.statusText;
    throw new ApiError(res.status, `${res.status}: ${typeof detail === "string" ? detail : oneLine(detail)}`);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let type = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (data) onEvent(type, JSON.parse(data));
    }
  }
}

/** A page of rows (a JSON array), the number of matching rows (its X-Total-Count header) and
 * the files left out because they could not be read (the `unreadableHeader`, by default the run
 * stores' X-Unreadable-Stores: `file: message` each). */
export async function apiPage(path, unreadableHeader = "X-Unreadable-Stores") {
  const res = await reach(path, { headers: { Accept: "application/json" } });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, `${res.status}: ${(data && data.detail) || res.statusText}`);
  /** @type {Array<string>} */
  const unreadable = JSON.parse(res.headers.get(unreadableHeader) || "[]");
  return { items: data, total: Number(res.headers.get("X-Total-Count")), unreadable };
}

/** A query string of the parameters that have a value (an empty filter is no filter). */
export function qs(params) {
  return new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "" && v !== null && v !== undefined)).toString();
}

export const appPath = (app) => `/apps/${enc(app)}`;

export const sessionsPath = (app) => `${appPath(app)}/users/${enc(USER)}/sessions`;

export const setPath = (app, set) => `${appPath(app)}/eval-sets/${enc(set)}`;

export const casePath = (app, set, id) => `${setPath(app, set)}/eval-cases/${enc(id)}`;
