"""Faults inside a run stay in their case; bad output targets and a damaged history are refused
before anything runs; one failed write never loses the other outputs."""

import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agenteval.cli.main import cli
from tests.helpers import call, eval_set, inv

AGENT = '''
import datetime, sys, threading

def root_agent(text, state):
    if text == "exit":
        sys.exit(3)
    if text == "odd":
        cyclic = [1]
        cyclic.append(cyclic)
        state["lock"] = threading.Lock()
        return {"response": "odd", "tool_calls": [{"name": "f", "args": {
            "when": datetime.datetime(2024, 1, 2), "nan": float("nan"), "cyc": cyclic,
            "obj": object()}, "response": {"lock": threading.Lock()}}]}
    return {"response": "ok " + text, "tool_calls": [{"name": "f", "args": {"q": text}}]}
'''


def _project(tmp_path: Path, agent_source: str = AGENT, name: str = "my_agent") -> tuple[Path, Path]:
    agent = tmp_path / name
    agent.mkdir()
    (agent / "agent.py").write_text(agent_source)
    s = eval_set("set1", {"good": [inv("x", "ok x", [call("f", q="x")])],
                          "exit": [inv("exit", "whatever")],
                          "odd": [inv("odd", "odd")]})
    path = agent / "set1.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    return agent, path


def _eval(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["eval", *map(str, args)], env={"COLUMNS": "200"})


def test_an_agent_that_exits_or_returns_odd_values_fails_only_its_case(tmp_path: Path) -> None:
    agent, path = _project(tmp_path)
    out = tmp_path / "out.json"
    r = _eval(agent, path, "-o", out, "--html", tmp_path / "r.html")
    assert r.exit_code == 1, r.output
    doc = json.loads(out.read_text())  # written in full, every case in it
    cases = {c["eval_id"]: c for c in doc["eval_case_results"]}
    assert cases["good"]["final_eval_status"] == 1
    assert cases["exit"]["error_message"].startswith("SystemExit: the agent called sys.exit(3)")
    odd = cases["odd"]
    args = odd["eval_metric_result_per_invocation"][0]["actual_invocation"]["intermediate_data"][
        "invocation_events"][0]["content"]["parts"][0]["function_call"]["args"]
    assert args["when"] == "2024-01-02T00:00:00" and args["nan"] == "NaN" and args["cyc"] == [1, "<cycle>"]
    assert args["obj"].startswith("<unserialisable builtins.object: <object object at")
    assert odd["session_details"]["state"]["lock"].startswith("<unserialisable _thread.lock")
    assert any("nan: NaN is not a JSON number" in w for w in odd["warnings"])
    assert any("session state.lock" in w for w in odd["warnings"])
    assert (tmp_path / "r.html").is_file()
    assert len(list((agent / ".agenteval" / "eval_history").glob("*.json"))) == 1


@pytest.mark.parametrize("code", ["0", "3", "'bye'"])
def test_sys_exit_while_importing_the_agent_is_a_load_error(tmp_path: Path, code: str) -> None:
    agent, path = _project(tmp_path, f"import sys\nsys.exit({code})\n")
    r = _eval(agent, path, "--no_history")
    assert r.exit_code == 2, r.output
    assert f"importing the agent failed: it called sys.exit({code})" in r.output


def test_a_package_named_like_a_standard_module_is_the_agent_not_the_module(tmp_path: Path) -> None:
    agent, path = _project(tmp_path, AGENT, name="json")
    (agent / "__init__.py").write_text("from . import agent\n")
    r = _eval(agent, f"{path}:good", "--no_history")
    assert r.exit_code == 0, r.output
    assert json.dumps({"still": "the standard json"}) == '{"still": "the standard json"}'


@pytest.mark.parametrize(("flag", "target", "message"), [
    ("-o", "afile/out.json", "cannot be created: {tmp}/afile is not a directory"),
    ("-o", "/proc/version", "/proc/version: --output: cannot be written"),
    ("--html", "adir", "Invalid value for '--html': File 'adir' is a directory"),
    ("--junit_xml", "out.json", "is also the target of --output"),
])
def test_bad_output_targets_are_refused_before_anything_runs(tmp_path: Path, flag: str, target: str,
                                                            message: str, monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.chdir(tmp_path)
    agent, path = _project(tmp_path)
    (tmp_path / "afile").write_text("a file, not a folder")
    (tmp_path / "adir").mkdir()
    marker = tmp_path / "ran"
    (agent / "agent.py").write_text(f"open({str(marker)!r}, 'w').close()\n" + AGENT)
    extra = [] if flag == "-o" else ["-o", "out.json"]
    r = _eval(agent, path, flag, target, *extra)
    assert r.exit_code == 2, r.output
    assert message.format(tmp=tmp_path) in r.output
    assert not (tmp_path / "out.json").exists() and not (agent / ".agenteval").exists()
    assert not marker.exists()  # the agent was not even imported


def test_fifo_and_symlink_targets(tmp_path: Path) -> None:
    agent, path = _project(tmp_path)
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    r = _eval(agent, f"{path}:good", "-o", link, "--markdown", "/dev/null", "--no_history")
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and json.loads(real.read_text())["eval_set_id"] == "set1"
    assert Path("/dev/null").is_char_device()  # streamed into, never replaced


def test_a_failed_write_after_the_run_loses_nothing_else(tmp_path: Path) -> None:
    agent, path = _project(tmp_path)
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    out = tmp_path / "out.json"
    r = _eval(agent, f"{path}:good", "--html", "/dev/full", "-o", out)
    assert r.exit_code == 2, r.output
    assert "/dev/full: cannot be written: No space left on device" in r.output
    assert out.is_file() and Path("/dev/full").is_char_device()
    assert list((agent / ".agenteval" / "eval_history").glob("*.json"))  # history recorded too


def test_a_damaged_run_history_is_refused_before_the_run(tmp_path: Path) -> None:
    agent, path = _project(tmp_path)
    db = agent / ".agenteval" / "history.sqlite"
    db.parent.mkdir()
    db.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100 + b"garbage" * 500)
    r = _eval(agent, path, "-o", tmp_path / "out.json")
    assert r.exit_code == 2, r.output
    assert "history.sqlite" in r.output and not (tmp_path / "out.json").exists()
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(db).execute("SELECT 1 FROM runs").fetchall()


