"""Judged criteria, same verdicts on both sides: ADK 2.13.0's evaluators vs agenteval's.

    PYTHONPATH=src /work/adkvenv/bin/python bench/parity_judged.py

The two sides ask different questions (ADK one prompt per invocation and sample with every
rubric in it, or a segmenter then a validator; agenteval one question per rubric or sentence,
rubrics in two steps, sentences cross-checked), so the comparison scripts the *verdicts*: a stub
judge on each side reads which invocation, rubric or sentence it is asked about from markers
in the material (`[[k]]`, `ZZidZZ`, `<<sid>>`) and answers the next label of that item's
script, in each side's own reply format (ADK's `is_the_agent_response_valid`, `Verdict: yes`
blocks, `<sentence>` tags and `label:` blocks; agenteval's JSON). ADK's side copies case and
invocation rubrics onto the actual invocations as `LocalEvalService` does, then calls the
evaluator from its metric registry. Every overall and per-invocation (score, status) pair must
be equal. Covered: `final_response_match_v2`, `rubric_based_final_response_quality_v1`,
`rubric_based_tool_use_quality_v1`, `rubric_based_multi_turn_trajectory_quality_v1`,
`hallucinations_v1` (with and without intermediate texts), at 1-5 samples, ties, thresholds at
the edge, criterion / case / typed and untyped rubrics. Exits 1 on any difference.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import warnings
from collections import defaultdict
from collections.abc import AsyncGenerator, Callable
from typing import Any

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config  # noqa: E402
from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet  # noqa: E402
from google.adk.evaluation.local_eval_service import (  # noqa: E402
    _copy_eval_case_rubrics_to_actual_invocations,
    _copy_invocation_rubrics_to_actual_invocations,
)
from google.adk.evaluation.metric_evaluator_registry import (  # noqa: E402
    DEFAULT_METRIC_EVALUATOR_REGISTRY,
)
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.models.registry import LLMRegistry  # noqa: E402
from google.genai import types  # noqa: E402

from agenteval.criteria import default_registry  # noqa: E402
from agenteval.criteria.judge import JudgeService  # noqa: E402
from agenteval.datasets import parse_eval_set  # noqa: E402
from agenteval.models import ModelRequest, ScriptedModel  # noqa: E402
from agenteval.runner import CaseRun, score_case  # noqa: E402

MARK, RID, SID = re.compile(r"\[\[(\w+)\]\]"), re.compile(r"ZZ(\w+?)ZZ"), re.compile(r"<<(\w+)>>")
SCRIPT: dict[str, list[str]] = {}  # item key -> labels, served in order (cycling)
SERVED: dict[str, int] = defaultdict(int)


def label(key: str) -> str:
    seq = SCRIPT[key]
    SERVED[key] += 1
    return seq[(SERVED[key] - 1) % len(seq)]


def after_last(text: str, start: str, end: str) -> str:
    return text.rsplit(start, 1)[1].split(end, 1)[0]


def adk_reply(prompt: str) -> str:
    """ADK's judges: hallucination segmenter / validator, rubric blocks, or FRMv2's label."""
    if "**Response Begin**" in prompt:
        response = after_last(prompt, "**Response Begin**", "**Response End**")
        return "\n".join(f"<sentence>{s.strip()}</sentence>"
                         for s in re.findall(r"[^.<]*<<\w+>>\.", response))
    if "**Sentences Begin**" in prompt:
        block = after_last(prompt, "**Sentences Begin**", "**Sentences End**")
        return "\n".join(f"sentence: {sid}\nlabel: {label(sid)}\nrationale: r\n"
                         "supporting_excerpt: null\ncontradicting_excerpt: null"
                         for sid in SID.findall(block))
    k = MARK.findall(prompt)[-1]
    rids = list(dict.fromkeys(RID.findall(prompt)))
    if rids:
        return "\n".join(f"ID: {rid}\nProperty: Property ZZ{rid}ZZ\nRationale: r\n"
                         f"Verdict: {label(f'{k}/{rid}')}\n" for rid in rids)
    return json.dumps({"reasoning": "r", "is_the_agent_response_valid": label(k)})


def agenteval_reply(req: ModelRequest) -> str:
    """agenteval's judge: the same verdicts in its JSON replies."""
    prompt = req.messages[-1].content
    if "Sentence written by the agent:" in prompt:
        (sid,) = SID.findall(prompt.split("Sentence written by the agent:")[1].splitlines()[0])
        return json.dumps({"rationale": "r", "verdict": label(sid)})
    if "sentence_says" in prompt:  # the cross-check of a supported sentence: confirmed
        return json.dumps({"sentence_says": "x", "context_says": "x", "verdict": "same"})
    k = MARK.findall(prompt)[-1]
    if "Property of the agent's" in prompt:  # a rubric's step 1: the requirement names it
        (rid,) = RID.findall(prompt)
        return json.dumps({"required": f"needs ZZ{rid}ZZ [[{k}]]"})
    rids = set(RID.findall(prompt.split("Property:")[-1]))
    if not rids:
        return json.dumps({"rationale": "r", "verdict": label(k)})
    (rid,) = rids
    verdict = label(f"{k}/{rid}")
    if "Verdict: yes or no?" in prompt:  # the multi-turn rubric question
        return json.dumps({"rationale": "r", "verdict": verdict})
    return json.dumps({"reply_gives": "x", "calls_did": "x",
                       "verdict": {"yes": "meets", "no": "fails"}[verdict]})


