"""Labelled judge sets: cases with the verdict an honest, careful judge would give.

The format (documented for users in README "Calibrating the judge", and the one of
`bench/judge_set`): a JSON list of cases, each with an `id`, a `label` and the fields of its kind:

| kind (`criterion`, or the file name) | fields | labels (positive first) |
|---|---|---|
| `final_response_match` | `user_prompt`, `reference`, `response` | valid / invalid |
| `rubric_final_response` | `user_prompt`, `tool_calls`?, `response`, `rubric` | yes / no |
| `rubric_tool_use` | `user_prompt`, `tool_declarations`?, `tool_calls`, `rubric` | yes / no |
| `hallucinations` | `context` (`user_prompt`, `tool_calls`?, `instructions`?), `sentence` | supported / no |
| `safety` | `user_prompt`, `response` | safe / unsafe |
| `trajectory` | `user_prompt`, `tool_calls`, `response` | accomplished / not_accomplished |
| `multi_turn_task_success` (and `_trajectory_quality`, `_tool_use_quality`) | `turns` | yes / no |
| `multi_turn` | `turns`, `instructions`?, `labels` (instead of `label`) | yes / no |
| `rubric_multi_turn_trajectory` | `turns`, `instructions`?, `rubric` | yes / no |
| `simulated_user` | `plan`, `persona`?, `turns` | valid / invalid |

(`hallucinations`' negative labels are `unsupported` and `contradictory`.) A tool call is
`{"name", "args", "response"}`. A case names its kind with `criterion`; without
it, the kind is the file's name (`safety.json`, `rubric_tool_use_blind.json`, ...).

A conversation (`turns`) is a list of `{"user", "tool_calls"?, "response"}`, one per turn. A
`multi_turn` case labels one conversation for up to three questions at once: `labels` maps
`task_success`, `trajectory_quality` and `tool_use_quality` to yes / no, and the case stands
for one labelled case per question (id `<id>/<question>`). A `simulated_user` case is a
conversation simulated from a plan: its first user message is the scenario's starting prompt,
and its label is the simulated user's conduct over the whole conversation (every later message
followed the plan, and it stopped where it should), which is what the criterion's score of 1
means.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenteval.errors import DataError
from agenteval.schema import (
    AgentDetails,
    AppDetails,
    Content,
    ConversationScenario,
    EvalCase,
    FunctionCall,
    FunctionResponse,
    IntermediateData,
    Invocation,
)

METRIC = {
    "final_response_match": "final_response_match_v2",
    "rubric_final_response": "rubric_based_final_response_quality_v1",
    "rubric_tool_use": "rubric_based_tool_use_quality_v1",
    "hallucinations": "hallucinations_v1",
    "safety": "safety_v1",
    "trajectory": "trajectory_judge_v1",
    "multi_turn_task_success": "multi_turn_task_success_v1",
    "multi_turn_trajectory_quality": "multi_turn_trajectory_quality_v1",
    "multi_turn_tool_use_quality": "multi_turn_tool_use_quality_v1",
    "rubric_multi_turn_trajectory": "rubric_based_multi_turn_trajectory_quality_v1",
    "simulated_user": "per_turn_user_simulator_quality_v1",
}
# A `multi_turn` case: one conversation labelled for several of these questions at once.
MULTI_TURN_QUESTIONS = ("task_success", "trajectory_quality", "tool_use_quality")
# Each kind's labels, its positive one first (the table above).
LABELS = {"final_response_match": ("valid", "invalid"), "rubric_final_response": ("yes", "no"),
          "rubric_tool_use": ("yes", "no"), "hallucinations": ("supported", "unsupported", "contradictory"),
          "safety": ("safe", "unsafe"), "trajectory": ("accomplished", "not_accomplished"),
          "multi_turn_task_success": ("yes", "no"), "multi_turn_trajectory_quality": ("yes", "no"),
          "multi_turn_tool_use_quality": ("yes", "no"), "rubric_multi_turn_trajectory": ("yes", "no"),
          "simulated_user": ("valid", "invalid")}
POSITIVE = frozenset(labels[0] for labels in LABELS.values())
_REQUIRED = {"final_response_match": ("user_prompt", "reference", "response"),
             "rubric_final_response": ("user_prompt", "response", "rubric"),
             "rubric_tool_use": ("user_prompt", "rubric"),
             "hallucinations": ("context", "sentence"), "safety": ("user_prompt", "response"),
             "trajectory": ("user_prompt", "tool_calls", "response"),
             "multi_turn_task_success": ("turns",), "multi_turn_trajectory_quality": ("turns",),
             "multi_turn_tool_use_quality": ("turns",), "rubric_multi_turn_trajectory": ("turns", "rubric"),
             "simulated_user": ("plan", "turns")}


@dataclass(frozen=True)
class LabelledCase:
    """One labelled case ready to score: the metric, its expected and actual invocations."""

    id: str
    kind: str
    label: str
    metric: str
    case: EvalCase
    actual: list[Invocation]
    rubric: str | None = None

    @property
    def positive(self) -> bool:
        return self.label in POSITIVE


def invocation(user: str, response: str, calls: list[dict[str, Any]] | None = None,
               instructions: str = "", declarations: list[dict[str, Any]] | None = None) -> Invocation:
    """One invocation with the case's tool calls (and results) and, if any, app details."""
    calls = calls or []
    app = None
    if instructions or declarations:
        app = AppDetails(agent_details={"agent": AgentDetails(
            name="agent", instructions=instructions, tool_declarations=declarations or [])})
    return Invocation(
        user_content=Content.from_text(user, role="user"),
        final_response=Content.from_text(response),
        intermediate_data=IntermediateData(
            tool_uses=[FunctionCall(name=c["name"], args=c.get("args", {})) for c in calls],
            tool_responses=[FunctionResponse(name=c["name"], response=c.get("response", {}))
                            for c in calls]),
        app_details=app,
    )


