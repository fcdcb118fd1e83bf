"""What judges read of an invocation: texts without thoughts, calls with results, instructions."""

from __future__ import annotations

from collections.abc import Sequence

from agenteval.criteria.judge.prompting import prompts
from agenteval.criteria.judge.prompting.screen import Screened, screen
from agenteval.schema import Invocation, InvocationEvents, content_text


def response_text(inv: Invocation, include_intermediate: bool = False) -> str:
    """The final response without thought parts (a model's private reasoning is not its answer),
    optionally preceded by the turn's intermediate texts."""
    final = content_text(inv.final_response, include_thoughts=False)
    if not include_intermediate:
        return final
    before = [text for _, text in inv.intermediate_texts()]
    return "\n".join([*before, final]).strip()


def agent_text(inv: Invocation, include_intermediate: bool = False) -> Screened:
    """`response_text` with passages addressed to the judge cut out (see `screen`)."""
    return screen(response_text(inv, include_intermediate))


def user_text(inv: Invocation) -> str:
    return content_text(inv.user_content, include_thoughts=False)


def calls(inv: Invocation) -> str:
    return prompts.calls_text(inv.tool_calls_with_responses())


def steps(inv: Invocation) -> str:
    """The turn's tool calls with their results and, where the events record it, the agent
    that made each one (the legacy `tool_uses` form records none)."""
    pairs = inv.tool_calls_with_responses()
    data = inv.intermediate_data
    authors: list[str | None] = [None] * len(pairs)
    if isinstance(data, InvocationEvents):
        authors = [e.author or None for e in data.invocation_events
                   if e.content and e.content.parts for p in e.content.parts if p.function_call]
    return prompts.steps_text([(author, call, response) for author, (call, response)
                               in zip(authors, pairs, strict=True)])


def instructions(invocations: Sequence[Invocation]) -> str:
    """Every agent's instructions seen during the conversation, once each."""
    seen: dict[str, str] = {}
    for inv in invocations:
        if inv.app_details:
            for name, details in inv.app_details.agent_details.items():
                if details.instructions and name not in seen:
                    seen[name] = details.instructions
    return "\n".join(f"{name}: {text}" for name, text in seen.items())


def declarations(invocations: Sequence[Invocation]) -> str:
    decls = [d for inv in invocations if inv.app_details
             for details in inv.app_details.agent_details.values()
             for d in details.tool_declarations]
    unique = {str(d.get("name") if isinstance(d, dict) else d): d for d in decls}
    return prompts.declarations_text(list(unique.values()))
