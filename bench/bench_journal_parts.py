"""The journal's cost split into its parts, replayed in process (for cachegrind or a profiler).

    python bench/bench_journal_parts.py capture [--cases 1000]     # once, with the tree to study
    python bench/bench_journal_parts.py replay {journal,noput,serialise}
    python bench/bench_journal_parts.py record [--repeat 5]

`capture` runs `agenteval eval` of `bench_journal.py`'s trivial agent and set (parallelism 8,
journal and history on) in this process, keeping what the run journal was told (the run's
header, each case run and each told case, in order: `Journaled`'s calls) and a copy of the
store root just before the run is recorded (`record_streamed`), under bench/out/journal_parts/.
`replay journal` then tells a fresh `Journal` the same calls (appends and verdicts, then the
writer flushed and closed), with what the document shares with it made too (each run's and
summary's placed JSON, a case's figures); `replay serialise` makes only the shared part, and
`replay noput` everything but the writer's work (its `put` a no-op). Run each under `valgrind
--tool=cachegrind --cache-sim=no` on the interpreter's binary: journal - serialise is what the
journal costs a run's event loop and writer thread, noput - serialise the event loop's part.
The captured objects are frozen out of the cyclic collector's passes (`gc.freeze`): holding
1,000 results alive made the replay's collections cost more than the journal itself.
`record` records the captured store root again (a fresh copy each time) and prints the thread
CPU of each SQL statement it ran, by its text (connections made with a timing factory).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import os
import pickle
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
from bench_journal import write_set  # noqa: E402
from bench_journal_instructions import AGENT  # noqa: E402

OUT = BENCH_DIR / "out" / "journal_parts"


def _snapshot(src: Path, dst: Path) -> None:
    """A copy of a store's `.agenteval` folder as it is now: each SQLite database through
    SQLite's backup (a `-wal` file copied beside its database could vanish mid-copy, merged and
    removed by a thread closing its last connection: the history's stage thread ends with its
    run), every other file as it is."""
    for path in sorted(src.rglob("*")):
        target = dst / path.relative_to(src)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif path.suffix == ".sqlite":
            target.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.closing(sqlite3.connect(path)) as source, \
                    contextlib.closing(sqlite3.connect(target)) as copy:
                source.backup(copy)
        elif not path.name.endswith(("-wal", "-shm")):
            target.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):  # (a lock file released meanwhile)
                shutil.copy2(path, target)


def capture(cases: int) -> None:
    import importlib

    # (by importlib: `agenteval.store.record` as an attribute is the package's `record` function)
    record_module = importlib.import_module("agenteval.store.record")
    from agenteval.cli.main import main as cli
    from agenteval.runner.driver import Journaled

    shutil.rmtree(OUT, ignore_errors=True)
    (OUT / "agent").mkdir(parents=True)
    (OUT / "agent" / "__init__.py").write_text(AGENT)
    write_set(OUT / "set.evalset.json", range(cases))
    told: list[tuple[Any, ...]] = []
    start, run, case = Journaled.on_start, Journaled.on_case_run, Journaled.on_case

    def on_start(self: Journaled, header: Any, total: int) -> None:
        told.append(("start", header.model_copy(deep=True), self.fingerprint, self.total))
        start(self, header, total)

    def on_case_run(self: Journaled, result: Any, seconds: float) -> None:
        told.append(("run", result.eval_set_id, result))
        run(self, result, seconds)

    def on_case(self: Journaled, outcome: Any) -> None:
        told.append(("case", outcome, self._told.get(outcome.eval_set_id, 0)))
        case(self, outcome)

    Journaled.on_start, Journaled.on_case_run, Journaled.on_case = on_start, on_case_run, on_case  # type: ignore[method-assign]
    recording = record_module.record_streamed

    def record_streamed(root: Any, path: Any, shell: Any, rows: Any = None) -> str:
        _snapshot(Path(root) / ".agenteval", OUT / "snapshot" / ".agenteval")
        (OUT / "record.pkl").write_bytes(pickle.dumps((Path(path).name, shell, rows)))
        return recording(root, path, shell, rows)

    record_module.record_streamed = record_streamed  # (`cli.commands` imports it when it records)
    atexit.register(lambda: (OUT / "told.pkl").write_bytes(pickle.dumps(told, pickle.HIGHEST_PROTOCOL)))
    sys.argv = ["agenteval", "eval", str(OUT / "agent"), str(OUT / "set.evalset.json"), "--parallelism", "8",
                "--output", str(OUT / "out.json")]
    cli()


def replay(mode: str) -> None:
    from agenteval.store import journal_writer
    from agenteval.store.journal import Journal
    from agenteval.store.kept import figures
    from agenteval.store.output import placed_json, placed_summary

    told = pickle.loads((OUT / "told.pkl").read_bytes())
    gc.collect()
    gc.freeze()
    root = OUT / f"replay_{os.getpid()}"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    if mode == "noput":
        journal_writer.Writer.put = lambda self, rows, verdicts=(): None  # type: ignore[method-assign]
    t0 = time.process_time()
    journal = Journal(root) if mode != "serialise" else None
    run_id = ""
    for call in told:  # (the journal is told first, as `runner.run` orders the sinks)
        if call[0] == "start":
            run_id = call[1].run_id
            if journal is not None:
                journal.begin(*call[1:])
        elif call[0] == "run":
            if journal is not None:
                journal.append(run_id, call[1], call[2])
            placed_json(call[2], keep=False)
        else:
            if journal is not None:
                journal.append_verdict(run_id, call[1], call[2])
            placed_summary(call[1].summary)
            figures(call[1])
    if journal is not None:
        journal.flush()
        journal.close()
    print(f"replay {mode}: {time.process_time() - t0:.3f} s CPU, load {os.getloadavg()[0]:.1f}")
    shutil.rmtree(root, ignore_errors=True)


def record(repeat: int) -> None:
    times: dict[str, list[float]] = {}

    class Timed(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> Any:  # type: ignore[override]
            t = time.thread_time()
            rows = super().execute(sql, *args).fetchall()
            times.setdefault(sql[:72], []).append(time.thread_time() - t)
            return _Rows(rows)

        def close(self) -> None:
            t = time.thread_time()
            super().close()
            times.setdefault("close()", []).append(time.thread_time() - t)

    connect = sqlite3.connect
    sqlite3.connect = lambda *a, **k: connect(*a, factory=Timed, **k)  # type: ignore[assignment]
    from agenteval.store.record import record_streamed

    name, shell, rows = pickle.loads((OUT / "record.pkl").read_bytes())
    whole = []
    for _ in range(repeat):
        root = OUT / "record_root"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(OUT / "snapshot", root)
        t = time.thread_time()
        record_streamed(root, root / ".agenteval" / "eval_history" / name, shell, rows)
        whole.append(time.thread_time() - t)
    print(f"record_streamed: median {statistics.median(whole) * 1e3:.1f} ms CPU "
          f"({min(whole) * 1e3:.1f}-{max(whole) * 1e3:.1f}), load {os.getloadavg()[0]:.1f}")
    for sql, spent in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        if sum(spent) / repeat >= 2e-4:
            print(f"  {sum(spent) / repeat * 1e3:7.2f} ms a run  x{len(spent) // repeat:<2} {sql!r}")


class _Rows(list):  # type: ignore[type-arg]
    """A statement's rows, fetched at once (so that the statement's time is all counted)."""

    def fetchone(self) -> Any:
        return self[0] if self else None

    def fetchall(self) -> list[Any]:
        return list(self)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["capture", "replay", "record"])
    ap.add_argument("mode", nargs="?", default="journal", choices=["journal", "noput", "serialise"])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.what == "capture":
        capture(args.cases)
    elif args.what == "replay":
        replay(args.mode)
    else:
        record(args.repeat)


if __name__ == "__main__":
    main()
