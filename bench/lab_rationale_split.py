"""Lab: a failing verdict's rationale written by a second call begun after the label, on the
embedded judge, against the one reply the judge writes now.

A failing `final_response_match_v2` verdict generates 19 tokens on the embedded engine (its
`{"verdict": "` head is in the prompt): the label, then `", "rationale": "` (6 tokens the grammar
forces, each still one decode step), ~10 rationale tokens, `"}` and the end. Asked in two calls
instead (`B`): the first under a grammar that ends the object after the label (the label's
probabilities are those of the same tokens), the second begun in the prompt with
`{"verdict": "<label>", "rationale": "` (the forced tokens then evaluated with the prompt, in the
slot that holds everything before them) under a grammar for the rationale alone. This reports,
per question with a rationale: generated and prompt tokens, llama.cpp's compute milliseconds and
the wall time of each way, whether the label probabilities and the rationale text are the same.
Also, for a tighter cap, what each rationale would read cut at 4 and 6 tokens (greedy decoding
under the same grammar makes a smaller cap's rationale exactly that prefix).

The judge is left as it is. Since 304da87 the judge itself asks `B` (`engine.prefill.label_first`,
`rationale_after`; `bench_judge_speed.py` measures it), so its questions no longer come to this
probe as one reply: run the lab against a source before it (a worktree of 125152f on PYTHONPATH).

    python bench/lab_rationale_split.py --ids frm-002,frm-004 --out bench/out/s13_rationale_split.jsonl
"""

from __future__ import annotations

import json
import os
import re
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

HEAD = '{"verdict": "'
CHAR = r'([^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}))'


def _labels(grammar: str) -> tuple[str, ...]:
    """The labels of a prefilled verdict grammar (`engine.prefill`): its groups of literals."""
    out: list[str] = []
    for group in re.findall(r'\(("[^"]+"(?: \| "[^"]+")*)\)', grammar):
        out += [json.loads(x) for x in group.split(" | ")]
    return tuple(dict.fromkeys(out))


class Probe(LabProbe):
    """The embedded model; each prefilled verdict question whose reply has a rationale is also
    asked in two calls (logged, not returned)."""

    async def generate(self, request: ModelRequest) -> ModelResponse:
        response = await self.llm.generate(request)
        last = request.messages[-1]
        if request.grammar and last.role == "assistant" and last.content == HEAD \
                and request.logprobs and "rationale" in request.grammar:
            await self.compare(request)
        return response

    async def compare(self, request: ModelRequest) -> None:
        labels = _labels(request.grammar or "")
        a = await raw_reply(self.llm, request)
        a_text = HEAD + parse_choice(a["choices"][0], request).text.removeprefix(HEAD)
        if '", "rationale": "' not in a_text:  # (a rationale cut by the token cap is not JSON)
            return  # a passing verdict: nothing to split
        only = "root ::= (" + " | ".join(json.dumps(x) for x in labels) + ') "\\"}"\n'
        b1 = await raw_reply(self.llm, replace(request, grammar=only))
        b1_text = HEAD + parse_choice(b1["choices"][0], request).text.removeprefix(HEAD)
        label = b1_text[len(HEAD):].split('"', 1)[0]
        begun = f'{HEAD}{label}", "rationale": "'
        used = int((b1.get("timings") or {}).get("predicted_n") or 0)
        b2_request = replace(request, messages=(*request.messages[:-1], Message("assistant", begun)),
                             grammar=f'root ::= {CHAR}{{0,120}} "\\"}}"\n', logprobs=False,
                             max_tokens=max(1, request.max_tokens - max(1, used - 2) - 6))
        b2 = await raw_reply(self.llm, b2_request)
        b2_text = parse_choice(b2["choices"][0], b2_request).text
        b2_text = b2_text if b2_text.startswith(begun) else begun + b2_text
        row: dict[str, Any] = {"id": self.case_id, "load": os.getloadavg()[0], "labels_a": None}
        for name, reply in (("A", a), ("B1", b1), ("B2", b2)):
            t = reply.get("timings") or {}
            row[name] = {"generated": t.get("predicted_n"), "prompt_n": t.get("prompt_n"),
                         "prompt_ms": t.get("prompt_ms"), "gen_ms": t.get("predicted_ms"),
                         "wall": reply["_wall"]}
        for name, reply in (("labels_a", a), ("labels_b", b1)):
            tokens = parse_choice(reply["choices"][0], request).logprobs
            dist = label_distribution([TokenLogprob(HEAD, 0.0), *tokens], labels) if tokens else None
            row[name] = None if dist is None else {k: round(v, 4) for k, v in dist.items()}
        row["text_a"], row["text_b"] = a_text, b2_text
        row["same_text"] = a_text == b2_text
        self.sink.write(json.dumps(row) + "\n")
        self.sink.flush()
        def ms(reply: dict[str, Any]) -> float:
            t = reply.get("timings") or {}
            return float(t.get("prompt_ms", 0)) + float(t.get("predicted_ms", 0))
        print(f"{self.case_id:8} A {row['A']['generated']} gen {ms(a):7.0f} ms {a['_wall']:.2f} s | "
              f"B {row['B1']['generated']}+{row['B2']['generated']} gen (+{row['B2']['prompt_n']} prompt) "
              f"{ms(b1) + ms(b2):7.0f} ms {b1['_wall'] + b2['_wall']:.2f} s | same text {row['same_text']}\n"
              f"   A {a_text}\n   B {b2_text}\n   {row['labels_a']} / {row['labels_b']}",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    run_probe_lab(Probe, OUT_DIR / "lab_rationale_split.jsonl", __doc__)
