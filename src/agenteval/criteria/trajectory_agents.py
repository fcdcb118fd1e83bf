"""Trajectory extensions for multi-agent apps: per-agent matching, `ignore_tools`, SUBSET.

**Per-agent matching.** A call's agent is its event's `author` (ADK's `InvocationEvents` form;
the legacy `tool_uses` form names no agent). With `per_agent` unset (auto), a case is matched
per agent when the events of its expected invocations name **two distinct authors or more**
(in any turn, text events included): a set recorded from a root-only app has one author, and
keeps ADK's flat semantics exactly. `per_agent: true` matches per agent whenever the expected
events name an author (an error when none does); `per_agent: false` always matches flat, as
ADK does.

Matched per agent, the expected and actual calls of a turn are grouped by author and each
agent's calls are matched on their own under the match type, so the order is checked within
each agent only (how parallel branches interleave does not matter); the turn matches when
every agent's calls do. An agent that made calls but has none expected fails EXACT and SUBSET
(extra calls), as in flat matching. A call made by the wrong agent fails, and the reason names
both agents. An expected turn in the legacy form is matched flat; an actual turn in that form
names no agent, so its calls match no agent's.

**SUBSET** (as LangChain agentevals names it): the actual calls are contained in the expected
ones, with multiplicity and in any order; every call made was expected, expected calls may be
left out. **SUPERSET**: the actual calls contain the expected ones, which is ANY_ORDER's test.

**`ignore_tools`**: calls to these tools are dropped from both sides before matching (and
before grouping by agent). Call ids, such as a handoff's volatile ones, are never compared.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from agenteval.criteria.reasons import call_text
from agenteval.schema import FunctionCall, Invocation, InvocationEvents

# Whether an actual call equals an expected one (the trajectory criterion's comparer).
Equal = Callable[[FunctionCall, FunctionCall], bool]
# A match type's test and its failure reason, over (actual, expected) calls.
Match = Callable[[Sequence[FunctionCall], Sequence[FunctionCall]], bool]
Explain = Callable[[Sequence[FunctionCall], Sequence[FunctionCall]], str]
# (author, call); the author is None where the turn names no agent (the legacy form).
Authored = list[tuple[str | None, FunctionCall]]

UNNAMED = "an agent the actual turn does not name"


def without(calls: Sequence[FunctionCall], ignore: Collection[str]) -> list[FunctionCall]:
    """The calls that are not to tools in `ignore`."""
    return [c for c in calls if c.name not in ignore]


def authored_calls(inv: Invocation, ignore: Collection[str] = ()) -> Authored:
    """The turn's calls with their authors, in order, without calls to tools in `ignore`."""
    data = inv.intermediate_data
    if not isinstance(data, InvocationEvents):
        return [(None, c) for c in without(inv.tool_calls(), ignore)]
    return [(e.author, p.function_call)
            for e in data.invocation_events if e.content and e.content.parts
            for p in e.content.parts if p.function_call and p.function_call.name not in ignore]


def authors(invocations: Sequence[Invocation]) -> set[str]:
    """Every author the invocations' events name."""
    return {e.author for inv in invocations if isinstance(inv.intermediate_data, InvocationEvents)
            for e in inv.intermediate_data.invocation_events}


def per_agent_mode(setting: bool | None, expected: Sequence[Invocation]) -> bool | str:
    """Whether the case is matched per agent (see the module docstring), or why it cannot be."""
    if setting is False:
        return False
    named = authors(expected)
    if setting is None:
        return len(named) >= 2
    if not named:
        return ("per_agent is true but the expected turns name no agent (their calls carry no "
                "author): set per_agent to false, or record the expected events with authors")
    return True


# --- SUBSET -------------------------------------------------------------------------------------

def extra_calls(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall], equal: Equal) -> list[int]:
    """Indices of the actual calls left over once each is paired with an unused equal expected
    call (first come, first paired)."""
    pool = list(range(len(expected)))
    extra = []
    for i, call in enumerate(actual):
        k = next((k for k in pool if equal(call, expected[k])), None)
        if k is None:
            extra.append(i)
        else:
            pool.remove(k)
    return extra


def subset_match(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall], equal: Equal) -> bool:
    """SUBSET: every actual call is among the expected ones, with multiplicity."""
    return not extra_calls(actual, expected, equal)


def subset_reason(actual: Sequence[FunctionCall], expected: Sequence[FunctionCall], equal: Equal) -> str:
    """Why SUBSET failed: the first call made that the expected calls do not contain."""
    extra = extra_calls(actual, expected, equal)
    k = extra[0]
    return (f"call {k + 1}, {call_text(actual[k])}, is not among the expected calls (the calls made "
            f"must be contained in the expected ones; {len(actual) - len(extra)} of {len(actual)} are)")


def superset_reason(why_any_order: str) -> str:
    """SUPERSET's reason: ANY_ORDER's, saying which side must contain which."""
    return f"the calls made must contain the expected ones: {why_any_order}"


# --- per agent ----------------------------------------------------------------------------------

def _group(calls: Authored) -> dict[str | None, list[FunctionCall]]:
    out: dict[str | None, list[FunctionCall]] = {}
    for author, call in calls:
        out.setdefault(author, []).append(call)
    return out


def _who(author: str | None) -> str:
    return UNNAMED if author is None else author


def agents_failing(got: Authored, want: Authored, match: Match) -> list[str | None]:
    """The agents (expected ones first, in order of appearance) whose calls do not match."""
    g, w = _group(got), _group(want)
    order = list(dict.fromkeys([*w, *g]))
    return [a for a in order if not match(g.get(a, []), w.get(a, []))]


def per_agent_reason(got: Authored, want: Authored, failing: str | None, explain: Explain,
                     equal: Equal) -> str:
    """Why agent `failing`'s calls did not match: a call expected from it that another agent
    made (or one it made that was expected from another), naming both agents; otherwise the
    match type's reason within that agent's calls."""
    g, w = _group(got), _group(want)
    mine, theirs = g.get(failing, []), w.get(failing, [])
    pool = list(mine)
    for call in theirs:  # expected from `failing`, not made by it
        k = next((k for k, c in enumerate(pool) if equal(c, call)), None)
        if k is not None:
            del pool[k]
            continue
        makers = [a for a, calls in g.items() if a != failing and any(equal(c, call) for c in calls)]
        if makers:
            return f"{call_text(call)} was expected from {_who(failing)}, made by {_who(makers[0])}"
    for k in extra_calls(mine, theirs, equal):  # made by `failing`, not expected from it
        call = mine[k]
        owners = [a for a, calls in w.items() if a != failing and any(equal(call, c) for c in calls)]
        if owners:
            return f"{call_text(call)} was expected from {_who(owners[0])}, made by {_who(failing)}"
    return f"{_who(failing)}'s calls: {explain(mine, theirs)}"


def per_agent_passed(want: Authored, got: Authored) -> str:
    """How a per-agent match passed: the agents whose calls were matched on their own."""
    agents = [a for a in dict.fromkeys(a for a, _ in [*want, *got]) if a is not None]
    return f"each agent's calls matched on their own ({', '.join(agents)})" if agents else \
        "each agent's calls matched on their own"


__all__ = ["UNNAMED", "Authored", "Equal", "agents_failing", "authored_calls", "authors", "extra_calls",
           "per_agent_mode", "per_agent_passed", "per_agent_reason", "subset_match", "subset_reason",
           "superset_reason", "without"]
