"""Certificates for the built-in criteria on the embedded judge, measured on held-out labels.

Runs `agenteval.calibration.calibrate` (what `agenteval judge calibrate` runs) over labelled
files, one case at a time, appending each case's outcome to a JSON-lines file as it is judged,
so a run stopped early (the embedded judge takes 20 s and more per verdict on a loaded 2-core
machine) still leaves every judged case; `--from-outcomes` then writes the certificates from
whatever was judged (and `--resume` judges only the cases not in it yet). Cases are taken in a
seeded order that alternates positive and negative labels, so a prefix of a file stays balanced.

    python bench/bench_certify.py bench/judge_set/rubric_tool_use_blind.json \\
        bench/judge_set/rubric_final_response_blind.json --per-file 16 \\
        --outcomes bench/out/certify_outcomes.jsonl
    python bench/bench_certify.py ... --from-outcomes bench/out/certify_outcomes.jsonl \\
        --certify src/agenteval/criteria/judge/shipped_certificates

`--judge-model` certifies another judge (an escalation model: one certificate per judge model,
written as `<metric>@<model>.json`). A rubric criterion's certificate lists its agreement per
rubric family (`rubric_checks.family_of`), printed below it.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import hashlib
import json
import os
import random
import time
from pathlib import Path

from agenteval.calibration import Calibration, Outcome, calibrate, certificate
from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.certificates import prompt_fingerprint
from agenteval.criteria.judge.labelled import LabelledCase, criterion_config, load_labelled
from agenteval.models import resolve_model


def balanced(cases: list[LabelledCase], seed: int = 28) -> list[LabelledCase]:
    """Positive and negative cases alternating, each side in a seeded random order."""
    rng = random.Random(seed)
    pos = [c for c in cases if c.positive]
    neg = [c for c in cases if not c.positive]
    rng.shuffle(pos)
    rng.shuffle(neg)
    out: list[LabelledCase] = []
    for i in range(max(len(pos), len(neg))):
        out += [side[i] for side in (pos, neg) if i < len(side)]
    return out


def conversation_blocks(cases: list[LabelledCase], slots: int = 4) -> list[list[LabelledCase]]:
    """The cases as units to judge in a row: a case alone, except the questions asked of one
    labelled conversation (a `multi_turn` case's, ids `<id>/<question>`), which go in blocks of
    `slots` conversations, question by question. Judged one at a time, the embedded engine gives
    each call the least recently used of its `slots` slots, so a conversation's next question
    lands in the slot that still holds its conversation and reuses it (only the question is
    evaluated again); the order changes no verdict."""
    by_conversation: dict[str, list[LabelledCase]] = {}
    units: list[list[LabelledCase]] = []
    for c in cases:
        if "/" in c.id and c.kind.startswith("multi_turn_"):
            by_conversation.setdefault(c.id.split("/")[0], []).append(c)
        else:
            units.append([c])
    groups = list(by_conversation.values())
    if all(len(g) == 1 for g in groups):  # one question per conversation: nothing to reuse
        return units + groups
    for i in range(0, len(groups), slots):
        block = groups[i:i + slots]
        units.append([g[q] for q in range(max(map(len, block))) for g in block if q < len(g)])
    return units


def prompt_sha256(case: LabelledCase) -> str:
    """The hash of the prompt `case` is judged with now (`certificates.prompt_fingerprint`)."""
    config = criterion_config(case, 1)
    built = default_registry().configure(case.metric, config)
    return prompt_fingerprint(case.metric, built.criterion.model_dump(mode="json"))


def digest(files: list[str]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(Path(f).name.encode() + b"\0" + Path(f).read_bytes())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--per-file", type=int, default=0, help="cases per file (0: all)")
    ap.add_argument("--num-samples", type=int, default=5)
    ap.add_argument("--outcomes", default="bench/out/certify_outcomes.jsonl")
    ap.add_argument("--from-outcomes", help="write certificates from this outcomes file, judge nothing")
    ap.add_argument("--certify", help="folder to write the certificates into")
    ap.add_argument("--judge-model", default="local", help="the judge to certify (default: the embedded one)")
    ap.add_argument("--first", help="comma-separated case counts, one per file: judge that many of "
                    "each file first, file after file in the order given, then the rest interleaved "
                    "(a priority order for a run that may be stopped)")
    ap.add_argument("--resume", action="store_true",
                    help="skip the cases already in --outcomes (judged with these prompts and judge)")
    ap.add_argument("--metrics", help="comma-separated criteria: judge (and certify) only their cases "
                    "(a `multi_turn` file labels three criteria; a changed prompt needs only its own)")
    ap.add_argument("--parallelism", type=int, default=1,
                    help="cases judged at once (the embedded engine answers up to 4 questions in its slots)")
    args = ap.parse_args()

    wanted = set(args.metrics.split(",")) if args.metrics else None
    by_file = {f: balanced([c for c in load_labelled(f) if wanted is None or c.metric in wanted])
               for f in args.files}
    chosen = {f: (cs[:args.per_file] if args.per_file else cs) for f, cs in by_file.items()}
    cases_by_id = {c.id: (f, c) for f, cs in by_file.items() for c in cs}
    # by (file, metric): a file may label several criteria (a `multi_turn` conversation set)
    results: dict[tuple[str, str], list[Outcome]] = {}
    if args.from_outcomes:
        # Only outcomes judged with the prompts of now (and of the judge certified): a
        # certificate is bound to the prompt's hash, so older outcomes would certify a prompt
        # they were not measured with.
        stale: dict[str, int] = {}
        for line in Path(args.from_outcomes).read_text().splitlines():
            row = json.loads(line)
            if row["id"] not in cases_by_id:
                continue
            file, case = cases_by_id[row["id"]]
            if row.get("prompt_sha256") != prompt_sha256(case) or \
                    row.get("judge_model", "local") != args.judge_model:
                stale[case.metric] = stale.get(case.metric, 0) + 1
                continue
            results.setdefault((file, case.metric), []).append(
                Outcome(case, row["correct"], row["confidence"], row.get("source")))
        for metric, n in stale.items():
            print(f"{metric}: {n} outcome(s) left out: judged with another prompt or judge")
    else:
        if args.resume and Path(args.outcomes).is_file():
            done_ids = {row["id"] for row in map(json.loads, Path(args.outcomes).read_text().splitlines())
                        if row["id"] in cases_by_id and row.get("judge_model", "local") == args.judge_model
                        and row.get("prompt_sha256") == prompt_sha256(cases_by_id[row["id"]][1])}
            chosen = {f: [c for c in cs if c.id not in done_ids] for f, cs in chosen.items()}
            print(f"resuming: {len(done_ids)} case(s) judged already, "
                  f"{sum(map(len, chosen.values()))} to judge", flush=True)
        order: list[LabelledCase] = []
        if args.first:
            counts = [int(n) for n in args.first.split(",")]
            for (f, cs), n in zip(list(chosen.items()), counts, strict=True):
                order += [c for unit in conversation_blocks(cs[:n]) for c in unit]
                chosen[f] = cs[n:]
        # Files interleaved unit by unit, so that stopping early leaves all of them measured.
        units = {f: conversation_blocks(cs) for f, cs in chosen.items()}
        order += [c for group in zip(*units.values(), strict=False) for unit in group for c in unit]
        order += [c for us in units.values() for unit in us[min(map(len, units.values())):] for c in unit]
        # No rationales: they are written after the label and never change it, and cost a call.
        judge = JudgeService(lambda name: resolve_model(name, dict(os.environ)), None, early_stop=False,
                             rationales="never")
        out = Path(args.outcomes)
        out.parent.mkdir(parents=True, exist_ok=True)

        def done(o: Outcome) -> None:
            with out.open("a") as fh:
                fh.write(json.dumps({"id": o.case.id, "metric": o.case.metric, "label": o.case.label,
                                     "correct": o.correct, "confidence": o.confidence,
                                     "source": o.source, "t": round(time.time(), 1),
                                     "judge_model": args.judge_model,
                                     "prompt_sha256": prompt_sha256(o.case)}) + "\n")
            print(f"{o.case.id}: {'right' if o.correct else 'wrong' if o.correct is False else 'none'}"
                  f" p={o.confidence}", flush=True)

        judge_model = None if args.judge_model == "local" else args.judge_model
        for cal in asyncio.run(calibrate(order, judge, num_samples=args.num_samples, judge_model=judge_model,
                                         parallelism=args.parallelism, on_case=done)):
            for o in cal.outcomes:
                results.setdefault((cases_by_id[o.case.id][0], o.case.metric), []).append(o)
    created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for (file, metric), outcomes in results.items():
        cal = Calibration(metric, outcomes)
        of_metric = sum(1 for c in by_file[file] if c.metric == metric)
        cert = certificate(cal, judge_model=args.judge_model, num_samples=args.num_samples,
                           source=f"bench/judge_set/{Path(file).name} ({len(outcomes)} of "
                           f"{of_metric} cases, balanced seeded order)",
                           source_sha256=digest([file]), created=created)
        print(f"{cert.metric}: {cert.summary()}; accuracy {cert.accuracy:.0%}")
        for f in cert.families:
            agreement = "-" if f.agreement is None else f"{f.agreement:.0%}"
            kappa = "-" if f.kappa is None else f"{f.kappa:.2f}"
            print(f"  {f.family:18} {f.labels:3} labels  agreement {agreement:>4}  κ {kappa:>5}"
                  f"{'  below the floor' if f.below_floor else ''}")
        if args.certify:
            folder = Path(args.certify)
            folder.mkdir(parents=True, exist_ok=True)
            slug = "" if args.judge_model == "local" else "@" + "".join(
                ch if ch.isalnum() or ch in "-._" else "_" for ch in args.judge_model)
            judge_name = "the embedded judge" if args.judge_model == "local" else args.judge_model
            (folder / f"{cert.metric}{slug}.json").write_text(
                json.dumps({**cert.to_json(), "note": f"bench/bench_certify.py on {judge_name}"},
                           indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
