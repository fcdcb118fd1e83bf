"""Durable runs: a killed `agenteval eval` is listed as interrupted and `--resume` finishes it,
running only what is missing; `--retry_errors`; `--case_timeout`."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.store import RunStore
from agenteval.store.db import history_db_path
from agenteval.store.journal import Journal
from tests.helpers import call, eval_set, inv

AGENT = '''
import os, signal, time
from pathlib import Path

HERE = Path(__file__).parent

def root_agent(text, state):
    with open(HERE / "calls.log", "a") as log:
        log.write(text + "\\n")
    # Killed as if the machine went away mid-run, a second after the case before finished: the
    # journal commits a finished case within half a second (a kill loses only that window).
    if text == "case 6" and (HERE / "kill").exists():
        time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGKILL)
    if text == "case 3" and (HERE / "kill3").exists():
        time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGKILL)
    if text == "case 3" and (HERE / "sigint").exists():  # Ctrl-C
        time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGINT)
    if text == "case 3" and (HERE / "fail").exists():
        raise RuntimeError("flaky backend")
    while (HERE / "hold").exists() and not (HERE / "release").exists():  # until the test says
        time.sleep(0.02)
    if text == "case 2" and (HERE / "hang").exists():
        time.sleep(110)
        (HERE / "slept").touch()  # never, when the run does not wait for the hung call
    return {"response": "answer to " + text, "tool_calls": [{"name": "lookup", "args": {"q": text}}]}
'''


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "dur_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("dur", {f"c{i}": [inv(f"case {i}", f"answer to case {i}", [call("lookup", q=f"case {i}")])]
                         for i in range(10)})
    path = agent / "dur.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    return agent, path


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _eval(agent: Path, path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    # Ctrl-C as from a terminal, whatever the test runner's: a suite started in the background
    # (`pytest &` in a script) ignores SIGINT, the ignoring is inherited through exec, and the
    # Ctrl-C test's agent then interrupted nothing (the run finished, exit 0).
    return subprocess.run([sys.executable, "-m", "agenteval", "eval", str(agent), str(path),
                           "--parallelism", "1", *extra], capture_output=True, text=True, timeout=120,
                          preexec_fn=_sigint_default)


def _calls(agent: Path) -> list[str]:
    log = agent / "calls.log"
    return log.read_text().split("\n")[:-1] if log.exists() else []


def _scores(doc: dict) -> list[tuple[str, int, list[float]]]:  # type: ignore[type-arg]
    return [(c["eval_id"], c["final_eval_status"], [m["score"] for m in c["overall_eval_metric_results"]
                                                     if m["metric_name"] in ("tool_trajectory_avg_score",
                                                                             "response_match_score")])
            for c in doc["eval_case_results"]]


def test_a_killed_run_is_listed_and_resumed_without_redoing_finished_cases(project: tuple[Path, Path],
                                                                           tmp_path: Path) -> None:
    agent, path = project
    (agent / "kill").touch()
    killed = _eval(agent, path, "-o", str(tmp_path / "never.json"))
    assert killed.returncode == -9 and not (tmp_path / "never.json").exists()
    assert _calls(agent) == [f"case {i}" for i in range(7)]
    (run,) = Journal(agent).runs()
    assert (run.status, run.done, run.total) == ("interrupted", 6, 10)
    listing = CliRunner().invoke(cli, ["runs", "--root", str(agent)], env={"COLUMNS": "200"})
    assert "Unfinished runs" in listing.output and run.run_id in listing.output and "6/10" in listing.output
    shown = CliRunner().invoke(cli, ["runs", "--root", str(agent), "show", run.run_id],
                               env={"COLUMNS": "200"})
    assert "interrupted, 6 of 10 case runs finished" in shown.output and "--resume" in shown.output
    # Its cases' rows committed to the journal's SQLite were staged in the history as it went
    # (`store.staging`; the journal commits every 256 rows, so here maybe none), unseen by readers.
    staged = RunStore(agent).staged_document(run.run_id, "dur")
    assert RunStore(agent).list_runs() == []

    (agent / "kill").unlink()
    (agent / "calls.log").unlink()
    out = tmp_path / "resumed.json"
    resumed = _eval(agent, path, "--resume", run.run_id[:12], "-o", str(out), *_reports(tmp_path / "resumed"))
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert _calls(agent) == [f"case {i}" for i in range(6, 10)]  # no finished case redone
    doc = json.loads(out.read_text())
    assert doc["run"]["run_id"] == run.run_id
    if staged is not None:  # (the resume took the stage: its kept rows not copied again)
        assert doc["eval_set_result_id"] == staged
    (agent / "calls.log").unlink()
    whole = tmp_path / "whole.json"
    assert _eval(agent, path, "-o", str(whole), "--no_history", *_reports(tmp_path / "whole")).returncode == 0
    assert _scores(doc) == _scores(json.loads(whole.read_text()))  # as if never interrupted
    # The same document but for times and ids (the kept cases are copied from their journal
    # rows; their summaries, the totals and the reports come from the rows' digests).
    assert _timeless(doc) == _timeless(json.loads(whole.read_text()))
    for suffix in (".md", ".xml"):
        texts = [_times_out((tmp_path / (side + suffix)).read_text()) for side in ("resumed", "whole")]
        assert texts[0] == texts[1]
    assert Journal(agent).runs() == []  # recorded: the journal holds only unfinished runs
    (recorded,) = RunStore(agent).documents(run.run_id)
    assert recorded.result_path.is_file()


def test_ctrl_c_says_how_to_finish_the_run(project: tuple[Path, Path]) -> None:
    agent, path = project
    (agent / "sigint").touch()
    stopped = _eval(agent, path)
    runs = Journal(agent).runs()
    assert len(runs) == 1, (stopped.returncode, stopped.stderr)  # (what the process said, if not)
    (run,) = runs
    # (case 3 itself may finish before the main thread takes the signal)
    assert stopped.returncode == 130 and run.status == "interrupted" and run.done in (3, 4)
    assert stopped.stderr.endswith(f"interrupted: run {run.run_id} keeps its finished case runs; "
                                   f"finish it with --resume {run.run_id}\n"), stopped.stderr


def _reports(stem: Path) -> list[str]:
    return ["--markdown", f"{stem}.md", "--junit_xml", f"{stem}.xml"]


_VOLATILE = {"eval_set_result_id", "eval_set_result_name", "creation_timestamp", "session_id",
             "invocation_id", "duration", "model_duration", "tool_duration", "trace", "run", "span_id", "id",
             "start", "end"}


def _timeless(value: object) -> object:
    """A document without what differs between any two runs: ids, times, durations, the
    header, traces, and the timed criteria's scores."""
    if isinstance(value, dict):
        if "duration" in str(value.get("metric_name", "")):
            return value["metric_name"]
        return {k: _timeless(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _times_out(report: str) -> str:
    import re

    return re.sub(r'( time| timestamp|"eval_set_result_id" value)="[^"]*"', "", report)


def test_resume_refuses_a_changed_eval_set(project: tuple[Path, Path]) -> None:
    agent, path = project
    (agent / "kill").touch()
    _eval(agent, path)
    (run,) = Journal(agent).runs()
    (agent / "kill").unlink()
    s = json.loads(path.read_text())
    s["eval_cases"] = s["eval_cases"][:5]
    path.write_text(json.dumps(s))
    refused = _eval(agent, path, "--resume", run.run_id)
    assert refused.returncode == 2
    assert f"cannot resume run {run.run_id}: since it started, eval set 'dur' changed (only " in \
        refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert refused.stdout.strip() == "", refused.stdout  # the refusal first and alone


def test_the_resume_refusal_names_what_changed(project: tuple[Path, Path], tmp_path: Path) -> None:
    agent, path = project
    (agent / "kill").touch()
    _eval(agent, path)
    (run,) = Journal(agent).runs()
    (agent / "kill").unlink()
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"response_match_score": 0.5}}))
    refused = _eval(agent, Path(f"{path}:c1,c2"), "--resume", run.run_id, "--num_runs", "2",
                    "--config_file_path", str(config))
    assert refused.returncode == 2
    assert "cases selected from 'dur' were every case, now c1, c2" in refused.stderr
    assert "config changed (criteria.response_match_score" in refused.stderr
    assert "num_runs was 1, now 2" in refused.stderr
    assert "eval set 'dur' changed" not in refused.stderr  # its content did not
    (again,) = Journal(agent).runs()  # untouched, still resumable
    assert (again.status, again.done) == ("interrupted", 6)


