/* Markdown of agent replies drawn as DOM nodes: headings, paragraphs, bulleted and numbered
 * lists, block quotes, fenced code, inline code, bold, italic and links. Every piece of text
 * becomes a Text node (dom.js's h), never markup, so HTML inside a reply stays visible text;
 * a link keeps only an http(s) or mailto address and opens in a new tab without an opener. */

import { h } from "./dom.js";

// underscores mark emphasis only at word edges (`roll_die`, `window.__x` stay as written)
const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*(?=\S)(.+?)(?<=\S)\*\*|(?<=^|[\s(])__(?=\S)(.+?)(?<=\S)__(?![\w])|\*([^*\s](?:.*?[^*\s])?)\*|(?<=^|[\s(])_([^_\s](?:.*?[^_\s])?)_(?!\w)|\[([^\]]+)\]\(([^)\s]+)\)/g;

/** Inline spans of one line of text, as nodes. */
export function inline(text) {
  const out = [];
  let at = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    if (m[1]) out.push(h("code", { text: m[2].trim() || m[2] }));
    else if (m[3] || m[4]) out.push(h("strong", {}, inline(m[3] || m[4])));
    else if (m[5] || m[6]) out.push(h("em", {}, inline(m[5] || m[6])));
    else if (/^(https?:|mailto:)/i.test(m[8])) out.push(h("a", { href: m[8], target: "_blank", rel: "noopener noreferrer" }, inline(m[7])));
    else out.push(m[0]); // any other scheme (javascript:, data:) stays the text it was
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBER = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const FENCE = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)/;

/** A reply's Markdown as a `div.md` of block nodes. */
export function markdown(text) {
  const lines = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
  const root = h("div", { class: "md" });
  let para = [];
  const flush = () => {
    if (!para.length) return;
    const p = h("p");
    para.forEach((l, i) => { if (i) p.append(h("br")); p.append(...inline(l)); }); // strings become Text nodes
    root.append(p);
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(FENCE);
    if (fence) {
      flush();
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) body.push(lines[i]);
      root.append(h("pre", { class: "code", "data-lang": fence[2] || null }, h("code", { text: body.join("\n") })));
      continue;
    }
    const head = line.match(HEADING);
    if (head) { flush(); root.append(h("h" + Math.min(6, head[1].length + 2), { class: "mdh" }, inline(head[2]))); continue; }
    const list = line.match(BULLET) ? "ul" : line.match(NUMBER) ? "ol" : null;
    if (list) {
      flush();
      const el = h(list);
      const first = line.match(NUMBER);
      if (list === "ol" && first && first[1] !== "1") el.setAttribute("start", first[1]);
      for (; i < lines.length; i++) {
        const m = list === "ul" ? lines[i].match(BULLET) : lines[i].match(NUMBER);
        if (m) el.append(h("li", {}, inline(list === "ul" ? m[1] : m[2])));
        else if (lines[i].trim() && /^\s{2,}/.test(lines[i]) && el.lastChild) el.lastChild.append(" ", ...inline(lines[i].trim()));
        else { i--; break; }
      }
      root.append(el);
      continue;
    }
    if (/^\s{0,3}>/.test(line)) {
      flush();
      const quoted = [];
      for (; i < lines.length && /^\s{0,3}>/.test(lines[i]); i++) quoted.push(lines[i].replace(/^\s{0,3}>\s?/, ""));
      i--;
      root.append(h("blockquote", {}, markdown(quoted.join("\n"))));
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) { flush(); root.append(h("hr")); continue; }
    if (!line.trim()) { flush(); continue; }
    para.push(line);
  }
  flush();
  return root;
}
