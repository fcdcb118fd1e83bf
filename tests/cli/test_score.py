import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from agenteval.cli.commands import warn_weak_judges
from agenteval.cli.main import cli
from agenteval.schema import EvalSetResult
from tests.conftest import PARITY
from tests.fake_server import FakeServer, chat
from tests.helpers import call, eval_set, inv


def _write(path: Path, data: object) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def sets(tmp_path: Path) -> tuple[Path, Path]:
    expected = eval_set("s", {"a": [inv("roll", "You rolled 4", [call("roll_die", sides=6)])],
                              "b": [inv("hi", "Hello there")]})
    actual = eval_set("s", {"a": [inv("roll", "You rolled a 4", [call("roll_die", sides=6)])],
                            "b": [inv("hi", "Hello there")]})
    e = _write(tmp_path / "e.evalset.json", expected.model_dump(exclude_none=True))
    a = _write(tmp_path / "a.evalset.json", actual.model_dump(exclude_none=True))
    return e, a


def test_all_pass_exit_0_and_result_document(tmp_path: Path, sets: tuple[Path, Path]) -> None:
    out = tmp_path / "out" / "result.json"
    r = CliRunner().invoke(cli, ["score", str(sets[0]), "--actual", str(sets[1]), "--output", str(out),
                                 "--print_detailed_results"])
    assert r.exit_code == 0, r.output
    assert "Eval Run Summary" in r.output and "roll_die(sides=6)" in r.output
    doc = json.loads(out.read_text())
    assert doc["eval_set_id"] == "s" and doc["eval_set_result_id"].startswith("s_")
    case = doc["eval_case_results"][0]
    assert case["final_eval_status"] == 1
    assert {m["metric_name"] for m in case["overall_eval_metric_results"]} >= {
        "tool_trajectory_avg_score", "response_match_score"}
    EvalSetResult.model_validate(doc)


def test_failure_exit_1(tmp_path: Path, sets: tuple[Path, Path]) -> None:
    cfg = _write(tmp_path / "cfg.json", {"criteria": {"response_match_score": 1.0}})
    r = CliRunner().invoke(cli, ["score", str(sets[0]), "--actual", str(sets[1]),
                                 "--config_file_path", str(cfg)])
    assert r.exit_code == 1
    assert "FAILED" in r.output


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d["eval_cases"].pop(), "no case with eval_id 'b'"),
    (lambda d: d["eval_cases"][0]["conversation"].append(d["eval_cases"][0]["conversation"][0]),
     "eval_cases[0].conversation: 2 invocations"),
    (lambda d: d["eval_cases"][0].update(eval_id="zz"), "eval_cases[0].eval_id: 'zz' is not in"),
    (lambda d: d["eval_cases"][0]["conversation"][0].pop("user_content"),
     "eval_cases[0].conversation[0].user_content: field required"),
])
def test_bad_input_exit_2_one_line_no_output(tmp_path: Path, sets: tuple[Path, Path], mutate,  # type: ignore[no-untyped-def]
                                             message: str) -> None:
    data = json.loads(sets[1].read_text())
    mutate(data)
    _write(sets[1], data)
    out = tmp_path / "result.json"
    r = CliRunner().invoke(cli, ["score", str(sets[0]), "--actual", str(sets[1]), "-o", str(out)])
    assert r.exit_code == 2
    assert message in r.output and str(sets[1]) in r.output
    assert not out.exists()


def test_missing_file_exit_2(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["score", str(tmp_path / "nope.json"), "--actual", str(tmp_path / "x.json")])
    assert r.exit_code == 2 and "file not found" in r.output


@pytest.mark.parametrize("text", ["{}", '{"resourceSpans": []}', ""])
def test_an_empty_trace_export_is_refused_as_one(tmp_path: Path, sets: tuple[Path, Path], text: str) -> None:
    # `{}` is an export of no spans (proto3's JSON leaves empty lists out), not an eval set
    # missing its eval_cases
    actual = tmp_path / "run.otlp.json"
    actual.write_text(text)
    out = tmp_path / "result.json"
    r = CliRunner().invoke(cli, ["score", str(sets[0]), "--actual", str(actual), "-o", str(out)])
    assert r.exit_code == 2, r.output
    assert f"{actual}: resourceSpans: no spans in this file: the trace export is empty" in r.output, r.output
    assert not out.exists()


