"""Lab: the verdict's fixed JSON head written into the prompt (an assistant prefill) instead of
generated, on the embedded judge.

Where a verdict's generated tokens go (the embedded model's tokenizer): `{"verdict": "supported"}`
is 7 tokens and the end of turn 1, of which only the label is chosen: `{"`, `ver`, `dict`, `":`,
` "` are forced by the JSON schema's grammar, as are `"}` and the end. llama.cpp decodes forced
tokens one by one like any other (one decode step each, ~0.1 s on the quiet 2-core machine). A
failing verdict adds `", "rationale": "` (6 forced tokens) before its rationale; the
hallucination cross-check's notes `{"sentence_says": "`, `", "context_says": "` and
`", "verdict": "` are 6 + 7 + 6 forced tokens around ~14 chosen ones.

This probe asks each one-pass question of the labelled cases twice on the same engine, one
after the other: as the judge does now (`A`: the JSON schema, nothing prefilled), and with the
reply's fixed head as the last (assistant) message and a GBNF grammar for the rest (`B`;
llama.cpp continues an assistant message that ends the conversation). It reports generated
tokens, the label, the label probabilities and llama.cpp's compute milliseconds of each. The
judge is left as it is: what the criteria score with is always `A`.

    python bench/lab_prefill.py --ids hal-001,hal-002,frm-001,frm-002 --out bench/out/s12_prefill.jsonl
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judge import OUT_DIR, LabProbe, raw_reply, run_probe_lab

from agenteval.criteria.judge.engine.logprobs import label_distribution
from agenteval.models import Message, ModelRequest, ModelResponse
from agenteval.models.base import TokenLogprob
from agenteval.models.openai_wire import parse_choice

STRING = r'[^"\\\x7F\x00-\x1F]'  # a JSON string's plain characters (no escapes: enough here)


def _lit(text: str) -> str:
    return json.dumps(text)  # a GBNF literal escapes as a JSON string does


def prefilled(request: ModelRequest) -> tuple[ModelRequest, str] | None:
    """`request` with its reply's fixed head prefilled (an assistant message) and a GBNF grammar
    for the rest, or None for a schema that has no verdict."""
    schema = request.json_schema or {}
    branches = schema.get("anyOf") or [schema]
    alternatives, heads = [], set()
    for branch in branches:
        names = list(branch.get("properties", {}))
        if "verdict" not in names:
            return None
        labels = "(" + " | ".join(_lit(x) for x in branch["properties"]["verdict"]["enum"]) + ")"
        heads.add(names[0])
        end, explain = _lit('"}'), _lit('", "rationale": "')
        if names[0] == "verdict":  # the label first, then maybe the rationale
            alternatives.append(f"{labels} {end}" if len(names) == 1 else
                                f"{labels} {explain} str {end}")
        else:  # notes first, then the verdict
            parts = ["str"]
            for name in names[1:-1]:
                parts += [_lit(f'", "{name}": "'), "str"]
            parts += [_lit('", "verdict": "'), labels, _lit('"}')]
            alternatives.append(" ".join(parts))
    if len(heads) != 1:
        return None
    head = '{"' + heads.pop() + '": "'
    grammar = ("root ::= " + " | ".join(f"({a})" for a in alternatives)
               + f"\nstr ::= {STRING}{{0,200}}\n")
    return replace(request, messages=(*request.messages, Message("assistant", head)),
                   json_schema=None, grammar=grammar), head


class Probe(LabProbe):
    """The embedded model, each one-pass question also asked prefilled (logged, not returned)."""

    @property
    def prefills_replies(self) -> bool:
        return False  # the judge asks whole; the probe asks each question prefilled beside it

    async def generate(self, request: ModelRequest) -> ModelResponse:
        response = await self.llm.generate(request)
        if request.logprobs and request.temperature <= 0:
            alt = prefilled(request)
            if alt is not None:
                b_request, head = alt
                a = await raw_reply(self.llm, request)
                b = await raw_reply(self.llm, replace(b_request, max_tokens=max(1, request.max_tokens - 5)))
                self.log(request, a, b, head)
        return response

    def log(self, request: ModelRequest, a: dict[str, Any], b: dict[str, Any], head: str) -> None:
        labels = tuple(request.json_schema["properties"]["verdict"]["enum"])  # type: ignore[index]
        row: dict[str, Any] = {"id": self.case_id, "load": os.getloadavg()[0]}
        for name, reply, pre in (("A", a, ""), ("B", b, head)):
            gen = parse_choice(reply["choices"][0], request)
            tokens = list(gen.logprobs or [])
            if pre:
                tokens = [TokenLogprob(pre, 0.0), *tokens]
            dist = label_distribution(tokens, labels) if tokens else None
            t = reply.get("timings") or {}
            # llama.cpp returns a continued assistant message whole (the prefill included)
            row[name] = {"text": gen.text, "generated": t.get("predicted_n"),
                         "prompt_n": t.get("prompt_n"), "gen_ms": t.get("predicted_ms"),
                         "prompt_ms": t.get("prompt_ms"), "wall": reply["_wall"],
                         "labels": None if dist is None else {k: round(v, 4) for k, v in dist.items()}}
        self.sink.write(json.dumps(row) + "\n")
        self.sink.flush()
        print(f"{self.case_id:8} A {row['A']['generated']:>3} tok {row['A']['text'][:60]!r} "
              f"B {row['B']['generated']:>3} tok {row['B']['text'][:60]!r}\n"
              f"         A {row['A']['labels']}\n         B {row['B']['labels']}",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    run_probe_lab(Probe, OUT_DIR / "lab_prefill.jsonl", __doc__)