def conversation(turns: list[dict[str, Any]], instructions: str = "") -> list[Invocation]:
    """A labelled conversation's invocations (the agent's instructions on the first)."""
    return [invocation(t["user"], t["response"], t.get("tool_calls"), instructions if i == 0 else "")
            for i, t in enumerate(turns)]


def build(kind: str, raw: dict[str, Any]) -> LabelledCase:
    """A labelled case of `kind` from its JSON fields."""
    expected: list[Invocation] | None = None
    rubric = None
    scenario = None
    if kind.startswith(("multi_turn_", "rubric_multi_turn")):
        actual = conversation(raw["turns"], raw.get("instructions", ""))
        rubric = raw.get("rubric")
    elif kind == "simulated_user":
        actual = conversation(raw["turns"])
        scenario = ConversationScenario(starting_prompt=raw["turns"][0]["user"],
                                        conversation_plan=raw["plan"], user_persona=raw.get("persona"))
    elif kind == "trajectory":
        actual = [invocation(raw["user_prompt"], raw["response"], raw["tool_calls"])]
    elif kind == "final_response_match":
        actual = [invocation(raw["user_prompt"], raw["response"])]
        expected = [invocation(raw["user_prompt"], raw["reference"])]
    elif kind == "rubric_final_response":
        actual = [invocation(raw["user_prompt"], raw["response"], raw.get("tool_calls"))]
        rubric = raw["rubric"]
    elif kind == "rubric_tool_use":
        actual = [invocation(raw["user_prompt"], raw.get("response", ""), raw.get("tool_calls"),
                             declarations=raw.get("tool_declarations"))]
        rubric = raw["rubric"]
    elif kind == "hallucinations":
        ctx = raw["context"]
        actual = [invocation(ctx["user_prompt"], raw["sentence"], ctx.get("tool_calls"),
                             instructions=ctx.get("instructions", ""))]
    else:  # safety
        actual = [invocation(raw["user_prompt"], raw["response"])]
    case = (EvalCase(eval_id=str(raw["id"]), conversation_scenario=scenario) if scenario
            else EvalCase(eval_id=str(raw["id"]), conversation=expected or actual))
    return LabelledCase(str(raw["id"]), kind, str(raw["label"]), METRIC[kind], case, actual, rubric)


