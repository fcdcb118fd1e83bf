"""Writing eval cases with the agent or a model: recording what the agent does for some prompts
(a static case), and having a model write conversation scenarios for the agent. A tool built on
the runner (it runs the agent through `runner.infer_case`), for `agenteval eval_set record` and
`generate_eval_cases`; writing the cases into eval-set files is `datasets.authoring`'s.

Generated scenarios are checked before they are kept: a valid `ConversationScenario` with a
starting prompt and a plan of sensible length, and not a near-duplicate of one already kept
(token overlap of the starting prompts, Jaccard >= `DUPLICATE_OVERLAP`).

A case can also be made from what the agent did before, without running it: from a stored trace
or run (`case_from_source`), added to a new or existing eval set file (`add_case_to`).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.agents import Agent, AgentAdapter
from agenteval.datasets.files import editing, write_as_read
from agenteval.datasets.loader import load_eval_set, load_eval_set_to_edit
from agenteval.datasets.stream import big_integer
from agenteval.errors import AgentEvalError, DataError
from agenteval.models.base import LLM, Message, ModelRequest
from agenteval.runner import infer_case
from agenteval.schema import Content, ConversationScenario, EvalCase, EvalCaseResult, EvalSet, Invocation
from agenteval.store import load_run
from agenteval.tracing.ingest import read_traces
from agenteval.tracing.otlp_json import looks_like_otlp

DUPLICATE_OVERLAP = 0.7
MAX_PROMPT_CHARS = 600
MAX_PLAN_CHARS = 2000


def recorded_id(prompts: Sequence[str]) -> str:
    """The id `record_case` gives a case recorded from `prompts` when it is given none."""
    digest = hashlib.sha256("\n".join(prompts).encode()).hexdigest()[:8]
    return f"recorded_{digest}"


async def record_case(adapter: AgentAdapter, prompts: Sequence[str], eval_id: str | None = None,
                      app_name: str | None = None) -> EvalCase:
    """Runs the agent through `prompts` (one turn each, one session) and returns what it did as
    a static case: its answers and tool calls become the expected ones. An agent error is an
    AgentEvalError (nothing is recorded)."""
    turns = [Invocation(user_content=Content.from_text(p, role="user")) for p in prompts]
    case = EvalCase(eval_id=eval_id or recorded_id(prompts), conversation=turns,
                    creation_timestamp=time.time())
    run = await infer_case(adapter, case, "record", 0, app_name)
    if run.error_message:
        raise AgentEvalError(f"the agent failed, nothing was recorded: {run.error_message}")
    recorded = [inv.model_copy(update={"duration": None, "model_duration": None, "tool_duration": None})
                for inv in run.actual]
    return case.model_copy(update={"conversation": recorded})


async def rerecord_case(adapter: AgentAdapter, case: EvalCase, eval_set_id: str,
                        app_name: str | None = None) -> EvalCase:
    """`case` (a static conversation) with its expectations recorded again from a live run of
    the agent on its user turns, in a session with its `session_input`: each turn keeps its user
    message and rubrics and takes the agent's final response and tool calls and responses;
    everything else of the case stays. An agent error is an AgentEvalError naming the case."""
    if case.conversation is None:
        raise AgentEvalError(f"case {case.eval_id!r} is a conversation scenario: nothing to re-record")
    run = await infer_case(adapter, case, eval_set_id, 0, app_name)
    if run.error_message:
        raise AgentEvalError(f"the agent failed on case {case.eval_id!r}, nothing was re-recorded: "
                             f"{run.error_message}")
    turns = [old.model_copy(update={"final_response": new.final_response,
                                    "intermediate_data": new.intermediate_data, "app_details": None})
             for old, new in zip(case.conversation, run.actual, strict=True)]
    return case.model_copy(update={"conversation": turns})


def _expected(invocations: Sequence[Invocation]) -> list[Invocation]:
    """What an agent did, as expected turns: timings dropped (they are the run's, not wanted)."""
    return [inv.model_copy(update={"duration": None, "model_duration": None, "tool_duration": None})
            for inv in invocations]


def case_from_source(ref: str, root: str | Path, case_id: str | None, eval_id: str | None) -> EvalCase:
    """An eval case from what an agent did: a conversation of an OTLP/JSON trace file (`case_id`
    its session id) or a case run of a stored run or result file (`case_id` its eval_id; its
    first run). Its user turns, the actual answers and calls as the expected ones, the state the
    session ended with, and the case's starting session when the run's eval set still has it.
    `eval_id` names the new case (default: the conversation's or case's id). Which one to take
    must be clear: with several and no `case_id`, a DataError lists them. A value an eval set
    cannot hold (an integer beyond 64 bits, which its streaming reader refuses) is a DataError
    naming where in the case it is."""
    case = _case_from_source(ref, root, case_id, eval_id)
    where = big_integer(case.model_dump(mode="json", exclude_none=True), case.eval_id)
    if where is not None:
        raise DataError(ref, where, "an integer beyond 64 bits, which an eval set cannot hold (its "
                        "streaming reader refuses it); write it as a string or a float in the source")
    return case


def _case_from_source(ref: str, root: str | Path, case_id: str | None, eval_id: str | None) -> EvalCase:
    if Path(ref).is_file() and looks_like_otlp(Path(ref).read_bytes()[:65536], ref):
        conversations = read_traces(ref)
        key = _pick(ref, case_id, list(conversations.conversations), "conversation")
        expected = conversations.invocations(key)  # content is checked first: its advice is the fix
        conversations.expectable(key)
        # a conversation without a session id is keyed "trace <id>": no spaces in a case id
        return EvalCase(eval_id=eval_id or re.sub(r"[^\w.-]+", "_", key),
                        conversation=_expected(expected),
                        creation_timestamp=time.time())
    try:
        result = load_run(ref, root)
    except DataError as e:
        # a top-level field missing: not a result document at all, so say what SOURCE may be
        if not Path(ref).is_file() or any(c in e.path for c in ".["):
            raise
        raise DataError(ref, "", "neither an OTLP/JSON trace nor a result document "
                        f"({': '.join(p for p in (e.path, e.message) if p)})") from e
    key = _pick(ref, case_id, list(dict.fromkeys(c.eval_id for c in result.eval_case_results)), "case")
    run = next(c for c in result.eval_case_results if c.eval_id == key)
    if run.error_message or not run.eval_metric_result_per_invocation:
        raise DataError(ref, f"case {key!r}", "the case run has no turns to take (the agent failed: "
                        f"{run.error_message or 'no invocations'})")
    original = _original_case(run)
    state = (run.session_details or {}).get("state")
    turns = [p.actual_invocation for p in run.eval_metric_result_per_invocation]
    return EvalCase(eval_id=eval_id or key, creation_timestamp=time.time(), conversation=_expected(turns),
                    session_input=original.session_input if original else None,
                    final_session_state=state if isinstance(state, dict) else {})


def _pick(ref: str, wanted: str | None, known: list[str], what: str) -> str:
    if wanted is not None:
        if wanted not in known:
            raise DataError(ref, f"--case {wanted}", f"no {what} {wanted!r} (there are: "
                            f"{', '.join(map(repr, known)) or 'none'})")
        return wanted
    if len(known) != 1:
        raise DataError(ref, "--case", f"{len(known)} {what}s: say which with --case "
                        f"({', '.join(map(repr, known))})")
    return known[0]


def _original_case(run: EvalCaseResult) -> EvalCase | None:
    """The run's case as its eval set file has it now, when that file is there and loads."""
    if not run.eval_set_file or not Path(run.eval_set_file).is_file():
        return None
    try:
        cases = load_eval_set(run.eval_set_file).eval_cases
        return next((c for c in cases if c.eval_id == run.eval_id), None)
    except AgentEvalError:
        return None


def add_case_to(path: str | Path, case: EvalCase) -> Path:
    """Adds `case` to the eval set file `path` (ADK's format), made when missing (its id: the
    file's name without `.evalset.json`); a case with the same eval_id there is a DataError
    naming the file. Written atomically and read back."""
    path = Path(path)
    with editing(path):  # read and written with no other edit between (none is lost)
        if path.exists():
            eval_set = load_eval_set_to_edit(path)
        else:
            set_id = path.name.removesuffix(".json").removesuffix(".evalset")
            eval_set = EvalSet(eval_set_id=set_id, name=set_id, eval_cases=[], creation_timestamp=time.time())
        if any(c.eval_id == case.eval_id for c in eval_set.eval_cases):
            raise DataError(path, "eval_cases",
                            f"already has a case {case.eval_id!r} (give another --eval_id)")
        eval_set.eval_cases.append(case)
        write_as_read(path, eval_set)
        load_eval_set(path)
    return path


def describe_agent(agent: Any) -> str:
    """What a scenario writer needs to know of an agent: its instruction and its tools."""
    if isinstance(agent, Agent):
        tools = [{"name": t.name, "description": t.spec.description, "parameters": t.spec.parameters}
                 for t in agent._tools.values()]
        return json.dumps({"agent": agent.name, "instruction": agent.instruction, "tools": tools})
    instruction = getattr(agent, "instruction", None)
    tools = [{"name": getattr(t, "name", getattr(t, "__name__", str(t))),
              "description": (getattr(t, "description", None) or getattr(t, "__doc__", None) or "").strip()}
             for t in getattr(agent, "tools", None) or []]
    return json.dumps({"agent": getattr(agent, "name", type(agent).__name__),
                       "instruction": instruction if isinstance(instruction, str) else
                       (getattr(agent, "__doc__", None) or ""), "tools": tools})


_SYSTEM = ("You write test scenarios for an AI agent. A scenario is what a realistic user wants "
           "from the agent: the first message the user sends, and a plan saying what the user wants "
           "to get done over the conversation and when they are satisfied. Scenarios must be things "
           "this agent can actually help with, using its tools, and each must be different from the "
           "ones listed as written already.")
_SCHEMA = {"type": "object", "properties": {
    "starting_prompt": {"type": "string", "maxLength": MAX_PROMPT_CHARS},
    "conversation_plan": {"type": "string", "maxLength": MAX_PLAN_CHARS},
    "user_persona": {"type": "string", "enum": ["NOVICE", "EXPERT", "EVALUATOR"]}},
    "required": ["starting_prompt", "conversation_plan", "user_persona"], "additionalProperties": False}


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def near_duplicate(a: str, b: str) -> bool:
    wa, wb = _words(a), _words(b)
    return bool(wa or wb) and len(wa & wb) / len(wa | wb) >= DUPLICATE_OVERLAP


@dataclass
class Generation:
    """What scenario generation gave: the kept scenarios, and what it dropped and why."""

    scenarios: list[ConversationScenario] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)  # one line each: why
    duplicates: int = 0
    attempts: int = 0
    seconds: float = 0.0
    first_write_valid: int = 0  # of the attempts, how many were valid as written


