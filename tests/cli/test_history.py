import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from agenteval.cli.main import cli
from agenteval.reporting import write_reports
from agenteval.store import RunStore, file_sha256, load_result, record_run
from tests.cli.history_support import APP, CONFIG, EXPECTED
from tests.cli.history_support import run as _run
from tests.conftest import PARITY


def test_runs_lists_newest_first(history: Path) -> None:
    r = _run("runs", "--root", history)
    assert r.exit_code == 0, r.output
    # each run by the id `eval` / `score` printed (the documents' `parity_…` ids are not listed)
    ids = [r.run_group for r in RunStore(history).list_runs()]
    assert all(ids) and "parity_" not in r.output
    assert "Runs (newest first)" in r.output and sum(r.output.count(str(i)) for i in ids) == 2
    limited = _run("runs", "list", "--limit", "1", "--root", history).output
    assert str(ids[0]) in limited and str(ids[1]) not in limited
    unlimited = _run("runs", "list", "--limit", "9" * 20, "--root", history).output
    assert sum(unlimited.count(str(i)) for i in ids) == 2
    row = RunStore(history).list_runs()[-1]
    assert row.eval_set_sha256 == file_sha256(EXPECTED) and row.cases_failed == 0
    assert row.result_path.parent == history / ".agenteval" / "eval_history"


def test_runs_in_empty_root(tmp_path: Path) -> None:
    r = _run("runs", "--root", tmp_path)
    assert r.exit_code == 0 and "No runs recorded" in r.output


@pytest.mark.parametrize("args", [
    ["runs"], ["runs", "list"], ["runs", "show", "latest"], ["runs", "flaky"], ["report", "latest"],
    ["compare", "previous", "latest"], ["trace", "latest"],
    ["eval_set", "from_trace", "latest", "--into", "x.evalset.json"]])
def test_a_missing_root_is_bad_input(tmp_path: Path, args: list[str]) -> None:
    r = _run(*args, "--root", tmp_path / "missing")
    assert r.exit_code == 2 and "'--root'" in r.output and "missing' does not exist" in r.output
    assert not (tmp_path / "missing").exists()


def test_runs_show(history: Path) -> None:
    r = _run("runs", "--root", history, "show", "latest")
    assert r.exit_code == 0, r.output
    assert "run.eval_sets[0].sha256" in r.output and "run.command" in r.output
    assert "Eval Run Summary" in r.output and "FAILED" in r.output
    r = _run("runs", "show", "nope", "--root", history)
    assert r.exit_code == 2 and "no run 'nope' in the run history" in r.output, r.output
    assert "journaled" not in r.output  # (both were searched: the history and the journal)


def test_runs_show_says_why_the_run_database_cannot_be_used(tmp_path: Path) -> None:
    (tmp_path / ".agenteval").mkdir()
    (tmp_path / ".agenteval" / "history.sqlite").write_text("not a database")
    r = _run("runs", "show", "latest", "--root", tmp_path)
    assert r.exit_code == 2 and "history.sqlite: cannot use the run database: file is not a database" \
        in r.output, r.output
    (tmp_path / ".agenteval" / "history.sqlite").unlink()
    (tmp_path / ".agenteval" / "history.sqlite").mkdir()  # not "no runs recorded"
    r = _run("runs", "--root", tmp_path)
    assert r.exit_code == 2, r.output
    assert "history.sqlite: cannot use the run database: not a file" in r.output, r.output


def test_runs_show_of_an_ambiguous_prefix_lists_the_runs_it_matches(history: Path) -> None:
    ids = [r.run_id for r in RunStore(history).list_runs()]
    prefix = next(  # their longest common prefix
        ids[0][:n] for n in range(len(ids[0]), 0, -1) if ids[1].startswith(ids[0][:n]))
    r = _run("runs", "show", prefix, "--root", history)
    assert r.exit_code == 2 and f"run {prefix!r} is ambiguous" in r.output
    # named as `runs` lists them: by the run id `eval` / `score` printed (the documents' ids,
    # which the list does not show, were named)
    listed = [str(r.run_group) for r in RunStore(history).list_runs()]
    assert all(i in r.output for i in listed) and not any(i in r.output for i in ids), r.output
    r = _run("runs", "show", listed[0][:4], "--root", history)  # a prefix of the run ids
    assert r.exit_code == 2 and all(i in r.output for i in listed), r.output


