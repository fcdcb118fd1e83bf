"""What a shorter rationale cap leaves of a failing verdict's rationale, on the embedded judge.

A failing one-pass verdict writes its rationale after the label in the same greedy reply,
capped at `reply_tokens(RATIONALE_TOKENS)` (8 rationale tokens). Greedy decoding under the same
grammar makes the reply under a smaller cap a prefix of this one, token for token, so one reply
per case shows every shorter cap: its rationale's first k tokens. Cases are the failing ones
of a labelled set (`final_response_match` by default: the `invalid` labels), scored through the
criterion as `agenteval score` scores them; each reply's tokens come from its log-probabilities.

    python bench/lab_rationale_cap.py [--set final_response_match] [--caps 8,6,4] [--limit N]
    python bench/lab_rationale_cap.py --texts RATIONALES.json   # written rationales, no judging

`--texts` takes rationales already written at the shipped cap (a JSON list of strings, e.g. from
bench outputs) and cuts each with the embedded model's own tokenizer (llama.cpp's `/tokenize`):
the same prefixes, without a judge call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judge import OUT_DIR, SET_DIR, build

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.labelled import POSITIVE
from agenteval.models import LocalModel, ModelRequest, ModelResponse
from agenteval.runner import score_case

KEY = '"rationale": "'


class Keeping:
    """The embedded model, keeping each reply's tokens."""

    def __init__(self, llm: LocalModel) -> None:
        self.llm, self.replies = llm, []  # type: list[tuple[str, ...]]
        self.slots = llm.slots

    @property
    def name(self) -> str:
        return self.llm.name

    async def generate(self, request: ModelRequest) -> ModelResponse:
        response = await self.llm.generate(request)
        gen = response.generations[0]
        self.replies.append(tuple(t.token for t in gen.logprobs or ()))
        return response


def rationale_tokens(tokens: tuple[str, ...]) -> list[str]:
    """The tokens of the rationale's value (after `"rationale": "`), closing quote excluded."""
    text, out, at = "", [], None
    for t in tokens:
        text += t
        if at is None and KEY in text:
            at = len(text)
            rest = text[text.index(KEY) + len(KEY):]
            if rest:
                out.append(rest)
            continue
        if at is not None:
            out.append(t)
    return out


def cut(tokens: list[str], k: int) -> str:
    return "".join(tokens[:k]).split('"')[0]


async def cut_texts(args: argparse.Namespace) -> None:
    """`--texts`: each rationale's first k tokens, tokenized by the embedded model."""
    import urllib.request

    llm = LocalModel()
    base, key = await llm.http_endpoint()
    caps = [int(k) for k in args.caps.split(",")]
    for text in json.loads(Path(args.texts).read_text()):
        body = json.dumps({"content": text, "with_pieces": True}).encode()
        request = urllib.request.Request(base.removesuffix("/v1") + "/tokenize", body, {
            "Content-Type": "application/json", "Authorization": f"Bearer {key}"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            pieces = [t["piece"] for t in json.load(reply)["tokens"]]
        print(json.dumps({"tokens": len(pieces), **{f"cap{k}": "".join(pieces[:k]) for k in caps}},
                         ensure_ascii=False), flush=True)


async def main_async(args: argparse.Namespace) -> None:
    if args.texts:
        await cut_texts(args)
        return
    model = Keeping(LocalModel())
    await model.llm.load()
    judge = JudgeService(lambda name: model)  # type: ignore[arg-type,return-value]
    cases = [c for c in json.loads((SET_DIR / f"{args.set}.json").read_text()) if c["label"] not in POSITIVE]
    caps = [int(k) for k in args.caps.split(",")]
    out = Path(args.out)
    with out.open("w") as sink:
        for case in cases[:args.limit]:
            run, metric_name, options = build(args.set, case, 5)
            metric = default_registry().configure(metric_name, options)
            model.replies.clear()
            t0 = time.perf_counter()
            result = await score_case(run, [metric], judge=judge)
            wall = time.perf_counter() - t0
            tokens = rationale_tokens(model.replies[-1]) if model.replies else []
            row: dict[str, Any] = {"id": case["id"], "verdicts": [r.verdict for r in result.judge_records],
                                   "wall": round(wall, 2), "reply_tokens": len(model.replies[-1]) if
                                   model.replies else 0, "rationale_tokens": len(tokens),
                                   **{f"cap{k}": cut(tokens, k) for k in caps}}
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            sink.flush()
            print(json.dumps(row, ensure_ascii=False), flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", default="final_response_match")
    p.add_argument("--caps", default="8,6,4,2")
    p.add_argument("--limit", type=int, default=12)
    p.add_argument("--texts", help="a JSON list of written rationales: cut them, judge nothing")
    p.add_argument("--out", default=str(OUT_DIR / "lab_rationale_cap.jsonl"))
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
