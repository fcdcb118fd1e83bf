"""ADK 2.13.0's own judge prompts on the same labelled set and the same local model (measurement only).

Three phases, because ADK lives in /work/adkvenv (no xllamacpp) and the model in the system Python:

1. `prompts` (run by the ADK interpreter): builds ADK `Invocation`s from each case and formats the
   prompt with ADK's own code: `FinalResponseMatchV2Evaluator.format_auto_rater_prompt`,
   `RubricBasedFinalResponseQualityV1Evaluator` / `RubricBasedToolUseV1Evaluator`
   `.format_auto_rater_prompt`, and for hallucinations ADK's validator template filled with the
   evaluator's own `_get_steps_to_evaluate` context and the case's sentence as the one segmented
   sentence (ADK's segmenter call is skipped: every case is one sentence already).
2. model calls (system Python): each prompt is sent as ADK sends it, a single user message with
   no system prompt and no constrained output, greedy, to `resolve_model("local", {})`.
3. `parse` (ADK interpreter): each reply goes through ADK's own parsers:
   `convert_auto_rater_response_to_score` (final_response_match_v2 `_parse_critique`, rubric
   `DefaultAutoRaterResponseParser`) and hallucinations `_parse_validation_results` with its label
   sets. A reply ADK cannot parse counts as a wrong answer (ADK would leave it NOT_EVALUATED).

safety_v1 has no ADK prompt to run locally (ADK sends it to the Vertex AI evaluation service).

    python bench/bench_judge_adk.py [--only CRITERION] [--limit N] [--ids a,b] [--max-tokens 640]

Writes bench/out/judge_results_adk.jsonl and prints a side-by-side table with the agenteval
results in bench/out/judge_results.jsonl (if present).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ADK_PY = os.environ.get("ADK_PYTHON", "/work/adkvenv/bin/python")
ADK_KINDS = ("final_response_match", "rubric_final_response", "rubric_tool_use", "hallucinations")


# ---------------------------------------------------------------------------------------------
# Phases 1 and 3: inside the ADK interpreter


def _adk_invocation(user: str, response: str, calls: list[dict[str, Any]] | None,
                    instructions: str = "", declarations: list[dict[str, Any]] | None = None) -> Any:
    from google.adk.evaluation.app_details import AgentDetails, AppDetails
    from google.adk.evaluation.eval_case import Invocation, InvocationEvent, InvocationEvents
    from google.genai import types

    events = []
    for i, c in enumerate(calls or []):
        cid = f"call_{i}"
        events.append(InvocationEvent(author="agent", content=types.Content(role="model", parts=[
            types.Part(function_call=types.FunctionCall(id=cid, name=c["name"], args=c.get("args") or {}))])))
        events.append(InvocationEvent(author="agent", content=types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(id=cid, name=c["name"],
                                                                 response=c.get("response") or {}))])))
    app = None
    if instructions or declarations is not None:
        decl = [types.Tool(function_declarations=[types.FunctionDeclaration(**d) for d in declarations])
                ] if declarations else []
        app = AppDetails(agent_details={"agent": AgentDetails(name="agent", instructions=instructions,
                                                               tool_declarations=decl)})
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text=user)]),
        final_response=types.Content(role="model", parts=[types.Part(text=response)]),
        intermediate_data=InvocationEvents(invocation_events=events), app_details=app)


def _evaluator(kind: str, rubric: str | None = None) -> Any:
    from google.adk.evaluation.eval_metrics import (
        EvalMetric,
        HallucinationsCriterion,
        JudgeModelOptions,
        LlmAsAJudgeCriterion,
        RubricsBasedCriterion,
    )
    from google.adk.evaluation.eval_rubrics import Rubric, RubricContent
    from google.adk.evaluation.final_response_match_v2 import FinalResponseMatchV2Evaluator
    from google.adk.evaluation.hallucinations_v1 import HallucinationsV1Evaluator
    from google.adk.evaluation.rubric_based_final_response_quality_v1 import (
        RubricBasedFinalResponseQualityV1Evaluator,
    )
    from google.adk.evaluation.rubric_based_tool_use_quality_v1 import RubricBasedToolUseV1Evaluator

    opts = JudgeModelOptions(judge_model="gemini-2.5-flash", num_samples=1)
    if kind == "final_response_match":
        return FinalResponseMatchV2Evaluator(EvalMetric(
            metric_name="final_response_match_v2",
            criterion=LlmAsAJudgeCriterion(threshold=0.5, judge_model_options=opts)))
    if kind == "hallucinations":
        return HallucinationsV1Evaluator(EvalMetric(
            metric_name="hallucinations_v1",
            criterion=HallucinationsCriterion(threshold=0.5, judge_model_options=opts)))
    rubrics = [Rubric(rubric_id="1", rubric_content=RubricContent(text_property=rubric))]
    criterion = RubricsBasedCriterion(threshold=0.5, judge_model_options=opts, rubrics=rubrics)
    if kind == "rubric_final_response":
        return RubricBasedFinalResponseQualityV1Evaluator(EvalMetric(
            metric_name="rubric_based_final_response_quality_v1", criterion=criterion))
    return RubricBasedToolUseV1Evaluator(EvalMetric(
        metric_name="rubric_based_tool_use_quality_v1", criterion=criterion))


def _prompt(kind: str, case: dict[str, Any]) -> str:
    ev = _evaluator(kind, case.get("rubric"))
    if kind == "final_response_match":
        return str(ev.format_auto_rater_prompt(_adk_invocation(case["user_prompt"], case["response"], None),
                                               _adk_invocation(case["user_prompt"], case["reference"], None)))
    if kind == "rubric_final_response":
        return str(ev.format_auto_rater_prompt(
            _adk_invocation(case["user_prompt"], case["response"], case.get("tool_calls")), None))
    if kind == "rubric_tool_use":
        return str(ev.format_auto_rater_prompt(
            _adk_invocation(case["user_prompt"], case.get("response", ""), case.get("tool_calls"),
                            declarations=case.get("tool_declarations") or []), None))
    ctx = case["context"]
    actual = _adk_invocation(ctx["user_prompt"], case["sentence"], ctx.get("tool_calls"),
                             instructions=ctx.get("instructions", ""), declarations=[])
    (step,) = ev._get_steps_to_evaluate(actual)
    return str(ev.sentence_validator_prompt.format(context=step.context,
                                                   sentences=f"<sentence>{case['sentence']}</sentence>"))


def _score(kind: str, case: dict[str, Any], reply: str) -> float | None:
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    if kind == "hallucinations":
        from google.adk.evaluation.hallucinations_v1 import (
            _NEGATIVE_LABELS,
            _POSITIVE_LABELS,
            _parse_validation_results,
        )
        scores = []
        for result in _parse_validation_results(reply):
            label = (result.get("label") or "").strip().lower()
            if label in _POSITIVE_LABELS:
                scores.append(1.0)
            elif label in _NEGATIVE_LABELS:
                scores.append(0.0)
        return sum(scores) / len(scores) if scores else None
    ev = _evaluator(kind, case.get("rubric"))
    if kind != "final_response_match":
        ev.create_effective_rubrics_list(None)
    response = LlmResponse(content=types.Content(role="model", parts=[types.Part(text=reply)]))
    score = ev.convert_auto_rater_response_to_score(response).score
    return None if score is None else float(score)


def adk_phase(phase: str, path_in: str, path_out: str) -> None:
    rows = [json.loads(line) for line in Path(path_in).read_text().splitlines() if line.strip()]
    with open(path_out, "w") as f:
        for row in rows:
            if phase == "prompts":
                row["prompt"] = _prompt(row["criterion"], row["case"])
            else:
                row["adk_score"] = _score(row["criterion"], row["case"], row["reply"])
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------------
# Phase 2 and the report: system Python


def run(args: argparse.Namespace) -> None:
    import asyncio

    from bench_judge import POSITIVE, load_cases

    from agenteval.models import LocalModel, Message, ModelRequest, resolve_model

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = out.with_suffix(".work")
    work.mkdir(exist_ok=True)
    cases = [(k, inj, c) for k, inj, c in load_cases(args.only, args.limit,
                                                      set(args.ids.split(",")) if args.ids else None)
             if k in ADK_KINDS]
    (work / "cases.jsonl").write_text("".join(json.dumps(
        {"criterion": k, "injection": inj, "case": c}, ensure_ascii=False) + "\n" for k, inj, c in cases))
    subprocess.run([ADK_PY, __file__, "--phase", "prompts", "--in", str(work / "cases.jsonl"),
                    "--phase-out", str(work / "prompts.jsonl")], check=True)
    rows = [json.loads(line) for line in (work / "prompts.jsonl").read_text().splitlines()]

    async def ask() -> None:
        model = LocalModel(threads=args.threads) if args.threads else resolve_model("local", {})
        for i, row in enumerate(rows, 1):
            request = ModelRequest(messages=(Message("user", row["prompt"]),), temperature=0.0,
                                   max_tokens=args.max_tokens)
            start = time.perf_counter()
            response = await model.generate(request)
            row["seconds"] = time.perf_counter() - start
            row["reply"] = response.text
            row["finish_reason"] = response.generations[0].finish_reason
            row["prompt_tokens"] = response.usage.prompt_tokens
            row["cached_tokens"] = response.usage.cached_tokens
            row["completion_tokens"] = response.usage.completion_tokens
            print(f"[{i}/{len(rows)}] {row['case']['id']} {row['seconds']:.1f}s "
                  f"{row['prompt_tokens']} prompt tok ({row['cached_tokens']} cached), "
                  f"{row['completion_tokens']} out", file=sys.stderr, flush=True)
            with open(work / "replies.jsonl", "a") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")

    (work / "replies.jsonl").write_text("")
    asyncio.run(ask())
    subprocess.run([ADK_PY, __file__, "--phase", "parse", "--in", str(work / "replies.jsonl"),
                    "--phase-out", str(work / "parsed.jsonl")], check=True)
    results = []
    for line in (work / "parsed.jsonl").read_text().splitlines():
        row = json.loads(line)
        case = row["case"]
        score = row["adk_score"]
        pred = None if score is None else score >= 1.0
        gold = case["label"] in POSITIVE
        results.append({
            "id": case["id"], "criterion": row["criterion"], "injection": row["injection"],
            "label": case["label"], "gold_positive": gold, "pred_positive": pred, "correct": pred == gold,
            "adk_score": score, "seconds": row["seconds"], "seconds_per_verdict": row["seconds"],
            "prompt_tokens": row["prompt_tokens"], "prompt_tokens_per_verdict": row["prompt_tokens"],
            "cached_tokens": row["cached_tokens"], "completion_tokens": row["completion_tokens"],
            "finish_reason": row["finish_reason"], "reply": row["reply"],
        })
    with out.open("w") as f:
        for r in results:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    report(results, Path(args.ours))


def report(results: list[dict[str, Any]], ours_path: Path) -> None:
    """ADK's accuracy table, and agenteval's on the same case ids beside it."""
    from bench_judge import print_table, summarise

    adk = summarise(results)
    print("ADK 2.13.0 prompts + ADK parsers, same local model:")
    print_table(adk)
    unparsed = sum(1 for r in results if r["pred_positive"] is None)
    truncated = sum(1 for r in results if r["finish_reason"] == "length")
    print(f"\nunparsable replies (counted wrong): {unparsed}; replies cut at --max-tokens: {truncated}")
    if ours_path.exists():
        ours_rows = [json.loads(line) for line in ours_path.read_text().splitlines() if line.strip()]
        ids = {r["id"] for r in results}
        ours = summarise([r for r in ours_rows if r["id"] in ids])
        print("\n| criterion | agenteval | ADK 2.13.0 prompts | agenteval median prompt tok | "
              "ADK median prompt tok | agenteval median s | ADK median s |")
        print("|---|---|---|---|---|---|---|")
        for name, a in adk.items():
            o = ours.get(name)
            if o is None:
                continue
            print(f"| {name} | {o['correct']}/{o['n']} = {100 * o['accuracy']:.0f}% | "
                  f"{a['correct']}/{a['n']} = {100 * a['accuracy']:.0f}% | {o['median_prompt_tokens']:.0f} | "
                  f"{a['median_prompt_tokens']:.0f} | {o['median_s']:.1f} | {a['median_s']:.1f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--phase", choices=["prompts", "parse"], help=argparse.SUPPRESS)
    p.add_argument("--in", dest="path_in", help=argparse.SUPPRESS)
    p.add_argument("--phase-out", help=argparse.SUPPRESS)
    p.add_argument("--only", choices=[*ADK_KINDS, "injection"])
    p.add_argument("--limit", type=int)
    p.add_argument("--ids")
    p.add_argument("--max-tokens", type=int, default=640)
    p.add_argument("--threads", type=int, help="llama.cpp threads (default: the CPUs this process may use)")
    p.add_argument("--out", default=str(HERE / "out" / "judge_results_adk.jsonl"))
    p.add_argument("--ours", default=str(HERE / "out" / "judge_results.jsonl"),
                   help="agenteval results to compare with (from bench_judge.py)")
    p.add_argument("--table-only", action="store_true",
                   help="no model calls: print the tables from --out and --ours as they are")
    args = p.parse_args()
    if args.table_only:
        sys.path.insert(0, str(HERE))
        rows = [json.loads(line) for line in Path(args.out).read_text().splitlines() if line.strip()]
        report(rows, Path(args.ours))
    elif args.phase:
        adk_phase(args.phase, args.path_in, args.phase_out)
    else:
        sys.path.insert(0, str(HERE))
        run(args)


if __name__ == "__main__":
    main()