def _lines_at(width: int, *args: str | Path) -> list[str]:
    """The command's output at `width` columns (COLUMNS), lines without trailing blanks."""
    r = CliRunner().invoke(APP, [str(a) for a in args], env={"COLUMNS": str(width)})
    assert r.exit_code == 0, r.output
    lines = [line.rstrip() for line in r.output.splitlines()]
    assert max(cell_len(line) for line in lines) <= width, r.output
    return lines


def _headers(lines: list[str]) -> list[str]:
    """Each column's header of the first boxed table, its lines joined ('' when squeezed out)."""
    top = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    end = next(i for i, line in enumerate(lines) if line.startswith("┡"))
    rows = [line[1:-1].split("┃") for line in lines[top + 1:end]]
    return [" ".join(r[i].strip() for r in rows if r[i].strip()) for i in range(len(rows[0]))]


RUN_COLUMNS = ["run id", "created", "eval set", "agent", "agent model", "judge model", "runs", "passed",
               "failed", "seconds", "tokens"]


@pytest.mark.parametrize("width", [80, 100, 120, 200])
def test_runs_reads_at_any_width(history: Path, width: int) -> None:
    lines = _lines_at(width, "runs", "--root", history)
    headers = _headers(lines)
    assert all(headers) and {"run id", "created", "eval set", "passed", "failed"} <= set(headers), headers
    assert headers == [c for c in RUN_COLUMNS if c in headers]  # in their order
    for row in RunStore(history).list_runs():  # each id whole on one line: ready to copy
        assert row.run_group and any(row.run_group in line for line in lines), "\n".join(lines)
    caption = " ".join(lines[next(i for i, line in enumerate(lines) if line.startswith("└")) + 1:])
    hidden = [c for c in RUN_COLUMNS if c not in headers]
    if hidden:  # named, and where to find them
        assert f"Hidden at this width: {', '.join(hidden)}" in " ".join(caption.split())
        assert "`agenteval runs show RUN` shows every field" in " ".join(caption.split())
    else:
        assert width == 200 and not caption.strip()
    if width == 80:  # what gives way: empty columns, then the least used
        assert hidden == ["agent", "agent model", "judge model", "runs", "seconds", "tokens"]
    if width == 100:  # the agent, with a value, outlasts the empty model columns
        assert hidden == ["agent model", "judge model", "runs", "tokens"]
    assert re.search(r"│ \d{4}-\d\d-\d\d \d\d:\d\d:\d\d │", "\n".join(lines))  # to the second


@pytest.mark.parametrize("width", [40, 50, 60])
def test_runs_in_a_narrow_terminal_sheds_columns_without_failing(history: Path, width: int) -> None:
    # Past the last shed column it went on to shed "document", which a list of runs of one eval
    # set each does not show: a ValueError's traceback at 40 columns.
    lines = _lines_at(width, "runs", "--root", history)
    headers = _headers(lines)
    assert {"run id", "eval set", "passed", "failed"} <= set(headers), headers
    if width >= 60:  # "created" gone, each id whole on one line
        for row in RunStore(history).list_runs():
            assert row.run_group and any(row.run_group in line for line in lines), "\n".join(lines)


def _fields(lines: list[str]) -> dict[str, str]:
    """The field table of `runs show`: field → value, each rejoined from its wrapped lines (a
    field continues on the next line after a trailing dot; a value where the field is blank)."""
    fields: dict[str, str] = {}
    key = ""
    for line in lines[:next(i for i, line in enumerate(lines) if line.startswith("└"))]:
        if not line.startswith("│"):
            continue
        k, v = (part.strip() for part in line.split("│")[1:3])
        if k and key.endswith("."):
            fields[key + k] = fields.pop(key) + v
            key += k
        elif k:
            key, fields[k] = k, v
        else:
            fields[key] += v
    return fields


