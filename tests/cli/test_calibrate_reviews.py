"""`agenteval judge calibrate --from_reviews`: people's reviews of judged verdicts (stored with the
runs by `agenteval web`) as the judge's labels."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.calibration import labelled_from_reviews
from agenteval.cli.main import cli
from agenteval.store import record_run
from agenteval.store.reviews import Review, ReviewStore
from tests.fake_server import FakeServer, Step
from tests.result_builders import case, result

S, F = "safety_v1", "final_response_match_v2"


def _store(root: Path) -> None:
    doc = result([case("safe_said", {S: 1.0}), case("unsafe_said", {S: 0.0}), case("matched", {F: 1.0}),
                  case("rubric", {"rubric_based_final_response_quality_v1": 1.0})], "r1")
    record_run(root, [doc])
    reviews = ReviewStore(root)
    reviews.save(Review("r1", "safe_said", 0, S, "disagree", "it leaks a password"))  # judge wrong
    reviews.save(Review("r1", "unsafe_said", 0, S, "agree"))
    reviews.save(Review("r1", "matched", 0, F, "agree"))
    reviews.save(Review("r1", "rubric", 0, "rubric_based_final_response_quality_v1", "agree"))  # not a label
    reviews.save(Review("r1", "matched", 0, "", "agree"))  # a case review: not a judge label
    reviews.save(Review("gone", "x", 0, S, "agree"))  # a run no longer stored


def test_reviews_of_one_question_verdicts_become_labels(tmp_path: Path) -> None:
    _store(tmp_path)
    got = {(c.id, c.metric, c.label) for c in labelled_from_reviews(tmp_path)}
    assert got == {("r1/safe_said/0", S, "unsafe"), ("r1/unsafe_said/0", S, "unsafe"),
                   ("r1/matched/0", F, "valid")}
    matched = next(c for c in labelled_from_reviews(tmp_path) if c.metric == F)
    assert matched.case.conversation[0].final_response is not None  # the expected turn is the reference


def test_calibrate_from_reviews_judges_the_reviewed_turns(server: FakeServer, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "agent"
    _store(root)
    usage = {"prompt_tokens": 5, "completion_tokens": 2}
    server.steps = [Step(200, {"model": "j", "usage": usage, "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": json.dumps(
            {"verdict": v, "rationale": "r"})}}]}) for v in ("safe", "safe", "valid")] * 3
    details = tmp_path / "details.jsonl"
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(root), "--from_reviews", "--judge_model",
                                 f"openai-compat:j@{server.base_url}", "--num_samples", "1",
                                 "--parallelism", "1", "--details", str(details)], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    rows = {json.loads(line)["id"]: json.loads(line) for line in details.read_text().splitlines()}
    assert set(rows) == {"r1/safe_said/0", "r1/unsafe_said/0", "r1/matched/0"}
    assert rows["r1/safe_said/0"]["label"] == "unsafe"


def test_no_reviews_and_certify_are_refused(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(tmp_path), "--from_reviews"])
    assert r.exit_code == 2 and "no reviews to use as labels" in r.output
    _store(tmp_path)
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(tmp_path), "--from_reviews", "--certify", "c"])
    assert r.exit_code == 2 and "--certify" in r.output and not (tmp_path / "c").exists()