def test_migrate_command(tmp_path: Path) -> None:
    new = tmp_path / "m.evalset.json"
    old = PARITY.parent / "adk" / "trip_planner_agent" / "trip_inquiry.test.json"
    session = old.parent / "initial.session.json"
    r = CliRunner().invoke(cli, ["migrate", str(old), str(new), "--initial_session_file", str(session)])
    assert r.exit_code == 0, r.output
    assert json.loads(new.read_text())["eval_cases"][0]["session_input"]["user_id"] == "test_user"


def test_console_script_starts_without_heavy_imports() -> None:
    code = ("import sys; from agenteval.cli.main import cli; "
            "print(sorted(m for m in ('pydantic', 'rich', 'rouge_score', 'nltk') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_score_imports_no_evaluation_loop_nor_agent() -> None:
    # `score`'s streamed and sharded paths run no agent: the evaluation loop, its executors and
    # the built-in agent (with its tools) are a tenth of a second of every `score`'s start, and
    # the HTTP model client (httpx, with ssl and email) another.
    assert _loaded_after("agenteval.cli.commands, agenteval.runner.sharded", [
        "agenteval.runner.evaluate", "agenteval.runner.run", "agenteval.runner.executors",
        "agenteval.agents.builtin", "agenteval.agents.loader", "agenteval.models.openai_compat",
        "httpx"]) == []


def test_score_starts_without_model_backends_screen_or_unasked_reports() -> None:
    # What a sharded `score` imports before its first chunk (the CLI, its command, the sharded
    # runner, the built-in criteria) is serial: the embedded model's module (asyncio's urllib,
    # its slots), rich's progress bar (made at the first event), the JUnit writer (xml.etree)
    # and the judge screen's compiled patterns are for runs that use them.
    assert _loaded_after("agenteval.cli.main, agenteval.cli.commands, agenteval.runner.sharded, "
                         "agenteval.criteria.builtin", [
        "agenteval.models.local", "agenteval.models.local_slots", "agenteval.models.scripted",
        "urllib.request", "rich.progress", "agenteval.reporting.junit", "agenteval.reporting.markdown",
        "xml.etree.ElementTree"]) == []
    # (The same imports first: what they would compile at import is what is looked for.)
    code = ("import agenteval.cli.main, agenteval.cli.commands, agenteval.runner.sharded, "
            "agenteval.criteria.builtin; "
            "from agenteval.criteria.judge.prompting import screen_units as su; "
            "from agenteval.lazy import LazyPattern; "
            "print([k for k, v in vars(su).items() "
            "if isinstance(v, LazyPattern) and v._compiled is not None])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


_UNUSED_BY_DETERMINISTIC = [
    "agenteval.criteria.judge.base", "agenteval.criteria.judge.response",
    "agenteval.criteria.judge.rubrics", "agenteval.criteria.judge.rubric_checks",
    "agenteval.criteria.judge.prompting.examples", "agenteval.criteria.handoffs",
    "agenteval.store.db", "agenteval.store.record", "agenteval.verdicts.paired",
    "agenteval.verdicts.sequential", "agenteval.reporting.trace", "html"]


def _score_then_modules(tmp_path: Path, sets: tuple[Path, Path], config: dict[str, object],
                        *extra: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """A console-script `score` run in a fresh interpreter with `config`; the process and which
    of `_UNUSED_BY_DETERMINISTIC` it had imported by its end (told by an exit handler)."""
    cfg = _write(tmp_path / "cfg.json", config)
    code = ("import atexit, json, sys\n"
            f"atexit.register(lambda: print(json.dumps([m for m in {_UNUSED_BY_DETERMINISTIC!r} "
            "if m in sys.modules])))\n"
            "from agenteval.cli.main import main; main(sys.argv[1:])\n")
    proc = subprocess.run([sys.executable, "-c", code, "score", str(sets[0]), "--actual", str(sets[1]),
                           "--config_file_path", str(cfg), "-o", str(tmp_path / "r.json"), *extra],
                          capture_output=True, text=True)
    return proc, json.loads(proc.stdout.rstrip().splitlines()[-1])


def test_a_deterministic_score_imports_neither_judged_criteria_nor_the_run_database(
        tmp_path: Path, sets: tuple[Path, Path]) -> None:
    # The judged criteria's modules (prompts, examples, rubric checks) and the run database
    # (with the paired statistics) are for runs that judge or record: 2-4% of `score`'s start.
    proc, loaded = _score_then_modules(tmp_path, sets, {"criteria": {"response_match_score": 0.5}})
    assert proc.returncode == 0, proc.stderr
    assert loaded == []
    # With --history the run database is there, and the run is recorded.
    proc, loaded = _score_then_modules(tmp_path, sets, {"criteria": {"response_match_score": 0.5}},
                                       "--history")
    assert proc.returncode == 0, proc.stderr
    assert "agenteval.store.db" in loaded and "Recorded run" in proc.stdout


def test_a_judged_score_in_a_fresh_interpreter(tmp_path: Path, sets: tuple[Path, Path],
                                               server: FakeServer) -> None:
    # Its criterion's module is imported where the config names it, and the judge is asked.
    server.respond = chat(lambda text: json.dumps({"verdict": "valid", "rationale": "r"}))
    proc, loaded = _score_then_modules(tmp_path, sets, {"criteria": {"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {
            "judge_model": f"openai-compat:m@{server.base_url}", "num_samples": 1}}}}, "--no_cache")
    assert proc.returncode == 0, proc.stderr
    assert "agenteval.criteria.judge.response" in loaded
    doc = json.loads((tmp_path / "r.json").read_text())
    scores = [m["score"] for case in doc["eval_case_results"]
              for m in case["overall_eval_metric_results"] if m["metric_name"] == "final_response_match_v2"]
    assert scores == [1.0, 1.0] and len(server.received) == 2


def _loaded_after(imports: str, modules: list[str]) -> list[str]:
    """Which of `modules` a fresh interpreter has loaded after `import <imports>`."""
    code = (f"import sys, json; import {imports}; "
            f"print(json.dumps([m for m in {modules!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


def test_the_runner_run_is_the_function_whatever_was_imported_first() -> None:
    # `agenteval.runner`'s names are imported when asked for; `run` is also a submodule's name.
    code = ("import agenteval.runner.run, agenteval.runner as r; from agenteval.runner import run, rescore; "
            "print(callable(run), run is r.run, run.__module__, rescore.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "agenteval.runner.run", "rescore"]


@pytest.mark.parametrize(("criteria", "code"), [({"response_match_score": 0.5}, 0),
                                                ({"response_match_score": 1.0}, 1)])
def test_console_script_exit_codes_and_output_after_fast_exit(
        tmp_path: Path, sets: tuple[Path, Path], criteria: dict[str, float], code: int) -> None:
    cfg = _write(tmp_path / "cfg.json", {"criteria": criteria})
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, "-m", "agenteval", "score", str(sets[0]), "--actual",
                           str(sets[1]), "--config_file_path", str(cfg), "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == code, proc.stderr
    assert "Eval Run Summary" in proc.stdout and "Results written to" in proc.stdout
    EvalSetResult.model_validate_json(out.read_bytes())


def test_a_streamed_score_ends_without_the_interpreter_teardown(tmp_path: Path,
                                                                sets: tuple[Path, Path]) -> None:
    # The teardown would finalize a module global's object; the exit handlers (a custom
    # metric's module may register one) still run before the process ends.
    out = tmp_path / "r.json"
    code = ("import atexit, sys\n"
            "class Torn:\n"
            "    def __del__(self): print('interpreter teardown')\n"
            "kept = Torn()\n"
            "atexit.register(print, 'exit handler')\n"
            "from agenteval.cli.main import main; main(sys.argv[1:])\n")
    proc = subprocess.run([sys.executable, "-c", code, "score", str(sets[0]), "--actual", str(sets[1]),
                           "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "Results written to" in proc.stdout and "interpreter teardown" not in proc.stdout
    assert proc.stdout.rstrip().endswith("exit handler")
    EvalSetResult.model_validate_json(out.read_bytes())


def test_console_script_bad_input_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "agenteval", "score", str(tmp_path / "nope.json"),
                           "--actual", str(tmp_path / "x.json")], capture_output=True, text=True)
    assert proc.returncode == 2 and "file not found" in proc.stderr


@pytest.mark.parametrize("which", ["expected", "actual"])
def test_a_pipe_as_an_input_is_refused_not_waited_on(tmp_path: Path, sets: tuple[Path, Path],
                                                     which: str) -> None:
    # Both are read more than once (the head, then the cases): a pipe hung or ended in a traceback.
    e, a = sets
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # no writer: opening it would wait for ever
    e, a = (fifo, a) if which == "expected" else (e, fifo)
    proc = subprocess.run([sys.executable, "-m", "agenteval", "score", str(e), "--actual", str(a)],
                          capture_output=True, text=True, timeout=60)
    where = "" if which == "expected" else "--actual: "
    assert proc.returncode == 2
    assert proc.stderr == (f"error: {fifo}: {where}is not a regular file (a pipe?): it is read more than "
                           "once; write it to a file first\n")


def test_in_process_runs_keep_nothing_for_a_fast_exit(tmp_path: Path, sets: tuple[Path, Path]) -> None:
    from agenteval.cli import teardown

    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["score", str(sets[0]), "--actual", str(sets[1]), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert not teardown._kept


def test_the_cli_note_names_the_criterion_and_the_way_out() -> None:
    console = Console(record=True, width=300, color_system=None)
    warn_weak_judges(console, ["rubric_based_tool_use_quality_v1"])
    text = console.export_text()
    assert "rubric_based_tool_use_quality_v1 is judged by the embedded model" in text
    assert "--judge_model" in text


def test_score_takes_parallelism_and_honours_repeat_gating(tmp_path: Path) -> None:
    expected = eval_set("s", {"a": [inv("roll", "4", [call("roll_die", sides=6)])]})
    e = _write(tmp_path / "e.evalset.json", expected.model_dump(exclude_none=True))
    # A result document with three runs of case "a": the middle one called the tool wrongly.
    first = tmp_path / "first.json"
    runs = eval_set("s", {"a": [inv("roll", "4", [call("roll_die", sides=6)])]})
    a = _write(tmp_path / "a.evalset.json", runs.model_dump(exclude_none=True))
    assert CliRunner().invoke(cli, ["score", str(e), "--actual", str(a), "-o", str(first)]).exit_code == 0
    doc = json.loads(first.read_text())
    case = doc["eval_case_results"][0]
    wrong = json.loads(json.dumps(case))
    wrong["run_index"] = 1
    wrong["eval_metric_result_per_invocation"][0]["actual_invocation"]["intermediate_data"] = {
        "tool_uses": [{"name": "roll_die", "args": {"sides": 20}}]}
    third = {**case, "run_index": 2}
    doc["eval_case_results"] = [case, wrong, third]
    recorded = _write(tmp_path / "recorded.json", doc)
    for gating, code in (("any_run", 0), ("all_runs", 1)):
        config = _write(tmp_path / f"{gating}.json", {"criteria": {"tool_trajectory_avg_score": 1.0},
                                                      "repeat_gating": gating})
        out = tmp_path / f"{gating}.out.json"
        r = CliRunner().invoke(cli, ["score", str(e), "--actual", str(recorded), "--config_file_path",
                                     str(config), "--parallelism", "2", "-o", str(out)])
        assert r.exit_code == code, r.output
        result = json.loads(out.read_text())
        assert result["gating"] == gating and result["run"]["gating"] == gating
        assert result["run"]["concurrency"]["cases"] == 2 and result["run"]["num_runs"] == 3
        assert result["run"]["command"] == "score" and result["run"]["actual_file"] == str(recorded)


def test_streamed_and_whole_runs_write_one_document(tmp_path: Path, sets: tuple[Path, Path]) -> None:
    """`score` writing only the document streams it (runner.streamed); asked for a report file
    too, it loads the sets whole. Both documents hold the same cases, summaries and totals."""
    docs = []
    for name, extra in (("streamed", []), ("whole", ["--html", str(tmp_path / "r.html")])):
        out = tmp_path / f"{name}.json"
        r = CliRunner().invoke(cli, ["score", str(sets[0]), "--actual", str(sets[1]), "-o", str(out),
                                     *extra], env={"COLUMNS": "160"})
        assert r.exit_code == 0, r.output
        assert "Eval Run Summary" in r.output and f"Results written to {out}" in r.output
        docs.append(json.loads(out.read_text()))
    streamed, whole = docs
    for key in ("eval_case_results", "summary", "gating", "eval_set_id"):
        assert streamed[key] == whole[key]
    assert streamed["run"]["totals"] == whole["run"]["totals"]
    assert streamed["run"]["eval_sets"] == whole["run"]["eval_sets"]


def test_a_streamed_run_goes_into_the_history_as_a_whole_one_does(tmp_path: Path, sets: tuple[Path, Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.store import RunStore

    monkeypatch.chdir(tmp_path)
    rows = {}
    for name, extra in (("streamed", []), ("whole", ["--html", str(tmp_path / "r.html")])):
        r = CliRunner().invoke(cli, ["score", str(sets[0]), "--actual", str(sets[1]), "--history", *extra])
        assert r.exit_code == 0, r.output
        assert "Recorded run" in r.output
        rows[name] = RunStore(tmp_path).list_runs()[0]
    streamed, whole = rows["streamed"], rows["whole"]
    assert streamed.run_id != whole.run_id
    for field in ("eval_set_id", "cases_total", "cases_passed", "cases_failed", "num_runs", "gating"):
        assert getattr(streamed, field) == getattr(whole, field), field
    assert streamed.result_path.is_file() and json.loads(streamed.result_path.read_text())["summary"]


def test_streamed_junit_is_the_whole_runs(tmp_path: Path, sets: tuple[Path, Path]) -> None:
    """JUnit XML written case by case (streamed `score`) holds what the in-memory report holds."""
    import re

    reports = []
    for name, extra in (("streamed", []), ("whole", ["--html", str(tmp_path / "r.html")])):
        junit = tmp_path / f"{name}.xml"
        r = CliRunner().invoke(cli, ["score", str(sets[0]), "--actual", str(sets[1]), "--junit_xml",
                                     str(junit), *extra], env={"COLUMNS": "300"})
        assert r.exit_code == 0, r.output
        assert f"Report written to {junit}" in r.output
        # ids and the timestamp differ between two runs
        reports.append(re.sub(r'(value="s_[0-9.]+"|timestamp="[^"]+")', "", junit.read_text()))
    assert reports[0] == reports[1] and reports[0].count("<testcase") == 2


def test_streamed_markdown_is_the_whole_runs(tmp_path: Path, sets: tuple[Path, Path]) -> None:
    """The Markdown summary gathered case by case (streamed `score`) is the in-memory one."""
    texts = []
    cfg = _write(tmp_path / "cfg.json", {"criteria": {"response_match_score": 0.99}})
    for name, extra in (("streamed", []), ("whole", ["--html", str(tmp_path / "r.html")])):
        md = tmp_path / f"{name}.md"
        r = CliRunner().invoke(cli, ["score", str(sets[0]), "--actual", str(sets[1]), "--markdown",
                                     str(md), "--config_file_path", str(cfg), *extra],
                               env={"COLUMNS": "300"})
        assert r.exit_code == 1, r.output  # one case fails: the summary lists it
        assert f"Report written to {md}" in r.output
        texts.append(md.read_text())
    assert texts[0] == texts[1] and "### Failing cases" in texts[0]


@pytest.mark.parametrize("streamed", [True, False])
def test_one_failed_report_never_loses_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  streamed: bool) -> None:
    # JUnit XML to a full device fails; the Markdown summary, the document and the history are
    # still written, on the streamed path as on the in-memory one (HTML makes it in-memory).
    monkeypatch.chdir(tmp_path)
    expected = PARITY / "expected.evalset.json"
    args = ["score", str(expected), "--actual", str(PARITY / "actual.evalset.json"), "--config_file_path",
            str(PARITY / "config_IN_ORDER.json"), "-o", "out.json", "--junit_xml", "/dev/full",
            "--markdown", "summary.md", "--history"]
    if not streamed:
        args += ["--html", "r.html"]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert "/dev/full: cannot be written: No space left on device" in r.output
    assert (tmp_path / "summary.md").read_text().strip()
    assert json.loads((tmp_path / "out.json").read_text())["eval_case_results"]
    assert "Recorded run" in r.output
    assert list((tmp_path / ".agenteval" / "eval_history").glob("*.evalset_result.json"))
