"""Where a hallucination sentence's prompt tokens go: the tokens each question and cross-check
shares with the same kind of request before it (what a slot that held the earlier one reuses)
and the tokens that are new, counted with the embedded model's own chat template and tokenizer.

No verdict is generated: the criterion is driven by a scripted judge that calls every sentence
supported (so every sentence is cross-checked), its requests are rendered by llama.cpp's
`/apply-template` and counted by `/tokenize`. The prompts are the source's, so run it from two
trees (`PYTHONPATH=<before>/src` and `PYTHONPATH=src`) to compare prompt versions:

    PYTHONPATH=/tmp/before/src python bench/lab_check_prefix.py
    PYTHONPATH=src python bench/lab_check_prefix.py

Groups are `bench_judge_speed.response_groups` (labelled sentences sharing a context, as the
lines of one response). Printed per kind (question, cross-check): the mean tokens of a request,
of its common prefix with the previous request of its kind in the same response, and of its
new tail; and for a response's first cross-check, the tokens it shares with its own question.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judge import build
from bench_judge_speed import response_groups

from agenteval.criteria import default_registry
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.models.base import ModelRequest
from agenteval.models.local import LocalModel
from agenteval.models.scripted import ScriptedModel
from agenteval.runner.scoring import score_case


def _reply(request: ModelRequest) -> str:
    props = (request.json_schema or {}).get("properties", {})
    if "sentence_says" in props:
        return json.dumps({"sentence_says": "x", "context_says": "x", "verdict": "same"})
    return json.dumps({"verdict": "supported", "rationale": "x"})


async def _requests(group: list[dict[str, Any]]) -> list[ModelRequest]:
    merged = {**group[0], "id": "+".join(c["id"] for c in group),
              "sentence": "\n".join(c["sentence"] for c in group)}
    run, metric_name, options = build("hallucinations", merged, 1)
    model = ScriptedModel(_reply, name="probe")
    metric = default_registry().configure(metric_name, {**options, "judge_model_options": {
        **options.get("judge_model_options", {}), "judge_model": "probe"}})
    await score_case(run, [metric], judge=JudgeService(lambda _: model))
    return list(model.requests)


def post(base: str, key: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(base + path, json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        out: dict[str, Any] = json.loads(r.read())
        return out


def common(a: list[int], b: list[int]) -> int:
    """How many leading tokens `a` and `b` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


async def main_async(args: argparse.Namespace) -> None:
    url, key = await LocalModel().http_endpoint()
    base = url.removesuffix("/v1")

    def tokens(request: ModelRequest) -> list[int]:
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        prompt = post(base, key, "/apply-template", {"messages": messages})["prompt"]
        return list(post(base, key, "/tokenize", {"content": prompt})["tokens"])

    stats: dict[str, list[tuple[int, int]]] = {"question": [], "check": []}
    first_check_vs_question: list[int] = []
    for group in response_groups(args.groups):
        last: dict[str, list[int]] = {}
        first = True
        question: list[int] = []
        for request in await _requests(group):
            kind = "check" if "sentence_says" in json.dumps(request.json_schema) else "question"
            toks = tokens(request)
            if kind == "question":
                question = toks
            elif first:
                first_check_vs_question.append(common(toks, question))
                first = False
            if kind in last:
                stats[kind].append((len(toks), len(toks) - common(toks, last[kind])))
            last[kind] = toks
    out: dict[str, Any] = {k: {"requests": len(v), "tokens_mean": statistics.mean(t for t, _ in v),
               "new_tokens_mean": statistics.mean(n for _, n in v),
               "new_tokens_max": max(n for _, n in v)} for k, v in stats.items() if v}
    out["first_check_shares_with_its_question"] = statistics.mean(first_check_vs_question)
    print(json.dumps(out, indent=1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--groups", type=int, default=None, help="first N response groups")
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
