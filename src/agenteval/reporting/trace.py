"""A case run's trace, shown as a tree: in the terminal (rich) and in the HTML report.

Each line is one span: its step (`chat MODEL`, `execute_tool NAME`, ...), its duration, and what
matters about it: tokens in and out for a model call, the reply or the tool calls it asked for;
arguments and result for a tool; verdict and score for a judge; the message a simulated user
wrote. Long texts are cut to `width` characters (the document keeps them whole, up to its own
bound). Errors are marked. At most `MAX_DEPTH` levels are shown below each root, and at most
`MAX_CHILDREN` children under one span (the first ones); what is left out is one line
counting its spans. Both views walk the tree once, without recursion: O(spans) for any shape.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator, Sequence

from rich.text import Text
from rich.tree import Tree

from agenteval.reporting.format import terminal_visible_text
from agenteval.schema.trace import Span, Trace

DETAIL_CHARS = 160
MAX_DEPTH = 40  # levels shown below a root (a chain thousands deep would draw its guides per line)
MAX_CHILDREN = 200  # children shown under one span
# a tool's arguments and result as the GenAI conventions, ADK's legacy spans and OpenInference
# name them (traces ingested before they were copied under the GenAI names)
_ARGS = ("gen_ai.tool.call.arguments", "gcp.vertex.agent.tool_call_args", "input.value")
_RESULTS = ("gen_ai.tool.call.result", "gcp.vertex.agent.tool_response", "output.value")


def _short(value: object, width: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _ms(span: Span) -> str:
    d = span.duration
    return "running" if d is None else f"{d * 1000:.0f} ms" if d < 10 else f"{d:.1f} s"


def span_facts(span: Span, width: int = DETAIL_CHARS) -> list[str]:
    """What a span's line says after its name and duration."""
    a = span.attributes
    facts: list[str] = []
    if span.kind == "llm":
        tokens = [f"{a[k]} {label}" for k, label in (("gen_ai.usage.input_tokens", "in"),
                                                   ("gen_ai.usage.output_tokens", "out"),
                                                   ("gen_ai.usage.cache_read.input_tokens", "cached"))
                  if k in a]
        if tokens:
            facts.append("tokens " + " / ".join(tokens))
        out = a.get("gen_ai.output.messages")
        calls = []
        if isinstance(out, str):
            try:
                calls = [c for m in json.loads(out) for c in m.get("tool_calls", [])]
            except (ValueError, AttributeError, TypeError):
                calls = []
        if calls:
            facts.append("asks " + ", ".join(
                f"{c.get('name')}({_short(c.get('arguments', {}), width // 2)})" for c in calls))
        elif a.get("output.value"):
            facts.append("→ " + _short(a["output.value"], width))
    elif span.kind == "tool":
        args = next((a[k] for k in _ARGS if a.get(k) not in (None, "", "N/A")), None)
        facts.append(f"args {_short(args, width // 2)}" if args is not None else "args not recorded")
        result = next((a[k] for k in _RESULTS if a.get(k) not in (None, "", "{}")), None)
        if result is not None:
            facts.append(f"→ {_short(result, width // 2)}")
    elif span.kind == "judge":
        where = ", ".join(str(a[k]) for k in ("agenteval.item", "agenteval.step") if k in a)
        if where:
            facts.append(where)
        if "agenteval.verdict" in a or "agenteval.score" in a:
            facts.append(f"verdict {a.get('agenteval.verdict', '-')} (score {a.get('agenteval.score', '-')})")
        if a.get("agenteval.cached"):
            facts.append("cached")
    elif span.kind in ("invocation", "user_simulator", "agent"):
        if a.get("input.value") and span.kind == "invocation":
            facts.append("user: " + _short(a["input.value"], width))
        if a.get("output.value"):
            facts.append("→ " + _short(a["output.value"], width))
    if span.truncated:
        facts.append(f"(cut: {', '.join(span.truncated)})")
    return facts


def _label(span: Span, width: int) -> Text:
    text = Text(span.name, style="bold red" if span.status == "error" else "bold")
    text.append(f"  {_ms(span)}", style="dim")
    for fact in span_facts(span, width):
        text.append(f"  {fact}")
    if span.error:
        text.append(f"  error: {_short(span.error, width)}", style="red")
    return terminal_visible_text(text)  # an agent's ESC shown, not sent (styles kept)


