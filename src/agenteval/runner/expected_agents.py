"""The agents an eval set's expected events name, checked against the app's before a run.

A criterion that matches calls per agent (`tool_trajectory_avg_score` with `per_agent`, auto
when a case's expected events name two authors or more) or reads who handled a turn
(`turn_agent_match_v1`) takes each expected event's `author`, and each expected handoff's
target (`transfer_to_agent(agent_name=…)`), for an agent of the app. A name that is no agent of
the app (a typo, a renamed agent) can only fail its case, run after run, each time after the
agent has run; so a run refuses it before it starts (a DataError naming the file and the
field). Only apps whose agents are known are checked (`agents.agent_names`: ADK apps and
agenteval's built-in agent; a callable may author its events with any name).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenteval.criteria.base import AgentUse
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.errors import DataError
from agenteval.schema import EvalCase, InvocationEvents

TRANSFER = "transfer_to_agent"


def named_agents(case: EvalCase, i: int) -> list[tuple[str, str]]:
    """Each agent the case's expected events name (authors, then handoff targets, in order),
    with where it is named: `eval_cases[i].conversation[j].…`."""
    out: list[tuple[str, str]] = []
    for j, inv in enumerate(case.conversation or []):
        data = inv.intermediate_data
        if not isinstance(data, InvocationEvents):
            continue
        for k, e in enumerate(data.invocation_events):
            where = f"eval_cases[{i}].conversation[{j}].intermediate_data.invocation_events[{k}]"
            out.append((e.author, f"{where}.author"))
            for p, part in enumerate(e.content.parts or [] if e.content else []):
                call = part.function_call
                target = (call.args or {}).get("agent_name") if call and call.name == TRANSFER else None
                if isinstance(target, str):
                    out.append((target, f"{where}.content.parts[{p}].function_call.args.agent_name"))
    return out


@dataclass
class NamedAgents:
    """The agents a set's expected events name, each with the first place it is named: in any
    case (`every`), and in cases whose events name two authors or more (`several`: those an auto
    `per_agent` matches per agent)."""

    every: dict[str, str] = field(default_factory=dict)
    several: dict[str, str] = field(default_factory=dict)

    def add(self, case: EvalCase, i: int) -> None:
        named = named_agents(case, i)
        if not named:
            return
        authors = {name for name, where in named if where.endswith(".author")}
        for name, where in named:
            self.every.setdefault(name, where)
            if len(authors) >= 2:
                self.several.setdefault(name, where)

    def to_json(self) -> dict[str, Any]:
        return {"every": self.every, "several": self.several}

    @classmethod
    def from_json(cls, data: Any) -> NamedAgents | None:
        """The names `data` holds (`to_json`); None for anything else."""
        if not isinstance(data, dict):
            return None
        parts = [data.get("every"), data.get("several")]
        if not all(isinstance(p, dict) and all(isinstance(k, str) and isinstance(v, str)
                                               for k, v in p.items()) for p in parts):
            return None
        return cls(dict(parts[0]), dict(parts[1]))  # type: ignore[arg-type]


def check_expected_agents(metrics: Sequence[ConfiguredMetric], sets: Sequence[tuple[Any, NamedAgents]],
                          agents: Collection[str] | None) -> None:
    """A DataError naming the file (each of `sets` is (its path, what it names)) and the field
    where an expected event names an agent that is not one of `agents` (the app's), when a
    criterion of `metrics` reads it as one (see the module docstring). Nothing is checked when
    the app's agents are not known (None)."""
    if agents is None:
        return
    uses: dict[AgentUse, str] = {}
    for m in metrics:
        uses.setdefault(m.build().agent_use(), m.name)
    for path, named in sets:
        for use in ("always", "several"):
            if use not in uses:
                continue
            for name, where in (named.every if use == "always" else named.several).items():
                if name not in agents and name != "user":
                    raise DataError(path, where, f"{name!r} is not an agent of the app (its agents: "
                                    f"{', '.join(sorted(agents))}); {uses[use]} reads it as one, so "
                                    "the case could only fail: name an agent of the app")


__all__ = ["NamedAgents", "check_expected_agents", "named_agents"]