def criterion_config(case: LabelledCase, num_samples: int, judge_model: str | None = None,
                     ) -> dict[str, Any]:
    """The criterion object that scores one labelled case (threshold 1: the one item passes;
    min_confidence 0: every verdict is committed, so that its confidence can be calibrated)."""
    options: dict[str, Any] = {"num_samples": num_samples, "min_confidence": 0.0}
    if judge_model:
        options["judge_model"] = judge_model
    config: dict[str, Any] = {"threshold": 1.0, "judge_model_options": options}
    if case.rubric is not None:
        config["rubrics"] = [{"rubric_id": "r1", "rubric_content": {"text_property": case.rubric}}]
    return config


def kind_of(path: Path) -> str | None:
    name = path.name.removesuffix(".json").removesuffix("_blind")
    return name if name in METRIC else None


def load_labelled(path: str | Path) -> list[LabelledCase]:
    """The cases of a labelled file (or of every `*.json` in a folder); errors name the file
    and the case."""
    path = Path(path)
    # A folder: the files named after a kind (others, like the screening sets, are not labelled
    # judge cases of these kinds).
    files = sorted(p for p in path.glob("*.json") if kind_of(p) or p.name == "injection.json") \
        if path.is_dir() else [path]
    out: list[LabelledCase] = []
    seen: dict[tuple[str, str], str] = {}  # (metric, case id): where it was first given
    for file in files:
        try:
            cases = json.loads(file.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError) as e:
            raise DataError(file, "", f"cannot read a labelled set: {e}") from None
        if not isinstance(cases, list):
            raise DataError(file, "", "a labelled set is a JSON list of cases")
        for i, raw in enumerate(cases):
            where = f"[{i}]"
            if not isinstance(raw, dict):
                raise DataError(file, where, "a case is an object")
            kind = raw.get("criterion") or kind_of(file)
            if kind == "multi_turn":
                for case in _multi_turn(file, where, raw):
                    _check_unique(file, where, case, seen)
                    out.append(case)
                continue
            if kind not in METRIC:
                what = (f"unknown kind {kind!r}" if kind else
                        f"no kind: the case names none and the file's name ({file.name}) is not one")
                raise DataError(file, f"{where}.criterion", f"{what}; one of "
                                f"{', '.join(METRIC)}, multi_turn (or name the file after the kind)")
            for key in ("id", "label", *_REQUIRED[kind]):
                if key not in raw:
                    raise DataError(file, f"{where}.{key}", "field required")
            if raw["label"] not in LABELS[kind]:  # a typo is not a negative label
                raise DataError(file, f"{where}.label", f"{raw['label']!r} is not a label of {kind}: "
                                + " or ".join(LABELS[kind]))
            if "turns" in _REQUIRED[kind]:
                _check_turns(file, where, raw["turns"])
            _check_fields(file, where, raw)
            case = build(kind, raw)
            _check_unique(file, where, case, seen)
            out.append(case)
    return out


# Fields of a labelled case that hold text (the case's id may also be a number).
_TEXT = ("user_prompt", "reference", "response", "rubric", "sentence", "plan", "persona", "instructions")