def test_runs_show_at_80_columns_wraps_field_names_at_dots_and_leaves_values_room(history: Path) -> None:
    lines = _lines_at(80, "runs", "show", "latest", "--root", history)
    fields = _fields(lines)
    key = "run.config.criteria.tool_trajectory_avg_score.threshold"
    assert fields[key] == "1.0" and key not in "".join(lines)  # wrapped, and rejoined whole
    assert any(line.startswith("│ tool_trajectory_avg_score.") for line in lines)
    sha = file_sha256(EXPECTED)
    assert fields["run.eval_sets[0].sha256"] == sha
    assert any(sha[:40] in line for line in lines)  # the values get the room, not the names
    # A path too long for its column breaks after a '/' (else a '_', '.'), never mid-word.
    first = next(i for i, line in enumerate(lines) if line.startswith("│ result_path "))
    pieces = [lines[first].split("│")[2].strip()]
    for line in lines[first + 1:]:
        if not line.startswith("│") or line.split("│")[1].strip():
            break
        pieces.append(line.split("│")[2].strip())
    assert len(pieces) > 1 and all(p[-1] in "/_.-" for p in pieces[:-1]), pieces
    # What `runs` hides at 80 columns is here.
    assert {"run.num_runs", "run.duration_seconds", "run.models.agent", "run.models.judge",
            "run.totals.agent_tokens"} <= set(fields)
    assert _headers(lines) == ["eval set", "passed", "failed"]  # the summary, then the failing cases
    # each with its criterion's own reason, as the document stores it
    assert any(line.startswith("│ case_") and "tool_trajectory_avg_score: mean" in line for line in lines)


@pytest.mark.parametrize("fmt", ["junit", "html", "markdown", "console"])
def test_report_formats_to_file(history: Path, fmt: str) -> None:
    out = history / f"report.{fmt}"
    r = _run("report", "latest", "--root", history, "--format", fmt, "-o", out)
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    if fmt == "junit":
        root = ET.fromstring(text.encode())
        assert root.get("tests") == "60" and int(root.get("failures") or 0) > 0
    elif fmt == "html":
        assert text.startswith("<!DOCTYPE html>")
    elif fmt == "markdown":
        assert text.startswith("## ❌ agenteval")
    else:
        assert "Eval Run Summary" in text


def test_report_of_a_result_file_to_stdout(history: Path) -> None:
    r = _run("report", history / "perfect.json", "--format", "markdown")
    assert r.exit_code == 0 and r.output.startswith("## ✅ agenteval: 60 of 60 case(s) passed")


def test_report_bad_input_exits_2(history: Path) -> None:
    r = _run("report", "no_such_run", "--root", history)
    assert r.exit_code == 2 and "no run 'no_such_run'" in r.output
    r = _run("report", history / "missing.json")
    assert r.exit_code == 2 and "missing.json: file not found" in r.output
    assert _run("report", "latest", "--root", history, "--format", "pdf").exit_code == 2


def test_report_and_compare_never_write_over_a_run_they_read(history: Path) -> None:
    doc = history / "recorded.json"
    before = doc.read_bytes()
    r = _run("report", doc, "--format", "markdown", "-o", doc)
    assert r.exit_code == 2 and "recorded.json: --output: is also an input of the run (RUN)" in r.output
    r = _run("compare", history / "perfect.json", doc, "--markdown", doc)
    assert r.exit_code == 2 and "recorded.json: --markdown: is also an input of the run (RUN_B)" in r.output
    assert doc.read_bytes() == before
    md = history / "cmp.md"
    r = _run("compare", "previous", "latest", "--root", history, "--markdown", md, "--junit", md)
    assert r.exit_code == 2 and "cmp.md: --junit: is also the target of --markdown" in r.output
    assert not md.exists()


