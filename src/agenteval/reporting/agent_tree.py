"""A case run's agent tree as text: in the terminal (`agenteval trace`, rich) and in the HTML report.

The tree is `tracing.agent_summary`'s, one branch per invocation: each agent with how control
reached it, its own model and tool calls (the tools by name), tokens and time, and its verdict
when a criterion matched its calls on their own (✓, or ✗ with the reason). Shown only for case
runs where more than one agent ran (`multi_agent`): a single agent's tree says nothing the span
tree does not.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Sequence

from rich.text import Text
from rich.tree import Tree

from agenteval.reporting.format import terminal_visible_text
from agenteval.schema import EvalCaseResult
from agenteval.tracing.agent_summary import AgentNode, InvocationAgents, agent_summary, agents_in
from agenteval.tracing.figures import Figures

_VIA = {"handoff": "handed control", "tool": "called as a tool", "sequential": "sequential stage",
        "parallel": "parallel branch", "loop": "loop iteration", "sub_agent": "sub-agent"}


def case_agents(run: EvalCaseResult) -> list[InvocationAgents]:
    """The agent trees of a case run, with its per-agent verdicts."""
    return agent_summary(run.trace, run.agent_verdicts)


def multi_agent(summary: Sequence[InvocationAgents]) -> bool:
    """Whether more than one agent ran in the case run."""
    return len(agents_in(summary)) > 1


def _n(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"


def figures_text(f: Figures) -> list[str]:
    """An agent's own figures, as short phrases."""
    out = [_n(f.model_calls, "model call"), _n(f.tool_calls, "tool call")]
    if f.input_tokens is not None or f.output_tokens is not None:
        out.append(f"tokens {f.input_tokens or 0} in / {f.output_tokens or 0} out")
    if f.duration is not None:
        out.append(_seconds(f.duration))
    return out


def node_facts(node: AgentNode) -> list[str]:
    """What an agent's line says after its name: how it was reached, its runs (when several),
    its tools and figures."""
    if not node.span_ids:
        return ["did not run"]
    facts = [_VIA[node.via]] if node.via in _VIA else []
    if node.workflow:
        facts.append(f"{node.workflow} workflow")
    if len(node.span_ids) > 1:
        facts.append(f"{len(node.span_ids)} runs")
    facts += figures_text(node.figures)
    if node.tools:
        facts.append("tools " + ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in node.tools))
    return facts


def verdict_text(node: AgentNode) -> str | None:
    """`✓ calls matched`, `✗ REASON`, or None when no criterion matched the agent on its own."""
    if node.passed is None:
        return None
    return "✓ calls matched" if node.passed else f"✗ {node.reason or 'calls did not match'}"


def _walk(summary: Sequence[InvocationAgents]) -> Iterator[tuple[int, InvocationAgents | AgentNode]]:
    """(depth, invocation or agent) in document order; iterative (any depth)."""
    for inv in summary:
        yield 0, inv
        stack = [(1, n) for n in reversed(inv.roots)]
        while stack:
            depth, node = stack.pop()
            yield depth, node
            stack.extend((depth + 1, k) for k in reversed(node.children))


def agent_tree(summary: Sequence[InvocationAgents], title: str) -> Tree:
    """The agent trees as one rich tree under `title`."""
    tree = Tree(Text(title, style="bold"))
    path: list[Tree] = [tree]
    for depth, item in _walk(summary):
        del path[depth + 1:]
        if isinstance(item, InvocationAgents):
            path.append(path[depth].add(Text(f"invocation {item.index}", style="bold")))
            continue
        line = Text(item.agent, style="bold")
        line.append("  " + " · ".join(node_facts(item)), style="dim")
        verdict = verdict_text(item)
        if verdict is not None:
            line.append(f"  {verdict}", style="green" if item.passed else "red")
        # an agent's name is data: its ESC shown, not sent
        path.append(path[depth].add(terminal_visible_text(line)))
    return tree


def agent_tree_html(summary: Sequence[InvocationAgents]) -> str:
    """The agent trees as nested lists inside an open `<details>`, every text escaped."""
    parts = ["<details class=agents open><summary>agents</summary><ul>"]
    depth_open = 0
    for depth, item in _walk(summary):
        while depth_open > depth:
            parts.append("</ul></li>")
            depth_open -= 1
        if isinstance(item, InvocationAgents):
            parts.append(f"<li>invocation {item.index}<ul>")
        else:
            verdict = verdict_text(item)
            css = "P" if item.passed else "F"
            mark = f' <span class="{css}">{html.escape(verdict)}</span>' if verdict else ""
            parts.append(f"<li><b>{html.escape(item.agent)}</b> <span class=e>"
                         f"{html.escape(' · '.join(node_facts(item)))}</span>{mark}<ul>")
        depth_open = depth + 1
    parts.append("</ul></li>" * depth_open + "</ul></details>")
    return "".join(parts)


__all__ = ["agent_tree", "agent_tree_html", "case_agents", "figures_text", "multi_agent", "node_facts",
           "verdict_text"]
