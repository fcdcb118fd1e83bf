"""`agenteval judge calibrate --certify` on labelled conversations, with a judge over HTTP: one
certificate per criterion a conversation file labels."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.criteria.judge.certificates import read_certificate
from tests.fake_server import FakeServer, Step


def _reply(label: str) -> dict[str, object]:
    return {"model": "j", "usage": {"prompt_tokens": 5, "completion_tokens": 2}, "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": json.dumps({"verdict": label, "rationale": "r"})}}]}


def test_a_conversation_file_certifies_each_question_it_labels(server: FakeServer, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    turns = [{"user": "Is order 12 shipped?", "tool_calls": [
        {"name": "get_order", "args": {"id": "12"}, "response": {"status": "shipped"}}],
        "response": "Yes, it has shipped."}, {"user": "Thanks.", "response": "You're welcome."}]
    labels = tmp_path / "conversations.json"
    labels.write_text(json.dumps([
        {"id": f"c{i}", "criterion": "multi_turn",
         "turns": [*turns, {"user": f"Bye {i}.", "response": "Bye."}],  # distinct: no cached verdicts
         "labels": {"task_success": "yes" if i else "no", "tool_use_quality": "yes"}} for i in range(2)]))
    server.steps = [Step(200, _reply("yes"))]  # the judge says yes to every question
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels), "--judge_model",
                                 f"openai-compat:j@{server.base_url}", "--num_samples", "1",
                                 "--certify", "certs", "--parallelism", "1"], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    success = read_certificate(tmp_path / "certs" / "multi_turn_task_success_v1.json")
    tools = read_certificate(tmp_path / "certs" / "multi_turn_tool_use_quality_v1.json")
    assert (success.labels, success.positives, success.agreement) == (2, 1, 0.5)
    assert (tools.labels, tools.positives, tools.agreement) == (2, 2, 1.0)
    assert len(server.received) == 4  # one question per labelled case
