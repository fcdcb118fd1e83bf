"""`agenteval trace`, and the trace in --print_detailed_results and the HTML report."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from tests.helpers import call, eval_set, inv

AGENT = '''
def root_agent(text, state):
    return {"response": "answer to " + text,
            "tool_calls": [{"name": "lookup", "args": {"q": text}, "response": {"ok": "<script>x</script>"}}]}
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    agent = tmp_path / "my_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("myset", {"good": [inv("x", "answer to x", [call("lookup", q="x")]),
                                    inv("y", "answer to y", [call("lookup", q="y")])]})
    (agent / "myset.evalset.json").write_text(s.model_dump_json(exclude_none=True))
    return agent


def _cli(*args: str | Path) -> str:
    r = CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "160"})
    assert r.exit_code in (0, 1), r.output
    return r.output


def test_trace_command_prints_the_tree(project: Path) -> None:
    _cli("eval", project, "myset")
    out = _cli("trace", "latest", "good", "--root", project)
    assert "myset / good  run 0" in out and "invocation 1" in out
    assert 'execute_tool lookup' in out and 'args {"q": "y"}' in out
    one = _cli("trace", "latest", "--root", project, "--invocation", "0")
    assert 'args {"q": "x"}' in one and 'args {"q": "y"}' not in one
    r = CliRunner().invoke(cli, ["trace", "latest", "nope", "--root", str(project)])
    assert r.exit_code == 2 and "no case 'nope' in this run (cases: good)" in r.output
    r = CliRunner().invoke(cli, ["trace", "latest", "--root", str(project), "--run_index", "7"])
    assert r.exit_code == 2 and "no case run 7 in this run (cases: good)" in r.output, r.output
    # An invocation the case does not have is an error, not a header over an empty tree.
    r = CliRunner().invoke(cli, ["trace", "latest", "good", "--root", str(project), "--invocation", "99"])
    assert r.exit_code == 2, r.output
    assert "--invocation: 99 is out of range: the case has 2 invocations (0 to 1)" in r.output
    assert "myset / good" not in r.output


def test_a_scored_result_says_it_has_no_trace(project: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "s.json"
    _cli("score", project / "myset.evalset.json", "--actual", project / "myset.evalset.json", "-o", out_file)
    assert "no trace recorded" in _cli("trace", out_file)


def test_details_and_html_show_the_trace_escaped(project: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    out = _cli("eval", project, "myset", "--print_detailed_results", "--html", report, "--no_history")
    assert "trace of invocation 0" in out and "execute_tool lookup" in out
    page = report.read_text()
    assert page.count("<details class=trace>") == 2
    assert "<script>x</script>" not in page and "&lt;script&gt;" in page


def test_no_traces(project: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "r.json"
    _cli("eval", project, "myset", "--no_traces", "-o", out_file, "--no_history")
    assert json.loads(out_file.read_text())["eval_case_results"][0]["trace"] is None


def test_an_unknown_case_names_the_closest_and_lists_a_few_not_every_case(tmp_path: Path) -> None:
    # A 50,000-case run must not answer a mistyped id with a line of 50,000 ids.
    s = eval_set("big", {f"case_{i:03d}": [inv("x", "y")] for i in range(300)})
    path = tmp_path / "big.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    _cli("score", path, "--actual", path, "-o", tmp_path / "r.json")
    r = CliRunner().invoke(cli, ["trace", str(tmp_path / "r.json"), "Case_207"], env={"COLUMNS": "160"})
    assert r.exit_code == 2, r.output
    assert "no case 'Case_207' in this run; did you mean 'case_207'," in r.output
    assert "(cases: case_000, case_001," in r.output and "... (300 cases)" in r.output
    assert "case_150" not in r.output


def test_every_case_of_a_run_is_read_a_case_at_a_time(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agenteval.cli.trace as trace
    import agenteval.store

    s = eval_set("myset", {e: [inv("x", "answer to x", [call("lookup", q="x")]),
                               inv(e, f"answer to {e}", [call("lookup", q=e)])] for e in ("a", "b", "c")})
    (project / "myset.evalset.json").write_text(s.model_dump_json(exclude_none=True))
    _cli("eval", project, "myset", "--num_runs", "2")
    asks = [(), ("--run_index", "1"), ("--invocation", "1"), ("--run_index", "1", "--invocation", "0")]
    with monkeypatch.context() as m:  # read whole, as before
        m.setattr(trace, "_runs", lambda *a: None)
        whole = [_cli("trace", "latest", "--root", project, *ask) for ask in asks]
    monkeypatch.setattr(agenteval.store, "load_run", lambda *a: pytest.fail("the run's document was loaded"))
    assert [_cli("trace", "latest", "--root", project, *ask) for ask in asks] == whole
    assert whole[0].count("myset / a  run ") == 2 and whole[1].count("  run 1") == 3
    r = CliRunner().invoke(cli, ["trace", "latest", "--root", str(project), "--invocation", "2"])
    assert r.exit_code == 2 and "the case has 2 invocations" in r.output


TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def test_an_otlp_trace_export_is_shown_by_conversation_not_refused_as_a_result(tmp_path: Path) -> None:
    # `trace` of a framework's export (or of agenteval's own, as a collector wrote it) was refused
    # "eval_set_result_id: field required", as if the file were a broken result document
    out = _cli("trace", TRACES / "openai_agents.otlp.json")
    assert "openai_agents.otlp.json / weather-paris-rome" in out and "/ weather-oslo" in out
    assert "invocation 1" in out and 'get_weather  ' in out and 'args {"city": "Paris"}' in out
    one = _cli("trace", TRACES / "adk.otlp.json", "weather-oslo", "--invocation", "0")
    assert "/ weather-oslo" in one and "weather-paris-rome" not in one and '{"city": "Oslo"}' in one
    # what carries no content still has its shape
    assert "execute_tool get_weather" in _cli("trace", TRACES / "adk_no_content.otlp.json")
    r = CliRunner().invoke(cli, ["trace", str(TRACES / "adk.otlp.json"), "weather-osl"])
    assert r.exit_code == 2, r.output
    assert "no conversation 'weather-osl'" in r.output and "did you mean 'weather-oslo'" in r.output
    r = CliRunner().invoke(cli, ["trace", str(TRACES / "adk.otlp.json"), "--run_index", "1"])
    assert r.exit_code == 2 and "--run_index" in r.output, r.output
    r = CliRunner().invoke(cli, ["trace", str(TRACES / "adk.otlp.json"), "--invocation", "2"])
    assert r.exit_code == 2 and "--invocation: 2 is out of range" in r.output, r.output
    empty = tmp_path / "empty.otlp.json"
    empty.write_text('{"resourceSpans": []}')
    r = CliRunner().invoke(cli, ["trace", str(empty)])
    assert r.exit_code == 2 and "no spans" in r.output, r.output
