"""Differential fuzz: agenteval's scores must equal ADK 2.13.0's exactly.

    /work/adkvenv/bin/python bench/parity_fuzz.py [--seeds 101 202 303 404 505] [--n 2000]

For each seed a fresh corpus is generated with a high `--edge-rate` (empty lists and
conversations, None vs {} args, 1 vs 1.0, True vs 1, duplicate calls, big integers, CJK, Thai,
Lao, Khmer, Myanmar, combining marks, NFKC-changing characters such as "ﬁ", "①" and "ſ",
apostrophes, underscores, zero-width characters, empty / null / thought-only responses...),
written under bench/out/fuzz/seed_<seed>/ and loaded by both sides' own loaders. Then:

1. every case is scored by ADK's TrajectoryEvaluator (EXACT, IN_ORDER, ANY_ORDER, each with and
   without `ignore_args`) and RougeEvaluator, and by agenteval's registry criteria; every overall
   and per-invocation score must be equal (same type, same float);
2. every text of the corpus (prompts, responses, intermediate texts) and `--strings` random
   strings drawn from tricky Unicode blocks are tokenized by ADK's `_UnicodeAwareTokenizer`
   and agenteval's `tokenize`, and random string pairs are scored by ADK's ROUGE-1 and
   agenteval's `rouge1_fmeasure`: all must agree; agenteval's two loading paths (the
   `model_validate_json` fast path of `load_eval_set`, and `json.loads` + `parse_eval_set`, which
   `agenteval score` uses for the actual set) must give the same values, types included;
3. portability: agenteval averages per-invocation scores with `sum()`, ADK with a `+=` loop.
   They agree on CPython ≤ 3.11, but CPython 3.12 made `sum()` of floats compensated
   (Neumaier). The check recomputes agenteval's overall scores with 3.12's algorithm and counts
   the cases that would then differ from ADK (reported, and failing only with `--strict-312`).

Exits 1 on any difference in 1 or 2, printing a minimal reproducing input for each.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
# This checkout's src/ first unless PYTHONPATH names one (a before/after): the `agenteval`
# installed here was an editable install of another copy in session 14, which runs would check.
if not os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = str(BENCH_DIR.parent / "src")
    sys.path.insert(0, os.environ["PYTHONPATH"])

from gen_corpus import DEFAULT_OUT, EDGE_TOKENS, NFKC_CHANGING, write_corpus  # noqa: E402

warnings.filterwarnings("ignore")

from google.adk.evaluation.eval_config import (  # noqa: E402
    EvalConfig,
    get_eval_metrics_from_config,
)
from google.adk.evaluation.final_response_match_v1 import (  # noqa: E402
    RougeEvaluator,
    _calculate_rouge_1_scores,
    _UnicodeAwareTokenizer,
)
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file  # noqa: E402
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator  # noqa: E402

from agenteval.criteria import EvalContext, default_registry, rouge1_fmeasure, tokenize  # noqa: E402
from agenteval.datasets import load_eval_set, parse_eval_set, read_json  # noqa: E402
from agenteval.schema import content_text  # noqa: E402

# Code-point ranges the random strings are drawn from (weights favour the tricky ones).
RANGES: list[tuple[int, int, int]] = [
    (0x20, 0x7E, 6),  # ASCII
    (0xA0, 0x17F, 2),  # Latin-1, Latin Extended-A
    (0x1C4, 0x1CC, 1),  # DŽ / Dž / dž digraphs (NFKC, title case)
    (0x300, 0x36F, 2),  # combining diacritics
    (0x370, 0x3FF, 1),  # Greek
    (0x400, 0x4FF, 1),  # Cyrillic
    (0x591, 0x5F4, 1),  # Hebrew with points
    (0x600, 0x6FF, 1),  # Arabic
    (0x900, 0x97F, 2),  # Devanagari (marks outside ADK's cluster scripts)
    (0xE00, 0xE7F, 3),  # Thai
    (0xE80, 0xEFF, 2),  # Lao
    (0xF00, 0xFFF, 1),  # Tibetan
    (0x1000, 0x109F, 2),  # Myanmar
    (0x10A0, 0x10FF, 1),  # Georgian
    (0x1100, 0x11FF, 1),  # Hangul Jamo (not in ADK's Hangul-syllable range)
    (0x1780, 0x17FF, 2),  # Khmer
    (0x1E00, 0x1EFF, 1),  # Latin Extended Additional
    (0x2000, 0x206F, 2),  # general punctuation, zero-width characters
    (0x2070, 0x209F, 1),  # super/subscripts
    (0x2100, 0x218F, 2),  # letterlike symbols, number forms (K, Å, Ⅻ)
    (0x2460, 0x24FF, 2),  # enclosed alphanumerics (①)
    (0x3000, 0x30FF, 3),  # CJK punctuation, hiragana, katakana
    (0x3130, 0x318F, 1),  # Hangul compatibility jamo
    (0x3200, 0x33FF, 1),  # enclosed CJK, CJK compatibility (㈱, ㎏)
    (0x3400, 0x4DBF, 1),  # CJK extension A (not in ADK's ideograph range)
    (0x4E00, 0x9FFF, 3),  # CJK unified ideographs
    (0xAC00, 0xD7AF, 2),  # Hangul syllables
    (0xF900, 0xFAFF, 1),  # CJK compatibility ideographs
    (0xFB00, 0xFB4F, 2),  # ligatures (ﬁ, ﬂ, ſt), Hebrew presentation forms
    (0xFE00, 0xFE0F, 1),  # variation selectors
    (0xFF00, 0xFFEF, 2),  # fullwidth / halfwidth forms
    (0x1D400, 0x1D7FF, 1),  # mathematical alphanumerics (NFKC to ASCII)
    (0x1F300, 0x1F6FF, 1),  # emoji
    (0x20000, 0x2A6DF, 1),  # CJK extension B
]
_RANGE_WEIGHTS = [w for _, _, w in RANGES]


def random_string(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(1, 14)):
        r = rng.random()
        if r < 0.15:
            parts.append(rng.choice(EDGE_TOKENS + NFKC_CHANGING))
        elif r < 0.30:
            parts.append(rng.choice([" ", " ", "'", "_", "-", "’", ".", "\n"]))
        elif r < 0.45:
            parts.append(rng.choice(["running", "ran", "cats", "ship", "shipped", "connection",
                                     "generously", "caresses", "1", "1000", "abc123", "the"]))
        else:
            lo, hi, _ = rng.choices(RANGES, weights=_RANGE_WEIGHTS)[0]
            parts.append(chr(rng.randint(lo, hi)))
    return "".join(parts)


def neumaier_sum(values: Iterable[float]) -> float:
    """`sum()` of floats as CPython ≥ 3.12 computes it (builtin_sum_impl, Neumaier)."""
    it = iter(values)
    total: Any = 0
    for x in it:  # the int start 0 + the first float is exact
        total = 0 + x
        break
    else:
        return 0
    comp = 0.0
    for x in it:
        t = total + x
        if abs(total) >= abs(x):
            comp += (total - t) + x
        else:
            comp += (x - t) + total
        total = t
    if comp and math.isfinite(comp):
        total += comp
    return float(total)


def same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)


def calls_repr(inv: Any) -> str:
    from google.adk.evaluation.eval_case import get_all_tool_calls

    return repr([(c.name, c.args) for c in get_all_tool_calls(inv.intermediate_data)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[101, 202, 303, 404, 505])
    ap.add_argument("--n", type=int, default=2000, help="cases per seed (default 2000)")
    ap.add_argument("--edge-rate", type=float, default=0.35)
    ap.add_argument("--strings", type=int, default=20_000,
                    help="random strings per seed for the tokenizer check (default 20000)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT / "fuzz")
    ap.add_argument("--strict-312", action="store_true",
                    help="also fail when Python 3.12 sum() semantics would change a score")
    ap.add_argument("--show", type=int, default=5, help="mismatches to print per check")
    args = ap.parse_args()

    registry = default_registry()
    adk_tok = _UnicodeAwareTokenizer(use_stemmer=True)
    variants: list[tuple[str, str, Any]] = [
        # per_agent false: ADK's flat matching. The default (auto) matches per agent when the
        # expected events name two authors, as the corpus's do (see README, per_agent).
        (f"{mt}{'+ignore_args' if ig else ''}", "tool_trajectory_avg_score",
         {"threshold": 1.0, "match_type": mt, "ignore_args": ig, "per_agent": False})
        for mt in ("EXACT", "IN_ORDER", "ANY_ORDER") for ig in (False, True)
    ] + [("rouge", "response_match_score", 0.8)]
    evaluators = {"tool_trajectory_avg_score": TrajectoryEvaluator,
                  "response_match_score": RougeEvaluator}

    failures = 0
    totals: dict[str, int] = {}
    header = (f"{'seed':>5} {'cases':>6} {'invs':>6} {'texts':>7} {'strings':>8} "
              + " ".join(f"{v[0].replace('+ignore_args', '+ia'):>12}" for v in variants)
              + f" {'tokens':>7} {'rouge':>6} {'loader':>7} {'py3.12':>7}")
    rows: list[str] = []
    for seed in args.seeds:
        t0 = time.perf_counter()
        d = args.out / f"seed_{seed}"
        exp_path, act_path = write_corpus(d, args.n, seed, args.edge_rate)
        a_exp = load_eval_set_from_file(str(exp_path), "fuzz")
        a_act = load_eval_set_from_file(str(act_path), "fuzz")
        e_exp, e_act = load_eval_set(exp_path), load_eval_set(act_path)
        loader_bad = 0
        for path, fast in ((exp_path, e_exp), (act_path, e_act)):
            slow = parse_eval_set(path, read_json(path))
            for c_fast, c_slow in zip(fast.eval_cases, slow.eval_cases, strict=True):
                if repr(c_fast.model_dump()) != repr(c_slow.model_dump()):
                    loader_bad += 1
                    if loader_bad <= args.show:
                        print(f"LOADER MISMATCH seed {seed} {path.name} {c_fast.eval_id}: the "
                              "model_validate_json and json.loads paths give different values")
        a_by, e_by = ({c.eval_id: c for c in s.eval_cases} for s in (a_act, e_act))
        pairs = [(c.eval_id, a_by[c.eval_id].conversation, c.conversation,
                  e_by[c.eval_id].conversation or [], ec.conversation)
                 for c, ec in zip(a_exp.eval_cases, e_exp.eval_cases, strict=True)]
        n_inv = sum(len(p[1]) for p in pairs)
        counts: list[int] = []
        py312 = 0
        for label, name, value in variants:
            config = EvalConfig.model_validate({"criteria": {name: value}})
            metric = get_eval_metrics_from_config(config)[0]
            configured = registry.configure(name, value)
            bad = 0
            for cid, a_actual, a_expected, e_actual, e_expected in pairs:
                ra = evaluators[name](eval_metric=metric).evaluate_invocations(a_actual, a_expected)
                re_ = configured.build().score(EvalContext(actual=e_actual, expected=e_expected))
                a_per = [p.score for p in ra.per_invocation_results]
                e_per = [p.score for p in re_.per_invocation]
                diff = [i for i, (x, y) in enumerate(zip(a_per, e_per, strict=False))
                        if not same(x, y)]
                if not same(ra.overall_score, re_.score) or len(a_per) != len(e_per) or diff:
                    bad += 1
                    if bad <= args.show:
                        print(f"MISMATCH seed {seed} {cid} {label}: overall adk="
                              f"{ra.overall_score!r} agenteval={re_.score!r}; per invocation "
                              f"adk={a_per} agenteval={e_per}")
                        for i in diff[:2]:
                            inv_a, inv_e = a_actual[i], a_expected[i]
                            if name == "response_match_score":
                                print(f"  invocation {i}: actual text "
                                      f"{content_text_adk(inv_a.final_response)!r} expected "
                                      f"{content_text_adk(inv_e.final_response)!r}")
                            else:
                                print(f"  invocation {i}: actual calls {calls_repr(inv_a)} "
                                      f"expected calls {calls_repr(inv_e)}")
                if name == "response_match_score" and e_per and all(
                        isinstance(x, float) for x in e_per):
                    ported = neumaier_sum(e_per) / len(e_per)
                    if not same(ported, ra.overall_score):
                        py312 += 1
                        if py312 <= 1:
                            print(f"note (Python >= 3.12 sum): seed {seed} {cid}: per-invocation "
                                  f"{e_per}: ADK overall {ra.overall_score!r}, agenteval under "
                                  f"3.12 would give {ported!r}")
            counts.append(bad)
            totals[label] = totals.get(label, 0) + bad
            failures += bad

        # 2. tokenizer and ROUGE on texts and random strings
        texts: set[str] = set()
        for case in e_exp.eval_cases + e_act.eval_cases:
            for inv in case.conversation or []:
                texts.add(content_text(inv.user_content))
                texts.add(content_text(inv.final_response))
                texts.update(t for _, t in inv.intermediate_texts())
        rng = random.Random(seed)
        strings = [random_string(rng) for _ in range(args.strings)]
        tok_bad = 0
        for text in [*sorted(texts), *strings, *EDGE_TOKENS, *NFKC_CHANGING]:
            a_toks, e_toks = adk_tok.tokenize(text), tokenize(text)
            if a_toks != e_toks:
                tok_bad += 1
                if tok_bad <= args.show:
                    print(f"TOKEN MISMATCH seed {seed}: {text!r}: adk={a_toks} agenteval={e_toks}")
        rouge_bad = 0
        for i in range(0, len(strings) - 1, 2):
            cand = strings[i]
            words = cand.split(" ")
            rng.shuffle(words)  # half the pairs overlap a lot, half hardly at all
            ref = " ".join(words) if rng.random() < 0.5 else strings[i + 1]
            x = _calculate_rouge_1_scores(cand, ref).fmeasure
            y = rouge1_fmeasure(cand, ref)
            if not same(x, y):
                rouge_bad += 1
                if rouge_bad <= args.show:
                    print(f"ROUGE MISMATCH seed {seed}: {cand!r} vs {ref!r}: adk={x!r} "
                          f"agenteval={y!r}")
        failures += tok_bad + rouge_bad + loader_bad
        totals["loader"] = totals.get("loader", 0) + loader_bad
        totals["tokens"] = totals.get("tokens", 0) + tok_bad
        totals["rouge strings"] = totals.get("rouge strings", 0) + rouge_bad
        totals["py3.12"] = totals.get("py3.12", 0) + py312
        if args.strict_312:
            failures += py312
        rows.append(f"{seed:>5} {len(pairs):>6} {n_inv:>6} {len(texts):>7} {len(strings):>8} "
                    + " ".join(f"{c:>12}" for c in counts)
                    + f" {tok_bad:>7} {rouge_bad:>6} {loader_bad:>7} {py312:>7}")
        print(f"seed {seed}: done in {time.perf_counter() - t0:.1f}s")

    print("\nmismatches per check (cases with any differing score; tokens: texts whose token "
          "lists differ; rouge: random string pairs; loader: cases loaded differently by agenteval's two "
          "paths; py3.12: cases whose overall would differ "
          "under CPython >= 3.12 sum())")
    print(header)
    print("\n".join(rows))
    checked = sum(totals.get(v[0], 0) for v in variants)
    print(f"\nscore mismatches: {checked}; tokenizer mismatches: {totals.get('tokens', 0)}; "
          f"ROUGE string-pair mismatches: {totals.get('rouge strings', 0)}; "
          f"loader mismatches: {totals.get('loader', 0)}; "
          f"latent Python>=3.12 differences: {totals.get('py3.12', 0)}")
    if failures:
        print("FAILED: agenteval differs from ADK", file=sys.stderr)
        sys.exit(1)
    print("OK: every score identical to ADK 2.13.0")


def content_text_adk(content: Any) -> str:
    from google.adk.evaluation.final_response_match_v1 import _get_text_from_content

    text: str = _get_text_from_content(content)
    return text


if __name__ == "__main__":
    main()