def test_write_reports_and_record_run_without_paths(tmp_path: Path, scored: Path) -> None:
    doc = load_result(scored / "recorded.json")
    written = write_reports([doc], junit_xml=tmp_path / "j" / "r.xml", html=tmp_path / "r.html",
                            markdown=tmp_path / "r.md")
    assert [p.name for p in written] == ["r.xml", "r.html", "r.md"] and all(p.is_file() for p in written)
    assert write_reports([doc]) == []
    (rid,) = record_run(tmp_path, [doc], meta={"config": json.loads(CONFIG.read_text())})
    saved = RunStore(tmp_path).get(rid)
    assert saved.eval_set_result_id == doc.eval_set_result_id
    assert RunStore(tmp_path).details(rid)["config"] == json.loads(CONFIG.read_text())


# Active once cli/main.py registers the report flags (see cli/reports.py); skipped before.
WIRED = "junit_xml" in {p.name for p in cli.commands["score"].params}
wired = pytest.mark.skipif(not WIRED, reason="report flags not registered in cli/main.py yet")
AGENT = '''
def root_agent(text, state):
    return {"response": "answer to " + text,
            "tool_calls": [{"name": "lookup", "args": {"q": text}, "response": {"ok": True}}]}
'''


@wired
def test_score_writes_reports_and_records_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["score", str(EXPECTED), "--actual", str(PARITY / "actual.evalset.json"),
                                 "--config_file_path", str(CONFIG), "--junit_xml", "out/j.xml",
                                 "--html", "r.html", "--markdown", "s.md", "--history"])
    assert r.exit_code == 1, r.output
    assert ET.parse(tmp_path / "out" / "j.xml").getroot().get("tests") == "60"
    assert (tmp_path / "r.html").is_file() and (tmp_path / "s.md").is_file()
    (row,) = RunStore(tmp_path).list_runs()
    assert row.eval_set_sha256 == file_sha256(EXPECTED) and row.result_path.is_file()
    details = RunStore(tmp_path).details("latest")
    assert details["command"] == "score" and details["config"]["criteria"]
    assert CliRunner().invoke(cli, ["runs"], env={"COLUMNS": "300"}).exit_code == 0


@wired
def test_eval_records_the_run_beside_the_agent(tmp_path: Path) -> None:
    from tests.helpers import call, eval_set, inv

    agent = tmp_path / "my_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("myset", {"good": [inv("x", "answer to x", [call("lookup", q="x")])]})
    (agent / "myset.evalset.json").write_text(s.model_dump_json(exclude_none=True))
    r = CliRunner().invoke(cli, ["eval", str(agent), "myset", "--num_runs", "2",
                                 "--junit_xml", str(tmp_path / "j.xml")])
    assert r.exit_code == 0, r.output
    assert ET.parse(tmp_path / "j.xml").getroot().get("tests") == "1"
    (row,) = RunStore(agent).list_runs()
    assert (row.agent, row.num_runs, row.cases_passed) == ("my_agent", 2, 1)
    assert row.eval_set_sha256 == file_sha256(agent / "myset.evalset.json")
    assert row.duration_seconds is not None and row.duration_seconds > 0


    # Run beside the agent's folder, the history commands find no store there: they say where
    for args in (["runs"], ["runs", "show", "latest"], ["report", "latest"], ["trace", "latest"],
                 ["compare", "previous", "latest"]):
        r = _run(*args, "--root", tmp_path)
        assert r.exit_code == (0 if args == ["runs"] else 2), r.output
        assert "`eval` records an agent's runs under its folder: give --root my_agent" in \
            " ".join(r.output.split()), (args, r.output)
    fresh = tmp_path / "fresh_agent"
    fresh.mkdir()
    (fresh / "agent.py").write_text(AGENT)
    r = _run("compare", "previous", "latest", "--root", fresh)  # --root given: no "give --root"
    assert r.exit_code == 2 and "give --root" not in r.output, r.output
    said = " ".join(r.output.split())
    assert f"no run of the agent in {fresh} is recorded yet: `agenteval eval {fresh} EVAL_SET`" in said
    r = _run("runs", "show", "nope", "--root", agent)  # the history and the journal both searched
    assert r.exit_code == 2 and "no run 'nope' in the run history or the journal of unfinished" in r.output
    assert "journaled" not in r.output, r.output  # it said "journal.sqlite: no journaled run 'nope'"