def _roots(trace: Trace, invocation: int | None) -> list[Span]:
    if invocation is None:
        return trace.children(None)
    return [s for s in trace.spans if s.kind in ("invocation", "user_simulator", "judge")
            and s.attributes.get("agenteval.invocation_index") == invocation]


def _plural(n: int) -> str:
    return f"{n} more span{'s' if n != 1 else ''}"


def _hidden(trace: Trace, span: Span, kids: dict[str | None, list[Span]]) -> str:
    return f"… {_plural(len(trace.below(span.span_id, kids)))} below (deeper than {MAX_DEPTH} levels)"


def _left_out(trace: Trace, spans: list[Span], kids: dict[str | None, list[Span]]) -> str:
    """The line standing for the children past `MAX_CHILDREN` and the spans under them."""
    n = sum(1 + len(trace.below(s.span_id, kids)) for s in spans)
    return f"… {_plural(n)} here ({len(spans)} children past the first {MAX_CHILDREN})"


def _walk(trace: Trace, roots: Sequence[Span]) -> Iterator[tuple[str, Span | None, str]]:
    """The tree below `roots` in document order, without recursion: ("leaf", span, ""),
    ("open", span, "") ... ("close", None, "") around a span's shown children, and
    ("note", None, text) for a line standing for spans left out (deeper than `MAX_DEPTH`, or
    past `MAX_CHILDREN`). A span id met twice below one root (a malformed trace) is not
    descended into again, so the walk ends."""
    kids = trace.children_index()
    seen: set[str] = set()
    stack: list[Span | str | None] = list(reversed(roots))  # a str: a note; None: a close
    depth = 0  # of the spans on top of the stack
    while stack:
        item = stack.pop()
        if item is None:
            depth -= 1
            yield "close", None, ""
            continue
        if isinstance(item, str):
            yield "note", None, item
            continue
        if depth == 0:  # a root: roots may lie under each other, each is shown whole
            seen = set()
        subs = [] if item.span_id in seen else kids.get(item.span_id, [])
        seen.add(item.span_id)
        if not subs:
            yield "leaf", item, ""
            continue
        yield "open", item, ""
        stack.append(None)
        if depth + 1 >= MAX_DEPTH:
            stack.append(_hidden(trace, item, kids))
        else:
            if len(subs) > MAX_CHILDREN:
                stack.append(_left_out(trace, subs[MAX_CHILDREN:], kids))
            stack.extend(reversed(subs[:MAX_CHILDREN]))
        depth += 1


def trace_tree(trace: Trace, title: str, invocation: int | None = None,
               width: int = DETAIL_CHARS) -> Tree:
    """The trace as a rich tree (only what belongs to one invocation when `invocation` is set:
    its simulated user turn, its steps and its judge calls)."""
    tree = Tree(Text(title, style="bold"))
    nodes = [tree]  # the open spans' nodes
    for kind, span, note in _walk(trace, _roots(trace, invocation)):
        if kind == "close":
            nodes.pop()
        elif span is None:
            nodes[-1].add(Text(note, style="dim"))
        else:
            node = nodes[-1].add(_label(span, width))
            if kind == "open":
                nodes.append(node)
    return tree


def trace_html(trace: Trace, invocation: int | None = None, width: int = DETAIL_CHARS) -> str:
    """The trace as nested lists inside a `<details>` (collapsed), every text escaped."""
    roots = _roots(trace, invocation)
    if not roots:
        return ""
    parts = ["<details class=trace><summary>trace</summary><ul>"]
    for kind, span, note in _walk(trace, roots):
        if kind == "close":
            parts.append("</ul></li>")
        elif span is None:
            parts.append(f"<li class=e>{html.escape(note)}</li>")
        else:
            css = ' class="F"' if span.status == "error" else ""
            facts = " · ".join(html.escape(f) for f in span_facts(span, width))
            err = f' <span class="F">error: {html.escape(span.error)}</span>' if span.error else ""
            parts.append(f"<li><b{css}>{html.escape(span.name)}</b> <span class=e>{_ms(span)}</span> "
                         f"{facts}{err}" + ("<ul>" if kind == "open" else "</li>"))
    parts.append("</ul></details>")
    return "".join(parts)


__all__ = ["MAX_CHILDREN", "MAX_DEPTH", "span_facts", "trace_html", "trace_tree"]
