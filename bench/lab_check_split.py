"""Lab: the hallucination cross-check's reply written in three calls (one per field, each begun
where the last stopped) against the one reply the judge writes now, on the embedded judge.

The cross-check (`prompts.hallucination_check`) writes notes before its label:
`{"sentence_says": "...", "context_says": "...", "verdict": "same"}`. Its head `{"sentence_says": "`
is in the prompt (`engine.prefill`); every other fixed piece, `", "context_says": "` and
`", "verdict": "`, is forced by the grammar and still decoded one step each. Asked in three calls
instead (`B`): the first note, generated under the same grammar and stopped at its closing quote
(a stop string: the tokens up to it are the ones reply's); then the reply begun up to the second
note's text, stopped the same way; then the reply begun up to the label, under a grammar for
the label and the closing `"}`, with log-probabilities. The forced pieces are then evaluated with
the prompt, in the slot that already holds everything before them. Per cross-check this reports
generated and prompt tokens, llama.cpp's compute milliseconds and the wall time of each way, and
whether the reply text and the label probabilities are the same.

The judge is left as it is (what the criteria score with is always `A`).

    python bench/lab_check_split.py --ids hal-002,hal-004 --out bench/out/s14_check_split.jsonl
    python bench/lab_check_split.py --all --out bench/out/s14_check_split_all.jsonl
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judge import OUT_DIR, SET_DIR, LabProbe, build, raw_reply, run_probe_lab

from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.logprobs import label_distribution
from agenteval.criteria.judge.prompting.prompts import CHECK_LABELS
from agenteval.models import LocalModel, Message, ModelRequest, ModelResponse
from agenteval.models.base import TokenLogprob
from agenteval.models.openai_wire import parse_choice, parse_usage
from agenteval.runner import score_case

HEAD = '{"sentence_says": "'
SECOND = '", "context_says": "'
THIRD = '", "verdict": "'
CHAR = r'([^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}))'
LABELS = " | ".join(json.dumps(x) for x in CHECK_LABELS)


def _ms(reply: dict[str, Any]) -> float:
    t = reply.get("timings") or {}
    return float(t.get("prompt_ms", 0)) + float(t.get("predicted_ms", 0))


def _text(reply: dict[str, Any], request: ModelRequest, head: str) -> str:
    text = parse_choice(reply["choices"][0], request).text
    return text if text.startswith(head) else head + text


def _decision(p: dict[str, float] | None) -> tuple[str, bool] | None:
    """The label read and whether its side (same: pass; the others: fail) has p >= 0.5, the
    shipped min_confidence of `hallucinations_v1`."""
    if not p:
        return None
    label = max(p, key=lambda k: p[k])
    return label, sum(v for k, v in p.items() if (k == "same") == (label == "same")) >= 0.5


def _diff(a: dict[str, float] | None, b: dict[str, float] | None) -> float | None:
    return None if not a or not b else max(abs(a[k] - b.get(k, 0.0)) for k in a)


class Probe(LabProbe):
    """The embedded model; each prefilled cross-check is also asked in three calls (logged, not
    returned)."""

    async def generate(self, request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        if request.grammar and last.role == "assistant" and last.content == HEAD:
            a = await self.compare(request)  # the judge goes on with `A`, the reply written whole
            return ModelResponse((parse_choice(a["choices"][0], request),), parse_usage(a), self.name)
        return await self.llm.generate(request)

    def _begun(self, request: ModelRequest, head: str, **changes: Any) -> ModelRequest:
        return replace(request, messages=(*request.messages[:-1], Message("assistant", head)), **changes)

    async def compare(self, request: ModelRequest) -> dict[str, Any]:
        a = await raw_reply(self.llm, request)
        a_text = _text(a, request, HEAD)
        b1_req = replace(request, stop=('"',), logprobs=0)
        b1 = await raw_reply(self.llm, b1_req)
        note1 = _text(b1, b1_req, HEAD)[len(HEAD):].split('"', 1)[0]
        head2 = HEAD + note1 + SECOND
        b2_req = self._begun(request, head2, stop=('"',), logprobs=0,
                             grammar=f'root ::= {CHAR}{{0,200}} {json.dumps(THIRD)} ({LABELS}) "\\"}}"\n')
        b2 = await raw_reply(self.llm, b2_req)
        note2 = _text(b2, b2_req, head2)[len(head2):].split('"', 1)[0]
        head3 = head2 + note2 + THIRD
        b3_req = self._begun(request, head3, grammar=f'root ::= ({LABELS}) "\\"}}"\n')
        b3 = await raw_reply(self.llm, b3_req)
        b_text = _text(b3, b3_req, head3)
        row: dict[str, Any] = {"id": self.case_id, "load": os.getloadavg()[0]}
        for name, reply in (("A", a), ("B1", b1), ("B2", b2), ("B3", b3)):
            t = reply.get("timings") or {}
            row[name] = {"generated": t.get("predicted_n"), "prompt_n": t.get("prompt_n"),
                         "prompt_ms": t.get("prompt_ms"), "gen_ms": t.get("predicted_ms"),
                         "wall": reply["_wall"]}
        for name, reply, req, head in (("labels_a", a, request, HEAD), ("labels_b", b3, b3_req, head3)):
            tokens = parse_choice(reply["choices"][0], req).logprobs
            dist = label_distribution([TokenLogprob(head, 0.0), *tokens], CHECK_LABELS) if tokens else None
            row[name] = None if dist is None else {k: round(v, 4) for k, v in dist.items()}
        row["text_a"], row["text_b"] = a_text, b_text
        row["same_text"] = a_text == b_text
        row["max_diff"] = _diff(row["labels_a"], row["labels_b"])
        row["same_decision"] = _decision(row["labels_a"]) == _decision(row["labels_b"])
        row["ms_a"], row["ms_b"] = _ms(a), _ms(b1) + _ms(b2) + _ms(b3)
        row["wall_a"], row["wall_b"] = a["_wall"], b1["_wall"] + b2["_wall"] + b3["_wall"]
        self.sink.write(json.dumps(row) + "\n")
        self.sink.flush()
        print(f"{self.case_id:8} A {row['A']['generated']} gen {row['ms_a']:7.0f} ms {row['wall_a']:.2f} s | "
              f"B {row['B1']['generated']}+{row['B2']['generated']}+{row['B3']['generated']} gen "
              f"(+{row['B2']['prompt_n']}+{row['B3']['prompt_n']} prompt) {row['ms_b']:7.0f} ms "
              f"{row['wall_b']:.2f} s | same text {row['same_text']} load {row['load']:.1f}\n"
              f"   A {a_text}\n   B {b_text}\n   {row['labels_a']} / {row['labels_b']}",
              file=sys.stderr, flush=True)
        return a


def main() -> None:
    """`--ids` as in the other labs, or `--all`: every hallucination case of the tuning and
    held-out sets."""
    if "--all" not in sys.argv:
        run_probe_lab(Probe, OUT_DIR / "lab_check_split.jsonl", __doc__)
        return
    out = OUT_DIR / "lab_check_split.jsonl"
    if "--out" in sys.argv:
        out = Path(sys.argv[sys.argv.index("--out") + 1])

    async def run() -> None:
        llm = LocalModel()
        with out.open("w") as sink:
            probe = Probe(llm, sink)
            judge = JudgeService(lambda name: probe, None)
            for name in ("hallucinations.json", "hallucinations_heldout.json"):
                for case in json.loads((SET_DIR / name).read_text()):
                    probe.case_id = case["id"]
                    run, metric_name, options = build("hallucinations", case, 5)
                    await score_case(run, [default_registry().configure(metric_name, options)], judge=judge)

    asyncio.run(run())


if __name__ == "__main__":
    main()