def test_retry_errors_runs_again_only_what_failed(project: tuple[Path, Path], tmp_path: Path) -> None:
    agent, path = project
    (agent / "fail").touch()
    first = _eval(agent, path)
    assert first.returncode == 1
    assert Journal(agent).runs() == []  # finished: in the history only
    (doc,) = RunStore(agent).list_runs()
    assert doc.cases_failed == 1 and doc.run_group is not None
    (agent / "fail").unlink()
    (agent / "calls.log").unlink()
    out = tmp_path / "retried.json"
    again = _eval(agent, path, "--retry_errors", "latest", "-o", str(out))
    assert again.returncode == 0, again.stdout
    assert _calls(agent) == ["case 3"]
    assert all(c["final_eval_status"] == 1 for c in json.loads(out.read_text())["eval_case_results"])
    (retried,) = RunStore(agent).documents(doc.run_group)  # the run, listed once, passed now
    assert retried.cases_passed == 10 and not doc.result_path.exists() and Journal(agent).runs() == []
    nothing = _eval(agent, path, "--retry_errors", doc.run_group)
    assert nothing.returncode == 0
    assert "already finished: no case run of it ended in an error" in nothing.stdout
    assert _calls(agent) == ["case 3"]


def test_retrying_errors_survives_a_kill_and_a_refusal(project: tuple[Path, Path]) -> None:
    agent, path = project
    (agent / "fail").touch()
    assert _eval(agent, path).returncode == 1
    (doc,) = RunStore(agent).list_runs()
    assert doc.run_group is not None
    s = json.loads(path.read_text())
    changed = path.with_name("changed.evalset.json")
    changed.write_text(json.dumps({**s, "eval_cases": s["eval_cases"][:9]}))
    refused = _eval(agent, changed, "--retry_errors", doc.run_group)
    assert refused.returncode == 2 and "since it started, eval set 'dur' changed" in refused.stderr
    assert Journal(agent).runs() == []  # a refused retry leaves nothing behind

    (agent / "fail").unlink()
    (agent / "kill3").touch()
    (agent / "calls.log").unlink()
    killed = _eval(agent, path, "--retry_errors", doc.run_group)
    assert killed.returncode == -9 and _calls(agent) == ["case 3"]
    (run,) = Journal(agent).runs()  # the retry is interrupted, the finished run still listed
    assert (run.run_id, run.status, run.done) == (doc.run_group, "interrupted", 10)
    assert [d.run_id for d in RunStore(agent).documents(doc.run_group)] == [doc.run_id]
    (agent / "kill3").unlink()
    again = _eval(agent, path, "--retry_errors", "latest")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _calls(agent) == ["case 3", "case 3"]
    (retried,) = RunStore(agent).documents(doc.run_group)
    assert retried.cases_passed == 10 and Journal(agent).runs() == []


