"""A case run's trace, shown as a tree: in the terminal (rich) and in the HTML report.

Each line is one span: its step (`chat MODEL`, `execute_tool NAME`, ...), its duration, and what
matters about it: tokens in and out for a model call, the reply or the tool calls it asked for;
arguments and result for a tool; verdict and score for a judge; the message a simulated user
wrote. Long texts are cut to `width` characters (the document keeps them whole, up to its own
bound). Errors are marked.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from rich.text import Text
from rich.tree import Tree

from agenteval.schema.trace import Span, Trace

DETAIL_CHARS = 160


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
        facts.append(f"args {_short(a.get('gen_ai.tool.call.arguments', '{}'), width // 2)}")
        if "gen_ai.tool.call.result" in a:
            facts.append(f"→ {_short(a['gen_ai.tool.call.result'], width // 2)}")
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
    return text


def _roots(trace: Trace, invocation: int | None) -> list[Span]:
    if invocation is None:
        return trace.children(None)
    return [s for s in trace.spans if s.kind in ("invocation", "user_simulator", "judge")
            and s.attributes.get("agenteval.invocation_index") == invocation]


def trace_tree(trace: Trace, title: str, invocation: int | None = None,
               width: int = DETAIL_CHARS) -> Tree:
    """The trace as a rich tree (only what belongs to one invocation when `invocation` is set:
    its simulated user turn, its steps and its judge calls)."""
    tree = Tree(Text(title, style="bold"))

    def add(node: Tree, span: Span) -> None:
        child = node.add(_label(span, width))
        for sub in trace.children(span.span_id):
            add(child, sub)

    for root in _roots(trace, invocation):
        add(tree, root)
    return tree


def trace_html(trace: Trace, invocation: int | None = None, width: int = DETAIL_CHARS) -> str:
    """The trace as nested lists inside a `<details>` (collapsed), every text escaped."""

    def item(span: Span) -> str:
        css = ' class="F"' if span.status == "error" else ""
        facts = " · ".join(html.escape(f) for f in span_facts(span, width))
        err = f' <span class="F">error: {html.escape(span.error)}</span>' if span.error else ""
        kids = trace.children(span.span_id)
        inner = f"<ul>{''.join(item(k) for k in kids)}</ul>" if kids else ""
        return (f"<li><b{css}>{html.escape(span.name)}</b> <span class=e>{_ms(span)}</span> "
                f"{facts}{err}{inner}</li>")

    roots: Sequence[Span] = _roots(trace, invocation)
    if not roots:
        return ""
    return ("<details class=trace><summary>trace</summary><ul>"
            + "".join(item(r) for r in roots) + "</ul></details>")


__all__ = ["span_facts", "trace_html", "trace_tree"]
