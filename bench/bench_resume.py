"""kill -9 during a run, then `--resume`: finished cases redone, time to resume, final document.

    python bench/bench_resume.py [--cases 200] [--turns 3] [--latency 0.05] [--parallelism 8] \
        [--at 0.25 0.5 0.9]

Uses `bench_scaling.py`'s stub server, eval set and agent package (one tool call and a final text
per turn, so 2 model calls per turn). Per kill point F:

1. `agenteval eval bench_agent scaling.evalset.json --parallelism P --output ...` (run history
   on, so the run is journaled) is started and SIGKILLed as soon as the journal holds F x cases
   finished case runs;
2. the finished case runs at that moment are snapshotted (their journal rows), with whether the
   run history's write lock was held then (a stage of the run's rows under way,
   `store.kept_copy`) and the case rows a reader of the history sees then and after the kill
   beyond those it had before (0 and 0: no trace of the killed run);
3. `agenteval eval ... --resume RUN` finishes it. "Redone" counts snapshotted case runs whose
   session in the final document is not the one of their journal row (0 is the goal: a finished
   case is never run again; the run is gone from the journal once recorded); model calls made by
   the resumed process are read from the stub (a case in flight at the kill is redone in full);
4. the final document is compared with an uninterrupted run's: same cases, same statuses and
   scores for every metric but invocation_duration_v1 (times and ids differ by nature), and the
   whole document but what differs between any two runs (`timeless`: ids, times, durations,
   the header, traces, timed criteria).
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_scaling
from bench_scaling import Stub, agenteval_script, child_env, snake, write_fixtures

OUT = bench_scaling.OUT.parent / "resume"  # not bench_scaling's folder: the benches may run at once
bench_scaling.OUT = OUT
JOURNAL = OUT / "bench_agent" / ".agenteval" / "journal.sqlite"


def journal_keys(run_id: str) -> list[tuple[str, str, int]]:
    """The run's finished case runs the journal has committed (their keys alone)."""
    if not JOURNAL.exists():
        return []
    conn = sqlite3.connect(JOURNAL, timeout=30)
    try:
        return conn.execute("SELECT eval_set_id, eval_id, run_index FROM journal_cases WHERE run_id = ?",
                            (run_id,)).fetchall()
    except sqlite3.OperationalError:  # tables not created yet
        return []
    finally:
        conn.close()


def journal_rows(run_id: str) -> dict[tuple[str, int], str]:
    """The run's finished case runs as their journal rows hold them (read where agenteval keeps
    them: the run's rows file, or SQLite in journals made before rows files)."""
    from agenteval.store.journal import Journal

    reader = Journal(JOURNAL.parent.parent).reader()
    try:
        rows = {(e, i): reader.raw(run_id, (s, e, i)) for s, e, i in journal_keys(run_id)}
    finally:
        reader.close()
    return {key: row for key, row in rows.items() if row is not None}


HISTORY = JOURNAL.parent / "history.sqlite"


def history_state() -> tuple[bool, int]:
    """Whether a writer holds the run history's write lock now (a stage of the run's rows under
    way: `store.kept_copy`), and the case rows a reader of the history sees (those of recorded
    runs: a run's staged rows have no `runs` row yet, `store.staging`)."""
    if not HISTORY.exists():
        return False, 0
    conn = sqlite3.connect(HISTORY, timeout=0, isolation_level=None)
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
            held = False
        except sqlite3.OperationalError:
            held = True
        return held, int(conn.execute("SELECT count(*) FROM cases WHERE run_id IN (SELECT run_id FROM runs)")
                         .fetchone()[0])
    finally:
        conn.close()


def run_ids() -> set[str]:
    if not JOURNAL.exists():
        return set()
    conn = sqlite3.connect(JOURNAL, timeout=30)
    try:
        return {r[0] for r in conn.execute("SELECT run_id FROM journal_runs")}
    finally:
        conn.close()


def latest_run_id() -> str:
    conn = sqlite3.connect(JOURNAL, timeout=30)
    try:
        return str(conn.execute("SELECT run_id FROM journal_runs ORDER BY started DESC").fetchone()[0])
    finally:
        conn.close()


TIMED = {"invocation_duration_v1"}  # wall-clock seconds: differ between any two runs


def scores(path: Path) -> dict[str, Any]:
    """Per case: status and every metric's score/status, per invocation and overall (but
    durations, which are measurements of time)."""
    doc = snake(json.loads(path.read_text(encoding="utf-8")))
    out: dict[str, Any] = {}
    for case in doc["eval_case_results"]:
        out[f"{case['eval_id']}#{case.get('run_index', 0)}"] = {
            "status": case["final_eval_status"],
            "overall": sorted((m["metric_name"], m.get("score"), m.get("eval_status"))
                              for m in case["overall_eval_metric_results"]
                              if m["metric_name"] not in TIMED),
            "per_invocation": [sorted((m["metric_name"], m.get("score"), m.get("eval_status"))
                                      for m in inv["eval_metric_results"]
                                      if m["metric_name"] not in TIMED)
                               for inv in case["eval_metric_result_per_invocation"]]}
    return out