def _check_fields(file: Path, where: str, raw: dict[str, Any]) -> None:
    """The fields a case has are of their types: a wrong one would otherwise stop the run with a
    traceback, or be judged as the text of its Python value."""
    if not isinstance(raw["id"], (str, int)) or isinstance(raw["id"], bool):
        raise DataError(file, f"{where}.id", "must be a string or a whole number")
    for key in _TEXT:
        if key in raw and not isinstance(raw[key], str) and not (key == "persona" and raw[key] is None):
            raise DataError(file, f"{where}.{key}", f"must be a string, got {type(raw[key]).__name__}")
    if raw.get("tool_calls") is not None:
        _check_calls(file, f"{where}.tool_calls", raw["tool_calls"])
    declarations = raw.get("tool_declarations")
    if declarations is not None and (not isinstance(declarations, list)
                                     or not all(isinstance(d, dict) for d in declarations)):
        raise DataError(file, f"{where}.tool_declarations", "must be a list of tool declaration objects")
    if "context" in raw:
        context = raw["context"]
        if not isinstance(context, dict):
            raise DataError(file, f"{where}.context", "must be an object {user_prompt, tool_calls?, "
                            "instructions?}")
        if not isinstance(context.get("user_prompt"), str):
            raise DataError(file, f"{where}.context.user_prompt", "field required (a string)")
        if not isinstance(context.get("instructions", ""), str):
            raise DataError(file, f"{where}.context.instructions", "must be a string")
        if context.get("tool_calls") is not None:
            _check_calls(file, f"{where}.context.tool_calls", context["tool_calls"])


def _check_calls(file: Path, where: str, calls: Any) -> None:
    if not isinstance(calls, list):
        raise DataError(file, where, "must be a list of tool calls {name, args?, response?}")
    for j, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise DataError(file, f"{where}[{j}].name", "a tool call is an object with a \"name\" (a string)")
        if not isinstance(call.get("args", {}), dict):
            raise DataError(file, f"{where}[{j}].args", "must be an object of the call's arguments")


def _check_unique(file: Path, where: str, case: LabelledCase, seen: dict[tuple[str, str], str]) -> None:
    """A case id is given once per criterion: a second label of the same id would count one
    case twice (or both ways) in the agreement, and `--details` could not tell them apart."""
    key = (case.metric, case.id)
    if key in seen:
        raise DataError(file, f"{where}.id", f"{case.id!r} is already the id of {seen[key]} "
                        f"({case.metric}): give each labelled case its own id")
    seen[key] = f"{file.name}{where}"


def _check_turns(file: Path, where: str, turns: Any) -> None:
    if not isinstance(turns, list) or not turns:
        raise DataError(file, f"{where}.turns", "a conversation is a non-empty list of turns")
    for j, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise DataError(file, f"{where}.turns[{j}]", "a turn is an object {user, tool_calls?, response}")
        for key in ("user", "response"):
            if not isinstance(turn.get(key), str):
                raise DataError(file, f"{where}.turns[{j}].{key}", "field required (a string)")
        if turn.get("tool_calls") is not None:
            _check_calls(file, f"{where}.turns[{j}].tool_calls", turn["tool_calls"])


def _multi_turn(file: Path, where: str, raw: dict[str, Any]) -> list[LabelledCase]:
    """A conversation labelled for several multi-turn questions: one case per question."""
    for key in ("id", "turns", "labels"):
        if key not in raw:
            raise DataError(file, f"{where}.{key}", "field required")
    _check_turns(file, where, raw["turns"])
    _check_fields(file, where, raw)
    labels = raw["labels"]
    if not isinstance(labels, dict) or not labels:
        raise DataError(file, f"{where}.labels", f"an object mapping {', '.join(MULTI_TURN_QUESTIONS)} "
                        "to yes / no")
    out = []
    for question, label in labels.items():
        if question not in MULTI_TURN_QUESTIONS or label not in ("yes", "no"):
            raise DataError(file, f"{where}.labels.{question}", "a question of "
                            f"{', '.join(MULTI_TURN_QUESTIONS)} labelled yes or no, got {label!r}")
        out.append(build(f"multi_turn_{question}", {**raw, "id": f"{raw['id']}/{question}", "label": label}))
    return out


__all__ = ["LABELS", "METRIC", "MULTI_TURN_QUESTIONS", "POSITIVE", "LabelledCase", "build", "conversation",
           "criterion_config", "invocation", "load_labelled"]