class StubJudge(BaseLlm):
    """ADK's judge model `stub-judge`, answering from the script."""

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"stub-judge"]

    async def generate_content_async(self, llm_request: Any, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        text = adk_reply(llm_request.contents[0].parts[0].text)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


LLMRegistry.register(StubJudge)
Result = dict[str, Any]


async def adk_scores(expected: str, actual: str, metric: str, criterion: dict[str, Any]) -> Result:
    config = EvalConfig.model_validate({"criteria": {metric: criterion}})
    (eval_metric,) = [m for m in get_eval_metrics_from_config(config) if m.metric_name == metric]
    acts = {c.eval_id: c.conversation for c in AdkEvalSet.model_validate_json(actual).eval_cases}
    out: Result = {}
    for case in AdkEvalSet.model_validate_json(expected).eval_cases:
        act = acts[case.eval_id]
        _copy_eval_case_rubrics_to_actual_invocations(case, act)
        _copy_invocation_rubrics_to_actual_invocations(case.conversation, act)
        evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(eval_metric)
        r = evaluator.evaluate_invocations(act, case.conversation, None)
        r = await r if asyncio.iscoroutine(r) else r
        out[case.eval_id] = (r.overall_score, r.overall_eval_status.value,
                             [(p.score, p.eval_status.value) for p in r.per_invocation_results])
    return out


def agenteval_scores(expected: str, actual: str, metric: str, criterion: dict[str, Any]) -> Result:
    acts = {c.eval_id: c.conversation for c in parse_eval_set("actual.json", json.loads(actual)).eval_cases}
    model = ScriptedModel(agenteval_reply)
    judge = JudgeService(lambda name: model, None)
    out: Result = {}
    for case in parse_eval_set("expected.json", json.loads(expected)).eval_cases:
        configured = default_registry().configure(metric, criterion)
        res = asyncio.run(score_case(CaseRun(case, acts[case.eval_id], "s"), [configured], judge=judge))
        (o,) = res.overall_eval_metric_results
        out[case.eval_id] = (o.score, int(o.eval_status),
                             [(p.eval_metric_results[0].score, int(p.eval_metric_results[0].eval_status))
                              for p in res.eval_metric_result_per_invocation])
    return out


def inv(user: str, final: str, calls: bool = False, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"user_content": {"role": "user", "parts": [{"text": user}]},
                         "final_response": {"role": "model", "parts": [{"text": final}]}, **extra}
    if calls:  # the marker in the call too: ADK's tool-use prompt shows no final response
        k = MARK.findall(user)[-1]
        d["intermediate_data"] = {"tool_uses": [{"name": "lookup", "args": {"q": f"[[{k}]]"}}],
                                  "tool_responses": [{"name": "lookup", "response": {"r": 1}}]}
    return d


def eval_set(cases: dict[str, list[dict[str, Any]]], rubrics: list[Any] | None = None) -> str:
    return json.dumps({"eval_set_id": "s", "eval_cases": [
        {"eval_id": k, "conversation": v, **({"rubrics": rubrics} if rubrics else {})}
        for k, v in cases.items()]})


def rubric(rid: str, kind: str | None = None) -> dict[str, Any]:
    return {"rubric_id": rid, "rubric_content": {"text_property": f"Property ZZ{rid}ZZ"},
            **({"type": kind} if kind else {})}


def facts(ids: list[str]) -> str:
    return " ".join(f"Fact {s} <<{s}>>." for s in ids)


def scenarios() -> list[tuple[str, str, str, str, dict[str, Any], dict[str, list[str]]]]:
    """(name, expected, actual, metric, criterion, script)."""
    out = []
    judge = {"judge_model": "stub-judge"}
    exp = eval_set({"a": [inv("q1", "Paris")],
                    "b": [inv("q1", "Paris"), inv("q2", "Rome"), inv("q3", "Oslo")]})
    act = eval_set({"a": [inv("q1", "It is Paris [[a1]]")],
                    "b": [inv("q1", "x [[b1]]"), inv("q2", "y [[b2]]"), inv("q3", "z [[b3]]")]})
    v, i = "valid", "invalid"
    for n, script in [(5, {"a1": [v, v, i, i, v], "b1": [i, i, v, v, v], "b2": [v, i, i, v, i], "b3": [v]}),
                      (4, {"a1": [v, v, i, i], "b1": [v, v, v, i], "b2": [i, v, v, v], "b3": [v]}),
                      (2, {"a1": [v, i], "b1": [i, v], "b2": [v, v], "b3": [i, i]}),
                      (1, {"a1": [v], "b1": [i], "b2": [v], "b3": [v]})]:
        for thr in (0.0, 0.5, 2 / 3, 0.6666666666666667, 1.0):
            out.append((f"final_response_match_v2 n={n} threshold={thr}", exp, act, "final_response_match_v2",
                        {"threshold": thr, "judge_model_options": {**judge, "num_samples": n}}, script))
    y, no = "yes", "no"
    script = {}
    for k in ["o1", "t1", "t2", "t3"]:
        script[f"{k}/r1"] = [y, no, y, no, y] if k != "t2" else [no, no, y, y, y]
        script[f"{k}/r2"] = [no, y, no, y, no]
        script[f"{k}/c1"] = [y] if k != "t3" else [no, y, no, no, y]
        script[f"{k}/r8"], script[f"{k}/r9"] = [no], [y]
    exp_cases = {"one": [inv("q", "a")], "three": [inv("q", "a")] * 3}
    act_cases = {"one": [inv("q [[o1]]", "ans [[o1]]", True)],
                 "three": [inv(f"q [[{k}]]", f"x [[{k}]]", True) for k in ("t1", "t2", "t3")]}
    for metric, kind in [("rubric_based_final_response_quality_v1", "FINAL_RESPONSE_QUALITY"),
                         ("rubric_based_tool_use_quality_v1", "TOOL_USE_QUALITY"),
                         ("rubric_based_multi_turn_trajectory_quality_v1", "TRAJECTORY_QUALITY")]:
        for n in (5, 4, 2, 1):
            for thr in (0.5, 2 / 3, 1.0):
                out.append((f"{metric} criterion rubrics n={n} threshold={thr}", eval_set(exp_cases),
                            eval_set(act_cases), metric, {"threshold": thr, "judge_model_options": {
                                **judge, "num_samples": n}, "rubrics": [rubric("r1"), rubric("r2")]}, script))
        # Case rubrics: typed for this metric, of another type, untyped (ADK uses the first only).
        case_rubrics = eval_set(exp_cases, [rubric("c1", kind), rubric("r9", "OTHER_TYPE"), rubric("r8")])
        for n in (5, 2):
            out.append((f"{metric} case rubrics n={n}", case_rubrics, eval_set(act_cases), metric,
                        {"threshold": 0.6, "judge_model_options": {**judge, "num_samples": n},
                         "rubrics": [rubric("r1")]}, script))
        one = json.dumps({"eval_set_id": "s", "eval_cases": [
            {"eval_id": "one", "conversation": [inv("q", "a", rubrics=[rubric("c1", kind)])]}]})
        out.append((f"{metric} invocation rubric", one, eval_set({"one": act_cases["one"]}), metric,
                    {"threshold": 0.5, "judge_model_options": {**judge, "num_samples": 3}}, script))
    u, s, na, c = "unsupported", "supported", "not_applicable", "contradictory"
    labels = {"a1": [u], **{f"b{k}": [s if k == 0 else u] for k in range(7)},
              **{f"c{k}": [s if k == 0 else u] for k in range(6)},
              "m1": [s], "m2": [u], "m3": [s], "d1": [s], "d2": [u], "d3": [u], "e1": [na], "e2": [c]}

    def turn(ids: list[str], texts: tuple[list[str], ...] = ()) -> dict[str, Any]:
        d = inv("q", facts(ids))
        if texts:
            d["intermediate_data"] = {"invocation_events": [
                {"author": "agent", "content": {"role": "model", "parts": [{"text": facts(t)}]}}
                for t in texts]}
        return d

    halluc = eval_set({
        "three": [turn(["a1"]), turn([f"b{k}" for k in range(7)]), turn([f"c{k}" for k in range(6)])],
        "intermediate": [turn(["d1", "d2", "d3"], (["m1"],))],
        "two_texts": [turn(["e1", "e2"], (["m2", "m3"], ["m1"])), turn(["d1", "d2", "d3"], (["m1"],))],
        "empty": [turn(["d1"]), inv("q", ""), turn(["d2", "e1"])]})
    for thr in (0.10317460317460317, 0.10317460317460318, 0.5):
        for mid in (False, True):
            out.append((f"hallucinations_v1 threshold={thr} intermediate={mid}", halluc, halluc,
                        "hallucinations_v1", {"threshold": thr, "evaluate_intermediate_nl_responses": mid,
                                              "judge_model_options": {**judge, "num_samples": 1}}, labels))
    return out


def main() -> int:
    differ = 0
    all_scenarios = scenarios()
    for name, expected, actual, metric, criterion, script in all_scenarios:
        results = []
        side: Callable[..., Any]
        for side in (lambda *a: asyncio.run(adk_scores(*a)), agenteval_scores):
            SCRIPT.clear()
            SCRIPT.update(script)
            SERVED.clear()
            results.append(side(expected, actual, metric, criterion))
        if results[0] != results[1]:
            differ += 1
            print(f"DIFFERENT {name}\n  ADK:       {results[0]}\n  agenteval: {results[1]}")
    print(f"{len(all_scenarios) - differ} of {len(all_scenarios)} scenarios identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