def test_a_hung_case_times_out_and_the_run_goes_on(project: tuple[Path, Path], tmp_path: Path) -> None:
    agent, path = project
    (agent / "hang").touch()
    out = tmp_path / "r.json"
    r = _eval(agent, path, "--case_timeout", "0.5", "-o", str(out), "--no_history")
    # The run ended without waiting for the hung call: an event, where a bound of 25 s of wall
    # time failed on loaded cores (a run that waited takes 110 s, and writes `slept`).
    assert not (agent / "slept").exists()
    assert r.returncode == 1
    cases = {c["eval_id"]: c for c in json.loads(out.read_text())["eval_case_results"]}
    assert "TimeoutError: the case took longer than 0.5 s" in cases["c2"]["error_message"]
    assert sum(c["final_eval_status"] == 1 for c in cases.values()) == 9


def test_what_a_kill_leaves_behind_is_tidied(project: tuple[Path, Path]) -> None:
    agent, path = project
    assert _eval(agent, path).returncode == 0
    history = agent / ".agenteval" / "eval_history"
    (doc,) = history.glob("*.json")
    orphan = history / "orphan_run.evalset_result.json"  # written, then killed before recording
    old_id = json.loads(doc.read_text())["eval_set_result_id"]
    orphan.write_text(doc.read_text().replace(old_id, "orphan_run"))
    dead = history / ".x.evalset_result.json.999999.abc123.tmp"  # a writer killed mid-write
    dead.write_text("half a document")
    live = history / f".y.evalset_result.json.{os.getpid()}.abc123.tmp"  # one being written now
    live.write_text("being written")
    assert _eval(agent, path).returncode == 0
    assert not dead.exists() and live.exists()
    listing = CliRunner().invoke(cli, ["runs", "--root", str(agent)], env={"COLUMNS": "200"})
    assert "orphan_run" in listing.output