def test_an_unknown_judge_model_in_the_config_names_the_file_and_key(tmp_path: Path) -> None:
    agent, path = _project(tmp_path)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"criteria": {"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"judge_model": "bogus:thing"}}}}))
    r = _eval(agent, path, "--config_file_path", cfg, "--no_history")
    assert r.exit_code == 2, r.output
    assert f"{cfg}: criteria.final_response_match_v2.judge_model_options.judge_model: unknown model " \
           "'bogus:thing'" in r.output


@pytest.mark.parametrize("flag", ["--judge_model", "--escalate_judge_model"])
def test_an_unknown_judge_model_flag_is_refused_when_no_criterion_is_judged(tmp_path: Path,
                                                                          flag: str) -> None:
    agent, path = _project(tmp_path)  # the default criteria: none of them judged
    out = tmp_path / "out.json"
    r = _eval(agent, path, flag, "nope:x", "--no_history", "-o", out)
    assert r.exit_code == 2 and f"{flag}: unknown model 'nope:x'" in r.output, r.output
    assert not out.exists()


def test_standard_output_can_take_the_result_document(tmp_path: Path) -> None:
    agent, path = _project(tmp_path)
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "agenteval", "eval", str(agent), f"{path}:good",
                        "--no_history", "-o", "/dev/stdout"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    document = p.stdout[p.stdout.index("\n{") + 1:p.stdout.rindex("}") + 1]
    assert json.loads(document)["eval_set_id"] == "set1"
    assert p.stdout.index("Eval Run Summary") < p.stdout.index("\n{")  # the report comes first


def test_an_unusable_simulator_model_is_refused_even_without_scenarios(tmp_path: Path) -> None:
    agent, path = _project(tmp_path)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"criteria": {}, "user_simulator_config": {"model": "nope:x"}}))
    r = _eval(agent, path, "--config_file_path", cfg, "--no_history")
    assert r.exit_code == 2 and f"{cfg}: user_simulator_config.model: unknown model 'nope:x'" in r.output


def test_a_scenario_with_an_unknown_persona_is_refused_before_any_case_runs(tmp_path: Path) -> None:
    agent, path = _project(tmp_path)
    doc = json.loads(path.read_text())
    doc["eval_cases"].append({"eval_id": "sim", "conversation_scenario": {
        "starting_prompt": "hi", "conversation_plan": "ask once", "user_persona": "ALIEN"}})
    path.write_text(json.dumps(doc))
    out = tmp_path / "out.json"
    r = _eval(agent, path, "-o", out, "--no_history")
    assert r.exit_code == 2, r.output
    assert (f"{path}: eval_cases[3].conversation_scenario.user_persona: unknown user persona 'ALIEN'"
            in r.output.replace("\n", ""))
    assert not out.exists()  # refused when read: no case ran, nothing written


def test_custom_instructions_that_would_drop_a_scenarios_persona_are_refused(tmp_path: Path) -> None:
    # The persona was dropped unseen: the simulated user played no one, and the case passed.
    agent, path = _project(tmp_path)
    doc = json.loads(path.read_text())
    doc["eval_cases"].append({"eval_id": "sim", "conversation_scenario": {
        "starting_prompt": "hi", "conversation_plan": "ask once", "user_persona": "EXPERT"}})
    path.write_text(json.dumps(doc))
    cfg, out = tmp_path / "cfg.json", tmp_path / "out.json"
    template = "Plan: {{ conversation_plan }} So far: {{ conversation_history }} Done: {{ stop_signal }}"
    simulator = {"model": "openai:m", "custom_instructions": template}
    cfg.write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0},
                               "user_simulator_config": simulator}))
    r = CliRunner().invoke(cli, ["eval", str(agent), str(path), "--config_file_path", str(cfg), "-o",
                                 str(out), "--no_history"], env={"COLUMNS": "200", "OPENAI_API_KEY": "k"})
    assert r.exit_code == 2, r.output
    assert (f"{cfg}: user_simulator_config.custom_instructions: no {{{{ persona }}}}: case 'sim' of {path} "
            "(eval_cases[3]) names a user_persona" in r.output.replace("\n", ""))
    assert not out.exists()