def test_the_run_id_eval_prints_names_the_run(tmp_path: Path) -> None:
    from tests.helpers import eval_set, inv

    agent = tmp_path / "my_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    for name in ("one", "two"):
        s = eval_set(name, {"good": [inv("x", "answer to x")]})
        (agent / f"{name}.evalset.json").write_text(s.model_dump_json(exclude_none=True))
    r = CliRunner().invoke(cli, ["eval", str(agent), "one"])
    run_id = re.findall(r"Recorded run (\S+) in", r.output)[0]
    for command in (["report", run_id], ["report", run_id[:12]], ["runs", "show", run_id], ["trace", run_id]):
        shown = _run(*command, "--root", agent)
        assert shown.exit_code == 0, (command, shown.output)
    # Each path and id on a line of its own, whole, however narrow the console (a CI log's 80
    # columns cut `History: <path>` in the middle of the file name).
    history = re.findall(r"^History: (.+)$", r.output, re.M)
    assert len(history) == 1 and Path(history[0]).is_file(), r.output
    twice = CliRunner().invoke(cli, ["eval", str(agent), "one", "two"])
    both = re.findall(r"Recorded run (\S+) in", twice.output)[0]
    # A run of two eval sets has two documents: what `eval` printed names them both (it was
    # "ambiguous" to `report` and `runs show`).
    docs = [r.run_id for r in RunStore(agent).documents(both)]
    shown = _run("report", both, "--root", agent, "--format", "markdown")
    assert shown.exit_code == 0, shown.output
    assert "| one | 1 | 0 | 1 |" in shown.output and "| two | 1 | 0 | 1 |" in shown.output, shown.output
    for ref in (both, both[:17]):
        shown = _run("runs", "show", ref, "--root", agent)
        assert shown.exit_code == 0 and all(f"Run {d}" in shown.output for d in docs), shown.output
    shown = _run("compare", both, run_id, "--root", agent)  # one document each side: it says so
    assert shown.exit_code == 2, shown.output
    assert f"run {both!r} holds 2 eval sets, a document each: " in shown.output, shown.output
    # `runs` lists a run by the id `eval` printed (it listed the documents' ids, which a user
    # could not match with it), and the documents of the run of two eval sets beside it
    listed = _run("runs", "--root", agent)
    assert listed.exit_code == 0 and "document" in listed.output, listed.output
    lines = [line for line in listed.output.splitlines() if both in line]
    assert len(lines) == 2 and sorted(d for d in docs for line in lines if d in line) == sorted(docs), \
        listed.output
    assert any(run_id in line and both not in line for line in listed.output.splitlines()), listed.output
    # `--limit 1` lists one of its two documents: its run id alone names neither, so the
    # document column is there too (it went missing: the list held the run once).
    limited = _run("runs", "list", "--limit", "1", "--root", agent)
    assert limited.exit_code == 0 and "document" in limited.output, limited.output
    assert any(d in limited.output for d in docs), limited.output


