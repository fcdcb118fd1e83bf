import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from tests.helpers import call, eval_set, inv

AGENT = '''
def root_agent(text, state):
    if text == "boom":
        raise RuntimeError("agent exploded")
    calls = [{"name": "lookup", "args": {"q": text}, "response": {"ok": True}}]
    return {"response": "answer to " + text, "tool_calls": calls}
'''


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "my_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("myset", {
        "good": [inv("x", "answer to x", [call("lookup", q="x")])],
        "boom": [inv("boom", "whatever")],
    })
    path = agent / "myset.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    (agent / "test_config.json").write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0,
                                                                     "response_match_score": 0.9}}))
    return agent, path


def test_eval_selected_case_passes_and_is_saved(project: tuple[Path, Path], tmp_path: Path) -> None:
    agent, path = project
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["eval", str(agent), f"{path}:good", "--output", str(out), "--num_runs", "2"])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert [c["eval_id"] for c in doc["eval_case_results"]] == ["good", "good"]
    assert [c["run_index"] for c in doc["eval_case_results"]] == [0, 1]
    history = list((agent / ".agenteval" / "eval_history").glob("*.evalset_result.json"))
    assert len(history) == 1 and history[0].name.startswith("my_agent_myset_")


def test_eval_by_set_id_with_a_failing_case_exits_1(project: tuple[Path, Path]) -> None:
    agent, _ = project
    r = CliRunner().invoke(cli, ["eval", str(agent), "myset", "--no_history", "--print_detailed_results"])
    assert r.exit_code == 1
    assert "RuntimeError: agent exploded" in r.output


@pytest.mark.parametrize(("args", "message"), [
    (["{path}:nope"], "no case with eval_id 'nope'"),
    (["{path}:"], "no case ids after ':'"),  # not the whole set
    (["{path}:,"], "no case ids after ':'"),
    (["{path}", "--num_runs", "99999999999999999999"], "not in the range 1<=x<=1000000"),  # not a traceback
    (["{path}", "--until_decided", "--max_runs", "1000001"], "not in the range 1<=x<=1000000"),
    (["{path}", "--otlp_endpoint", "notaurl"], "'notaurl': expected an http:// or https:// URL"),
    # An option that applies only with another is not silently ignored without it.
    (["{path}", "--max_runs", "3"], "--max_runs applies only with --until_decided"),
    (["{path}", "--decide_rate", "0.7"], "--decide_rate applies only with --until_decided"),
    (["{path}", "--replay_then", "live"], "--replay_then applies only with --replay"),
    (["{path}", "--mock_tools", "live", "--mock_tools_strict"],
     "--mock_tools_strict applies only with --mock_tools expected"),
    (["missing.evalset.json"], "file not found"),
    ([""], "error: '': file not found"),  # named, though empty
    (["{path}", "--agent_model", "local"], "--agent_model applies to agenteval Agent agents only"),
])
def test_eval_bad_input_exits_2(project: tuple[Path, Path], args: list[str], message: str) -> None:
    agent, path = project
    r = CliRunner().invoke(cli, ["eval", str(agent), *[a.format(path=path) for a in args], "--no_history"])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert not (agent / ".agenteval").exists()


def test_eval_missing_agent_exits_2(tmp_path: Path, project: tuple[Path, Path]) -> None:
    r = CliRunner().invoke(cli, ["eval", str(tmp_path / "nowhere"), str(project[1])])
    assert r.exit_code == 2 and "nowhere: does not exist" in r.output


def test_eval_unknown_model_name_exits_2(project: tuple[Path, Path]) -> None:
    from tests.conftest import REPO

    example = REPO / "examples" / "hello_world"
    r = CliRunner().invoke(cli, ["eval", str(example), str(example / "hello_world.evalset.json"),
                                 "--agent_model", "bogus:thing", "--no_history"])
    assert r.exit_code == 2 and "bogus:thing" in r.output