async def generate_scenarios(llm: LLM, agent_description: str, count: int, *,
                             instruction: str | None = None, max_attempts: int | None = None) -> Generation:
    """Asks `llm` for scenarios one at a time (each told the ones kept so far) until `count` are
    kept or `max_attempts` (3 x count) replies were read."""
    out = Generation()
    started = time.monotonic()
    limit = max_attempts or 3 * count
    while len(out.scenarios) < count and out.attempts < limit:
        kept = "\n".join(f"- {s.starting_prompt}" for s in out.scenarios) or "(none yet)"
        focus = f"Focus: {instruction}\n\n" if instruction else ""
        prompt = (f"The agent:\n{agent_description}\n\n{focus}"
                  f"Scenarios written already (write a different one):\n{kept}\n\n"
                  "Write one new scenario as JSON with starting_prompt, conversation_plan and "
                  "user_persona (NOVICE, EXPERT or EVALUATOR).")
        reply = await llm.generate(ModelRequest(
            messages=(Message("system", _SYSTEM), Message("user", prompt)), json_schema=_SCHEMA,
            temperature=0.9, seed=out.attempts, max_tokens=400))
        out.attempts += 1
        try:
            scenario = ConversationScenario.model_validate_json(reply.text)
        except ValidationError as e:
            out.invalid.append(f"attempt {out.attempts}: not a scenario ({e.errors()[0]['msg']})")
            continue
        problem = _problem(scenario)
        if problem:
            out.invalid.append(f"attempt {out.attempts}: {problem}")
            continue
        out.first_write_valid += 1
        if any(near_duplicate(scenario.starting_prompt, s.starting_prompt) for s in out.scenarios):
            out.duplicates += 1
            continue
        out.scenarios.append(scenario)
    out.seconds = time.monotonic() - started
    return out


def _problem(s: ConversationScenario) -> str | None:
    """Why a scenario is not usable, or None."""
    if len(s.starting_prompt.strip()) < 3:
        return "empty starting prompt"
    if len(s.conversation_plan.strip()) < 10:
        return "no real conversation plan"
    if len(s.starting_prompt) > MAX_PROMPT_CHARS or len(s.conversation_plan) > MAX_PLAN_CHARS:
        return "too long"
    return None


__all__ = ["DUPLICATE_OVERLAP", "Generation", "add_case_to", "case_from_source", "describe_agent",
           "generate_scenarios", "near_duplicate", "record_case", "recorded_id"]