def test_report_to_the_console_reads_the_run_a_case_at_a_time(history: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.errors import DataError
    from agenteval.reporting import console
    from agenteval.store import outcome_stream

    streamed = _run("report", "latest", "--root", history)
    assert streamed.exit_code == 0, streamed.output
    # Past TABLE_CASES case runs (60 here), only those that did not pass, as `eval` prints a run
    said = " ".join(streamed.output.split())
    assert "60 case runs; showing" in said and "that did not pass (all are in the result document; " \
        "--format html or junit lists every one)" in said, said  # (report has no --print_detailed_results)
    monkeypatch.setattr(console, "TABLE_CASES", 100)
    streamed = _run("report", "latest", "--root", history)

    def unreadable(path: Path) -> None:
        raise DataError(path, "", "read whole")

    monkeypatch.setattr(outcome_stream, "outcome_stream", unreadable)
    whole = _run("report", "latest", "--root", history)  # the document loaded whole, as before
    assert whole.exit_code == 0 and streamed.output == whole.output, (streamed.output, whole.output)


def test_html_report_reads_the_run_a_case_at_a_time_and_writes_what_it_wrote_whole(
        history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.errors import DataError
    from agenteval.store import outcome_stream

    calls: list[Path] = []
    real = outcome_stream.outcome_stream

    def counted(path: Path) -> object:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(outcome_stream, "outcome_stream", counted)
    to_file = _run("report", "latest", "--root", history, "--format", "html", "-o", history / "s.html")
    to_stdout = _run("report", "latest", "--root", history, "--format", "html")
    assert to_file.exit_code == 0 and to_stdout.exit_code == 0, to_file.output + to_stdout.output
    assert len(calls) == 4 and len(set(calls)) == 1  # two passes each, over the one document

    def unreadable(path: Path) -> None:
        raise DataError(path, "", "read whole")

    monkeypatch.setattr(outcome_stream, "outcome_stream", unreadable)
    whole = _run("report", "latest", "--root", history, "--format", "html", "-o", history / "w.html")
    assert whole.exit_code == 0, whole.output
    text = (history / "w.html").read_text(encoding="utf-8")
    assert "FAILED" in text and "PASSED" in text
    assert (history / "s.html").read_text(encoding="utf-8") == text == to_stdout.output


@pytest.mark.parametrize("fmt", ["console", "markdown", "junit"])
def test_report_of_a_missing_file_or_a_directory_is_bad_input(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "dir.json").mkdir()
    for ref, message in (("missing.json", "file not found"), ("dir.json", "is a directory")):
        out = ["-o", tmp_path / "r.xml"] if fmt == "junit" else []
        r = _run("report", tmp_path / ref, "--format", fmt, *out)
        assert r.exit_code == 2 and f"{ref}: {message}" in r.output, r.output


def test_runs_show_and_the_web_give_one_reason_for_a_case_the_agent_failed(tmp_path: Path) -> None:
    from agenteval.reporting.outcome import AGENT_FAILED, NOT_GATED
    from agenteval.schema import MetricReason
    from agenteval.store import save_result
    from agenteval.web.history import StoredRun
    from agenteval.web.views import run_view
    from tests.result_builders import case, result

    low = case("low", {"m": 0.2})
    low.reasons = [MetricReason(metric_name="m", reason="ROUGE-1 F 0.2 < threshold 0.5 (precision 0.2)")]
    doc = result([case("crashed", {}, error="agent exploded"), case("ok", {"m": 1.0}),
                  case("ungated", {}), low])  # no criterion at all: not evaluated
    store = RunStore(tmp_path)
    store.record(doc, save_result(tmp_path, doc))
    r = _run("runs", "show", "latest", "--root", tmp_path)
    assert r.exit_code == 0, r.output
    # What the run stored, as `report --format markdown` says it: the agent's error itself (it
    # said "the agent failed (its error is kept with the case's runs)") and the criterion's own
    # reason (it said "score 0.2 < threshold 0.5")
    assert "inference failed: agent exploded" in r.output and NOT_GATED in r.output, r.output
    assert "m: ROUGE-1 F 0.2 < threshold 0.5 (precision 0.2)" in r.output, r.output
    report = _run("report", "latest", "--root", tmp_path, "--format", "markdown").output
    assert "inference failed: agent exploded" in report and "ROUGE-1 F 0.2 &lt; threshold 0.5" in report
    # the document gone: the database's words
    save_result(tmp_path, doc).unlink()
    r = _run("runs", "show", "latest", "--root", tmp_path)
    assert r.exit_code == 0 and AGENT_FAILED in r.output and NOT_GATED in r.output, r.output
    # counted as Markdown and JUnit count them: 1 passed, 1 failed, 1 not evaluated (it said 2 failed)
    head = next(line for line in r.output.splitlines() if "passed" in line and "failed" in line)
    assert "not evaluated" in head, r.output
    assert re.search(r"│ s\s+│\s+1 │\s+2 │\s+1 │", r.output), r.output
    assert "inference failed or no gating criterion" not in r.output
    row = store.resolve("latest")
    ref = row.run_id
    view = run_view(StoredRun(None, tmp_path, row), store.summary(ref, not_passed_only=True),
                    store.counts(ref), store.criteria(ref), store.header(ref))
    assert {c.eval_id: c.problems for c in view.cases}["ungated"] == [NOT_GATED]
    assert {c.eval_id: c.problems for c in view.cases}["crashed"] == [AGENT_FAILED]


def test_runs_delete_asks_then_deletes_the_run_and_says_what_went(history: Path) -> None:
    latest = RunStore(history).resolve("latest")
    run = latest.run_group or latest.run_id
    r = CliRunner().invoke(APP, ["runs", "delete", "latest", "--root", str(history)], input="n\n")
    assert r.exit_code == 1 and "Nothing deleted" in r.output
    # no answer at all (no terminal, as in CI): bad input, not a click "Aborted!" with exit 1
    r = CliRunner().invoke(APP, ["runs", "delete", "latest", "--root", str(history)], input="")
    assert r.exit_code == 2 and "Pass --yes" in r.output and "Aborted" not in r.output
    assert f"Delete run {run}: parity ({latest.run_id}, 60 cases), and its reviews?" in r.output
    assert RunStore(history).resolve("latest").run_id == latest.run_id
    r = _run("runs", "delete", latest.run_id, "--root", history, "--yes")
    assert r.exit_code == 0, r.output
    assert f"Deleted run {run}: 1 document(s), 0 review(s)" in r.output
    assert not latest.result_path.exists()
    assert [row.run_id for row in RunStore(history).list_runs()] != [] and \
        latest.run_id not in [row.run_id for row in RunStore(history).list_runs()]
    r = _run("runs", "delete", latest.run_id, "--root", history, "--yes")
    assert r.exit_code == 2 and f"no run {latest.run_id!r}" in r.output


def test_runs_lists_not_evaluated_cases_apart_from_failed_ones(tmp_path: Path) -> None:
    from agenteval.store import save_result
    from tests.result_builders import case, result

    doc = result([case("crashed", {}, error="agent exploded"), case("ok", {"m": 1.0}),
                  case("ungated", {}), case("ungated too", {})])  # no criterion: not evaluated
    RunStore(tmp_path).record(doc, save_result(tmp_path, doc))
    r = _run("runs", "--root", tmp_path)
    assert r.exit_code == 0, r.output
    # 1 passed, 1 failed, 2 not evaluated: the list said "1 passed, 1 failed" of 4 cases
    head = next(line for line in r.output.splitlines() if "passed" in line)
    assert re.search(r"passed\s+┃\s+failed\s+┃\s+not evaluated", head), r.output
    assert re.search(r"│\s+1 │\s+1 │\s+2 │", r.output), r.output
    assert RunStore(tmp_path).resolve("latest").cases_not_evaluated == 2


def test_a_report_is_never_written_over_the_stored_document_it_reads(history: Path) -> None:
    """`report latest -o <the run's document>` wrote the Markdown over the run's own result
    document (exit 0: the run was lost); so did compare's --markdown / --junit. Refused, exit 2,
    nothing written, as `eval` refuses an output naming one of its inputs."""
    latest = RunStore(history).resolve("latest").result_path
    before = latest.read_bytes()
    for args in (["report", "latest", "--format", "markdown", "-o", latest],
                 ["compare", "previous", "latest", "--markdown", latest],
                 ["compare", "previous", "latest", "--junit", latest]):
        r = _run(*args, "--root", history)
        assert r.exit_code == 2, (args, r.output)
        assert "is also an input of the run" in r.output and "document" in r.output, r.output
        assert latest.read_bytes() == before
    elsewhere = history / "r.md"  # any other file is written as before
    assert _run("report", "latest", "--format", "markdown", "-o", elsewhere, "--root", history).exit_code == 0
    assert elsewhere.read_text().startswith("## ")