@pytest.mark.parametrize("option", ["--output", "--markdown", "--junit_xml", "--html"])
def test_an_output_naming_the_agents_own_file_is_refused(project: tuple[Path, Path], option: str) -> None:
    # AGENT_PATH is a folder: its agent.py (or a package's __init__.py) is what the run imports,
    # and a report written over it destroyed the agent's source.
    agent, path = project
    source = (agent / "agent.py").read_bytes()
    (agent / "__init__.py").write_text("from .agent import root_agent\n")
    for name in ("agent.py", "__init__.py"):
        r = CliRunner().invoke(cli, ["eval", str(agent), str(path), option, str(agent / name),
                                     "--no_history"])
        assert r.exit_code == 2, r.output
        assert f"{name}: {option}: is also an input of the run (the agent" in r.output
    assert (agent / "agent.py").read_bytes() == source


def test_recorded_run_is_rescored_without_the_agent(project: tuple[Path, Path], tmp_path: Path) -> None:
    agent, path = project
    out = tmp_path / "r.json"
    CliRunner().invoke(cli, ["eval", str(agent), f"{path}:good", "--output", str(out), "--no_history",
                             "--num_runs", "2"])
    (agent / "agent.py").write_text("raise SystemExit('the agent must not run')\n")
    rescored = tmp_path / "re.json"
    r = CliRunner().invoke(cli, ["score", str(path), "--actual", str(out), "-o", str(rescored)])
    # Case "boom" was not run, so it is missing from the recorded run.
    assert r.exit_code == 0, r.output
    doc = json.loads(rescored.read_text())
    assert [(c["eval_id"], c["run_index"]) for c in doc["eval_case_results"]] == [("good", 0), ("good", 1)]


def test_several_eval_sets_share_one_run_id_in_documents_and_history(project: tuple[Path, Path],
                                                                      tmp_path: Path) -> None:
    agent, path = project
    other = eval_set("team/other", {"x": [inv("x", "answer to x", [call("lookup", q="x")])]})
    other_path = agent / "other.evalset.json"
    other_path.write_text(other.model_dump_json(exclude_none=True))
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["eval", str(agent), f"{path}:good", str(other_path), "--output", str(out),
                                 "--parallelism", "3", "--model_parallelism", "local=1"])
    assert r.exit_code == 0, r.output
    docs = [json.loads((tmp_path / f"r.{name}.json").read_text()) for name in ("myset", "team_other")]
    headers = [d["run"] for d in docs]
    assert headers[0] == headers[1] and headers[0]["command"] == "eval"
    assert [e["eval_set_id"] for e in headers[0]["eval_sets"]] == ["myset", "team/other"]
    assert headers[0]["concurrency"] == {"cases": 3, "model_calls": {"local": 1}}
    assert headers[0]["agent"] == {"name": "my_agent", "path": str(agent), "kind": "callable"}
    from agenteval.store import RunStore

    store = RunStore(agent)
    group = {r.run_group for r in store.list_runs()}
    assert group == {headers[0]["run_id"]} and len(store.documents(headers[0]["run_id"])) == 2
    shown = CliRunner().invoke(cli, ["runs", "--root", str(agent), "show", "latest"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert headers[0]["run_id"] in shown.output and "run.agent.kind" in shown.output
    assert "Other eval sets of run" in shown.output


@pytest.mark.parametrize("value", ["local", "local=0", "=3", "nope=2"])
def test_bad_model_parallelism_exits_2_before_anything_runs(project: tuple[Path, Path], value: str) -> None:
    agent, path = project
    r = CliRunner().invoke(cli, ["eval", str(agent), str(path), "--model_parallelism", value])
    assert r.exit_code == 2, r.output
    assert not (agent / ".agenteval").exists()


@pytest.fixture
def refusing_collector() -> Iterator[str]:
    """An OTLP/HTTP endpoint that refuses every batch at once (404: the exporter does not retry)."""
    class Refuse(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("selected", "code"), [(":good", 0), ("", 1)])
def test_a_failed_export_of_traces_leaves_the_runs_exit_code(
        project: tuple[Path, Path], refusing_collector: str, selected: str, code: int) -> None:
    """The results are kept and the exit code is the run's outcome; the export's failure is a
    warning line naming the endpoint."""
    agent, path = project
    args = ["eval", str(agent), f"{path}{selected}", "--otlp_endpoint", refusing_collector]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == code, r.output
    assert f"warning: traces not exported: {refusing_collector}/v1/traces" in r.stderr, r.stderr
    assert list((agent / ".agenteval" / "eval_history").glob("*.evalset_result.json"))
