"""Instructions of a `score` worker's case, phase by phase, in process (issue 29 item 4, session 33).

    valgrind --tool=callgrind --dump-before=os_getppid --callgrind-out-file=OUT \\
        /root/.pyenv/versions/3.11.7/bin/python bench/bench_score_phases.py N -- \\
        EXPECTED --actual ACTUAL --config_file_path CFG

The run's setup is made as `profile_score_chunk.py` makes it (this process started as a worker),
then, between calls of `os.getppid()` (each one makes callgrind write the part since the last:
OUT.1, OUT.2, ...): `shard_worker.score_chunk` over the first N cases in two chunks, cold (part 2)
and again warm (part 4), then the same steps one at a time over all N cases (parts 6-23, named
in `PARTS`). A part's total (`summary:` in its file) over N is its instructions a case; the parts
after 5 add up to the warm pass to within a percent. Per-function counts of a part:
`callgrind_annotate --threshold=100 OUT.K`. Instruction counts do not depend on the load.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_score_chunk import started_worker

PARTS = {1: "setup", 2: "score_chunk, cold", 3: "its output freed", 4: "score_chunk, warm",
         5: "its output freed", 6: "_read: the chunk read, its nesting and surrogates scanned",
         7: "each item's byte shapes and exponents", 8: "read_item x 2 (pydantic validation)",
         9: "paired_case", 10: "EvalContext", 11: "the criteria alone (_scored)",
         12: "every reason read (made when read)", 13: "score_case (criteria, reasons, models)",
         14: "summarise_case", 15: "plain_numbers x 2", 16: "the result written",
         17: "the summary written", 18: "Scored built", 19: "bytes freed", 20: "results freed",
         21: "criteria's results freed", 22: "runs freed", 23: "cases freed"}


def main() -> None:
    n = int(sys.argv[1])
    _, expected, actual = started_worker([a for a in sys.argv[2:] if a != "--"], n)
    from agenteval.criteria.base import EvalContext
    from agenteval.runner import scoring
    from agenteval.runner import shard_worker as w

    mark, half = os.getppid, n // 2
    mark()
    out = w.score_chunk(0, expected[:half], actual[:half])
    out += w.score_chunk(half, expected[half:], actual[half:])  # type: ignore[operator]
    mark()
    del out
    mark()
    out = w.score_chunk(0, expected[:half], actual[:half])
    out += w.score_chunk(half, expected[half:], actual[half:])  # type: ignore[operator]
    mark()
    del out
    mark()
    s = w._setup
    assert s is not None
    wanted, got = w._read(s.expected_path, expected), w._read(s.actual_path, actual)
    assert wanted is not None and got is not None
    items = list(zip(wanted, got, strict=True))
    mark()
    shapes = [(a.translate(w.BYTE_SHAPES), b.translate(w.BYTE_SHAPES)) for a, b in items]
    exps = [(w.has_exponents(a, sa), w.has_exponents(b, sb))
            for (a, b), (sa, sb) in zip(items, shapes, strict=True)]
    mark()
    cases = [(w.read_item(w.EvalCase, a, sa, ea), w.read_item(w.EvalCase, b, sb, eb))
             for (a, b), (sa, sb), (ea, eb) in zip(items, shapes, exps, strict=True)]
    mark()
    runs = [w.paired_case(c, r, i, s.eval_set_id, s.actual_path) for i, (c, r) in enumerate(cases)]  # type: ignore[arg-type]
    mark()
    ctxs = [EvalContext(r.actual, r.case.conversation, r.case.conversation_scenario, r.session_state,
                        r.case.rubrics or (), None, r.extras, r.trace) for r in runs]
    mark()
    crit = [[scoring._scored(m, c) for m in s.metrics] for c in ctxs]
    mark()
    reasons = [[(x.reason, [y.reason for y in x.per_invocation]) for x in cs] for cs in crit]  # type: ignore[union-attr]
    mark()
    results = [w._done(scoring.score_case(r, s.metrics, s.policy)) for r in runs]
    mark()
    sums = [w.summarise_case(r.eval_id, [r], s.gating, s.policy == "ignore") for r in results]
    mark()
    plain = [w.plain_numbers(a, sa, ea) and w.plain_numbers(b, sb, eb)
             for (a, b), (sa, sb), (ea, eb) in zip(items, shapes, exps, strict=True)]
    mark()
    written = [w._write(r) for r in results]
    mark()
    summaries = [w._write(x) for x in sums]
    mark()
    scored = [w.Scored(r.eval_id, a, b, x.final_eval_status, r.error_message, len(r.metric_errors),
                       w.runs_duration((r,)), w.runs_tokens((r,)), time.monotonic())
              for r, a, b, x in zip(results, written, summaries, sums, strict=True)]
    mark()
    del scored, summaries, written
    mark()
    del sums, results
    mark()
    del crit, reasons, ctxs
    mark()
    del runs
    mark()
    del cases
    mark()
    print(f"{n} cases, {sum(plain)} with plain numbers", file=sys.stderr)


if __name__ == "__main__":
    main()