VOLATILE = {"eval_set_result_id", "eval_set_result_name", "creation_timestamp", "session_id", "invocation_id",
            "duration", "model_duration", "tool_duration", "trace", "run", "span_id", "id", "start", "end"}


def timeless(value: Any) -> Any:
    """A document without what differs between any two runs (see the module docstring)."""
    if isinstance(value, dict):
        if value.get("metric_name") in TIMED:
            return value["metric_name"]
        return {k: timeless(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def eval_cmd(evalset: Path, parallelism: int, output: Path, *extra: str) -> list[str]:
    return [agenteval_script(), "eval", str(OUT / "bench_agent"), str(evalset),
            "--config_file_path", str(OUT / "test_config.json"), "--parallelism", str(parallelism),
            "--output", str(output), *extra]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--parallelism", type=int, default=8)
    ap.add_argument("--at", type=float, nargs="+", default=[0.25, 0.5, 0.9])
    args = ap.parse_args()
    env = child_env()
    stub = Stub(args.latency, timeout=3600)
    rows = []
    try:
        evalset = write_fixtures(stub.base_url, args.cases, args.turns)
        shutil.rmtree(OUT / "bench_agent" / ".agenteval", ignore_errors=True)
        reference = OUT / "resume_reference.json"
        started = time.monotonic()
        done = subprocess.run(eval_cmd(evalset, args.parallelism, reference), env=env, capture_output=True,
                              text=True)
        if done.returncode != 0:
            sys.exit(f"the uninterrupted run exited {done.returncode}:\n{done.stdout[-2000:]}\n"
                     f"{done.stderr[-2000:]}")
        full_s = time.monotonic() - started
        expected = scores(reference)
        expected_doc = timeless(json.loads(reference.read_text(encoding="utf-8")))
        for fraction in args.at:
            target = int(args.cases * fraction)
            output = OUT / f"resume_{int(fraction * 100)}.json"
            output.unlink(missing_ok=True)
            before = run_ids()
            history_rows = history_state()[1]  # (the uninterrupted run's, and resumes' before)
            held_at_kill, seen = False, history_rows
            proc = subprocess.Popen(eval_cmd(evalset, args.parallelism, output), env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            run_id = None
            while proc.poll() is None:
                if run_id is None and JOURNAL.exists():
                    try:
                        candidate = latest_run_id()
                    except (sqlite3.OperationalError, TypeError):
                        candidate = None
                    run_id = candidate if candidate and candidate not in before else run_id
                if run_id and len(journal_keys(run_id)) >= target:
                    held_at_kill, seen = history_state()
                    proc.send_signal(signal.SIGKILL)
                    break
                time.sleep(0.01)
            proc.wait()
            if run_id is None:
                sys.exit("the run finished before its journal was seen; raise --cases")
            snapshot = journal_rows(run_id)
            # The killed run leaves no trace in the history (its copy was never committed).
            trace = history_state()[1] - history_rows
            stub.reset()
            started = time.monotonic()
            resumed = subprocess.run(eval_cmd(evalset, args.parallelism, output, "--resume", run_id),
                                     env=env, capture_output=True, text=True)
            resume_s = time.monotonic() - started
            if resumed.returncode not in (0, 1):
                sys.exit(f"--resume failed ({resumed.returncode}): {resumed.stderr[-2000:]}")
            final = {(c["eval_id"], c.get("run_index", 0)): c["session_id"]
                     for c in json.loads(output.read_text(encoding="utf-8"))["eval_case_results"]}
            redone = sum(final.get(key) != json.loads(row)["session_id"] for key, row in snapshot.items())
            calls = stub.stats()["requests"]
            missing = args.cases - len(snapshot)
            got = scores(output)
            rows.append({
                "kill_at": fraction, "finished_at_kill": len(snapshot), "finished_redone": redone,
                "history_copy_held_at_kill": held_at_kill,
                "history_rows_seen_during_run": seen - history_rows, "history_rows_after_kill": trace,
                "resume_model_calls": calls, "calls_for_missing": missing * args.turns * 2,
                "resume_s": round(resume_s, 2), "uninterrupted_s": round(full_s, 2),
                "same_cases": sorted(got) == sorted(expected),
                "same_scores": got == expected,
                "same_document": timeless(json.loads(output.read_text(encoding="utf-8"))) == expected_doc})
            print(json.dumps(rows[-1]), flush=True)
    finally:
        stub.stop()
    print("\n| kill at | finished at kill | finished redone | history copy held at kill | history rows "
          "seen then / after kill | resume model calls (missing x 6) "
          "| resume s | uninterrupted s | same cases | same scores | same document |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['kill_at']:.0%} | {r['finished_at_kill']} | {r['finished_redone']} | "
              f"{r['history_copy_held_at_kill']} | {r['history_rows_seen_during_run']} / "
              f"{r['history_rows_after_kill']} | "
              f"{r['resume_model_calls']} ({r['calls_for_missing']}) | {r['resume_s']} | "
              f"{r['uninterrupted_s']} | {r['same_cases']} | {r['same_scores']} | {r['same_document']} |")
    (OUT / "resume_summary.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
