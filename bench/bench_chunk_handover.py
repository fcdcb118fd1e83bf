"""Instructions of a sharded `score`'s hand-over of a chunk, a case at a time, in process (issue 29
item 4, session 35): what a worker does with a chunk once scored (into its slot of shared
memory, the pool's message pickled) and what the run's process does with it (the message
unpickled, the slot read, the document, report, totals and progress told), on either tree:
one whose workers send `Scored` records (`score_placed`) or one that sends a `Batch`
(`score_batch`).

    valgrind --tool=callgrind --dump-before=os_getppid --callgrind-out-file=OUT \\
        /root/.pyenv/versions/3.11.7/bin/python bench/bench_chunk_handover.py N -- \\
        EXPECTED --actual ACTUAL --config_file_path CFG

The chunks (250 cases each, the first N cases) are scored first, outside the parts; then, between
calls of `os.getppid()` (OUT.1, OUT.2, ...): part 2, the workers' side of every chunk; part 3,
the run's side (the document written to a temporary file, a report keeping 50 cases, the
totals, a progress bar as `agenteval score` shows one). A part's total over N is its
instructions a case. Prints a digest of the document's bytes (the same on both trees).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_score_chunk import started_worker


def main() -> None:
    n = int(sys.argv[1])
    _, expected, actual = started_worker([a for a in sys.argv[2:] if a != "--"], n)
    from agenteval.cli.progress import ProgressBar
    from agenteval.runner import shard_worker as w
    from agenteval.runner import sharded
    from agenteval.runner.header import TotalsCounter
    from agenteval.schema import EvalSetResult
    from agenteval.store.output import DocumentWriter

    batched = hasattr(sharded, "score_batch")
    size = sharded.CHUNK
    runs = [range(a, min(a + size, n)) for a in range(0, n, size)]
    scored = [w.score_chunk(r.start, expected[r.start:r.stop], actual[r.start:r.stop]) for r in runs]
    slots = sharded.Slots(len(runs))
    shell = EvalSetResult(eval_set_result_id="bench", eval_set_result_name="bench", eval_set_id="bench",
                          eval_case_results=[], creation_timestamp=0.0)
    out = Path(tempfile.mkdtemp()) / "doc.json"
    writer = DocumentWriter([out], shell)
    kept, counter, seen = sharded.ReportCases(50), TotalsCounter(), set()
    mark = os.getppid
    mark()
    messages = []
    for slot, chunk in enumerate(scored):
        assert not isinstance(chunk, w.Refusal)
        if batched:
            done = w.batch(chunk)
            sharded._slots[slot * sharded.SLOT:slot * sharded.SLOT + len(done.results)] = done.results
            at = slot * sharded.SLOT + len(done.results)
            sharded._slots[at:at + len(done.summaries)] = done.summaries
            done.results = done.summaries = b""
            done.placed = True
        else:
            at, sizes = slot * sharded.SLOT, []
            for s in chunk:
                sharded._slots[at:at + len(s.result)] = s.result
                at += len(s.result)
                sizes.append(len(s.result))
                s.result = b""
            done = sharded.Placed(chunk, sizes)
        messages.append(pickle.dumps(done, pickle.HIGHEST_PROTOCOL))
    mark()
    with ProgressBar("scoring") as bar:
        for slot, message in enumerate(messages):
            done = pickle.loads(message)
            if batched:
                done = slots.read(slot, done)
                had = len(seen)
                seen.update(done.eval_ids)
                assert len(seen) - had == len(done.eval_ids)
                sharded._tell(done, "bench", writer, kept, counter, bar)
            else:
                for s in slots.read(slot, done):
                    assert s.eval_id not in seen
                    seen.add(s.eval_id)
                    sharded._tell(s, "bench", writer, kept, counter, bar)
            kept.offer_table(n)
        mark()
    writer.commit(shell)
    print(hashlib.sha256(out.read_bytes()).hexdigest(), counter.cases, counter.statuses, counter.seconds,
          len(kept.first), len(kept.not_passed))


if __name__ == "__main__":
    main()