def test_two_processes_share_one_store(project: tuple[Path, Path]) -> None:
    agent, path = project
    procs = [subprocess.Popen([sys.executable, "-m", "agenteval", "eval", str(agent), str(path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert Journal(agent).runs() == []  # both recorded: the journal holds only unfinished runs
    listing = CliRunner().invoke(cli, ["runs", "--root", str(agent)], env={"COLUMNS": "200"})
    assert all(listing.output.count(str(r.run_group)) == 1 for r in RunStore(agent).list_runs())
    assert len({r.run_group for r in RunStore(agent).list_runs()}) == 2


def _killed(agent: Path) -> str:
    """A run killed at case 6 (cases 0-5 finished), its id."""
    (agent / "kill").touch()
    _eval(agent, agent / "dur.evalset.json")
    (agent / "kill").unlink()
    (agent / "calls.log").unlink()
    (run,) = Journal(agent).runs()
    return run.run_id


def test_a_resume_that_keeps_its_document_in_memory_reads_the_kept_rows_whole(project: tuple[Path, Path],
                                                                              tmp_path: Path) -> None:
    agent, path = project
    run_id = _killed(agent)
    out = tmp_path / "resumed.json"  # --html needs the whole run: not streamed, no digests
    resumed = _eval(agent, path, "--resume", run_id, "-o", str(out), "--html", str(tmp_path / "r.html"))
    assert resumed.returncode == 0, resumed.stderr
    assert _calls(agent) == [f"case {i}" for i in range(6, 10)]
    whole = tmp_path / "whole.json"
    assert _eval(agent, path, "-o", str(whole), "--no_history").returncode == 0
    assert _timeless(json.loads(out.read_text())) == _timeless(json.loads(whole.read_text()))


def test_one_process_owns_a_run_two_resumes_at_once(project: tuple[Path, Path]) -> None:
    agent, path = project
    run_id = _killed(agent)
    # The winner's agent holds its first case until released, so the two processes overlap however
    # slowly a loaded machine starts the second (with a fixed delay instead, the second started
    # after the first had finished, found nothing to resume and exited 0).
    (agent / "hold").touch()
    procs = [subprocess.Popen([sys.executable, "-m", "agenteval", "eval", str(agent), str(path),
                               "--resume", ref, "--parallelism", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for ref in (run_id, "latest")]
    try:
        deadline = time.monotonic() + 120
        while all(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the loser is refused (the winner is held)
    finally:
        (agent / "release").touch()
    outs = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], outs
    refusal = next(err for p, (_, err) in zip(procs, outs, strict=True) if p.returncode == 2)
    assert f"run {run_id} is owned by a live process (pid " in refusal
    assert len(refusal.strip().splitlines()) == 1
    assert sorted(_calls(agent)) == [f"case {i}" for i in range(6, 10)]  # each missing case once
    assert len(RunStore(agent).documents(run_id)) == 1  # recorded once
    assert Journal(agent).runs() == []


def test_a_run_in_progress_cannot_be_resumed(project: tuple[Path, Path]) -> None:
    agent, path = project
    # The first run's agent holds its first case until released: the run is in progress for as
    # long as the test needs, however slowly a loaded machine starts the second process.
    (agent / "hold").touch()
    first = subprocess.Popen([sys.executable, "-m", "agenteval", "eval", str(agent), str(path),
                              "--parallelism", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.monotonic() + 60
        while not _calls(agent) and time.monotonic() < deadline:
            time.sleep(0.05)
        (run,) = Journal(agent).runs()
        assert run.status == "running"
        refused = _eval(agent, path, "--resume", "latest")
        assert refused.returncode == 2 and f"run {run.run_id} is owned by a live process" in refused.stderr
    finally:
        (agent / "release").touch()
        first.communicate(timeout=120)
    assert first.returncode == 0


def test_resuming_a_finished_run_says_so_and_records_nothing(project: tuple[Path, Path]) -> None:
    agent, path = project
    assert _eval(agent, path).returncode == 0
    (doc,) = RunStore(agent).list_runs()
    mtime = doc.result_path.stat().st_mtime_ns
    (agent / "calls.log").unlink()
    for ref in (str(doc.run_group), "latest"):
        again = _eval(agent, path, "--resume", ref)
        assert again.returncode == 0, again.stderr
        assert f"run {doc.run_group} is already finished: nothing to resume; its results: " \
               f"{doc.result_path}" in again.stdout
    assert _calls(agent) == [] and RunStore(agent).list_runs() == [doc]
    assert doc.result_path.stat().st_mtime_ns == mtime


def test_resuming_a_finished_run_of_other_cases_is_refused(project: tuple[Path, Path]) -> None:
    """Its results are not those asked for: 'already finished' with the run's own exit 0 would
    pass a CI gate for cases never run."""
    agent, path = project
    assert _eval(agent, path).returncode == 0
    (agent / "calls.log").unlink()
    other = agent / "other.evalset.json"
    other.write_text(path.read_text().replace('"dur"', '"other"'))
    for extra in (["--resume", "latest"], ["--retry_errors", "latest"]):
        refused = subprocess.run([sys.executable, "-m", "agenteval", "eval", str(agent), str(other), *extra],
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "eval sets were dur, now other" in refused.stderr and "already finished" not in refused.stdout
        # what it covered was read from the run history (the journal forgets a finished run)
        history = history_db_path(agent)
        assert refused.stderr.startswith(f"error: {history}: cannot resume run "), refused.stderr
    refused = _eval(agent, path, "--resume", "latest", "--num_runs", "2")
    assert refused.returncode == 2 and "num_runs was 1, now 2" in refused.stderr, refused.stdout
    assert _calls(agent) == [] and len(RunStore(agent).list_runs()) == 1


def test_resuming_a_finished_failed_run_exits_with_its_verdict(project: tuple[Path, Path]) -> None:
    agent, path = project
    (agent / "fail").touch()
    assert _eval(agent, path).returncode == 1
    again = _eval(agent, path, "--resume", "latest")
    assert again.returncode == 1 and "already finished" in again.stdout
    assert _calls(agent).count("case 3") == 1


def _eval_killed_in(agent: Path, path: Path, target: str) -> subprocess.CompletedProcess[str]:
    """`agenteval eval` killed (SIGKILL) as it enters `target` (`module:Class.method`)."""
    module, _, attr = target.partition(":")
    cls, _, method = attr.partition(".")
    code = (f"import os, signal, sys, {module} as m\n"
            f"def die(*a, **k): os.kill(os.getpid(), signal.SIGKILL)\n"
            f"setattr(m.{cls}, {method!r}, die)\n"
            "from agenteval.cli.main import main\n"
            f"sys.exit(main(['eval', {str(agent)!r}, {str(path)!r}]))\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def _listing(agent: Path) -> str:
    return CliRunner().invoke(cli, ["runs", "--root", str(agent)], env={"COLUMNS": "250"}).output


def test_a_kill_while_the_history_is_written_leaves_the_run_resumable(project: tuple[Path, Path]) -> None:
    agent, path = project
    killed = _eval_killed_in(agent, path, "agenteval.store.db:RunStore._record")
    assert killed.returncode == -9
    (run,) = Journal(agent).runs()  # the document may be written; the run is not lost
    assert (run.status, run.done, run.total) == ("interrupted", 10, 10)
    assert "Unfinished runs" in _listing(agent) and run.run_id in _listing(agent)
    (agent / "calls.log").unlink()
    resumed = _eval(agent, path, "--resume", run.run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert _calls(agent) == []  # nothing to run again
    (doc,) = RunStore(agent).documents(run.run_id)  # listed once (the orphan document replaced)
    assert [p.name for p in (agent / ".agenteval" / "eval_history").glob("*.json")] == [doc.result_path.name]
    assert Journal(agent).runs() == [] and "Unfinished runs" not in _listing(agent)


def test_a_kill_before_the_journal_forgets_a_recorded_run(project: tuple[Path, Path]) -> None:
    agent, path = project
    killed = _eval_killed_in(agent, path, "agenteval.store.journal:Journal.forget")
    assert killed.returncode == -9
    (doc,) = RunStore(agent).list_runs()  # fully recorded
    listing = _listing(agent)
    assert listing.count(str(doc.run_group)) == 1 and "Unfinished runs" not in listing  # once, as recorded
    again = _eval(agent, path, "--resume", "latest")
    assert again.returncode == 0 and "already finished" in again.stdout
    assert Journal(agent).runs() == [] and RunStore(agent).list_runs() == [doc]


def test_the_journal_keeps_only_unfinished_runs(project: tuple[Path, Path]) -> None:
    agent, path = project
    run_id = _killed(agent)
    assert _eval(agent, path).returncode == 0  # another run, finished
    import sqlite3
    with sqlite3.connect(Journal(agent).path) as conn:
        assert conn.execute("SELECT run_id FROM journal_runs").fetchall() == [(run_id,)]
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)  # its space given back
    # (Its case runs not committed yet are read from its rows file: `store.journal_tail`.)
    assert len(Journal(agent).finished_keys(run_id)) == 6
    assert not list((agent / ".agenteval" / "journal.locks").glob("*.lock"))[1:]


def _forge_files(agent: Path, run_id: str, path: Path) -> None:
    """Makes the run's journaled record of the eval-set file name the file's present bytes."""
    import hashlib
    import sqlite3

    from agenteval.store.journal import journal_path

    conn = sqlite3.connect(journal_path(agent))
    (text,) = conn.execute("SELECT fingerprint FROM journal_runs WHERE run_id = ?", (run_id,)).fetchone()
    fingerprint = json.loads(text)
    fingerprint["files"]["dur"]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    conn.execute("UPDATE journal_runs SET fingerprint = ? WHERE run_id = ?",
                 (json.dumps(fingerprint), run_id))
    conn.commit()
    conn.close()


def test_a_resume_of_the_same_bytes_validates_only_the_cases_it_runs(project: tuple[Path, Path]) -> None:
    """The run journals the eval-set file's sha256 (with the set's digest): a resume over the
    same bytes trusts it and reads only the cases it runs. Observed by breaking a kept case
    and making the journal name the broken file: it is never validated. A file changed
    otherwise is checked whole, as before (a DataError naming the file and field)."""
    agent, path = project
    run_id = _killed(agent)
    doc = json.loads(path.read_text())
    doc["eval_cases"][0]["conversation"] = 7  # c0 finished before the kill
    path.write_text(json.dumps(doc))
    refused = _eval(agent, path, "--resume", run_id)
    assert refused.returncode == 2 and "eval_cases[0].conversation" in refused.stderr, refused.stderr
    _forge_files(agent, run_id, path)
    resumed = _eval(agent, path, "--resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert _calls(agent) == [f"case {i}" for i in range(6, 10)]


@pytest.mark.parametrize("whole", [False, True], ids=["streamed", "whole"])
def test_recording_the_run_ends_its_ownership_before_the_commands_other_outputs(
        project: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, whole: bool) -> None:
    """Once `eval` recorded the run, nothing of its journal is held while the rest of the tail
    runs (a slow trace export, say): no lock file (a kill there left it for good), no writer
    thread, no open journal file. Before, the owner's `Journal` kept them until eval's end."""
    import threading

    import agenteval.cli.run as cli_run
    from agenteval.store.verdict_copy import settle

    agent, path = project
    seen: dict[str, object] = {}
    finish = cli_run.finish

    def then_look(*args: object, **kwargs: object) -> int:
        code = finish(*args, **kwargs)  # type: ignore[arg-type]
        seen["locks"] = sorted(p.name for p in (agent / ".agenteval" / "journal.locks").glob("*.lock"))
        seen["threads"] = [t.name for t in threading.enumerate() if t.name.startswith("agenteval-journal")]
        settle()  # the checkpoint made beside a forgotten run's (its own connection, by design)
        fds = Path("/proc/self/fd")
        if fds.is_dir():
            links = []
            for fd in fds.iterdir():
                try:
                    links.append(os.readlink(fd))
                except OSError:
                    continue
            seen["open"] = [x for x in links if "journal" in x and str(agent) in x]
        return code

    monkeypatch.setattr(cli_run, "finish", then_look)
    result = CliRunner().invoke(cli, ["eval", str(agent), str(path),
                                      *(["--print_detailed_results"] if whole else [])])
    assert result.exit_code == 0, result.output
    assert seen["locks"] == [] and seen["threads"] == [], seen
    assert seen.get("open", []) == [], seen
