"""`agenteval judge calibrate`: accuracy and thresholds on labelled cases, with a judge over HTTP."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.criteria.judge.labelled import load_labelled
from agenteval.schema.judge_certificates import JudgeCertificatesConfig
from tests.fake_server import FakeServer, Step

BENCH_SET = Path(__file__).resolve().parents[2] / "bench" / "judge_set"


def _reply(*labels: str) -> dict[str, object]:
    return {"model": "j", "usage": {"prompt_tokens": 5, "completion_tokens": 2}, "choices": [
        {"index": i, "finish_reason": "stop",
         "message": {"role": "assistant", "content": json.dumps({"verdict": v, "rationale": "r"})}}
        for i, v in enumerate(labels)]}


def test_the_shipped_labelled_sets_load() -> None:
    cases = load_labelled(BENCH_SET)
    assert len(cases) >= 169 and {c.metric for c in cases} >= {"safety_v1", "final_response_match_v2"}


def test_calibrate_judges_the_set_and_writes_thresholds(server: FakeServer, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the judge cache (.agenteval/ in the working directory) starts empty
    labels = tmp_path / "safety.json"
    cases = json.loads((BENCH_SET / "safety.json").read_text())[:4]
    labels.write_text(json.dumps(cases))
    # the judge: sure "safe" for the first two cases, split 3-2 "unsafe" for the others. It gives
    # no log-probabilities: the first case's first sample is the reply asked for them, the other
    # four come in the next request; after that, 5 samples per request (one case at a time).
    server.steps = [Step(200, _reply("safe"))] + [Step(200, _reply(*["safe"] * 5))] * 2 + [
        Step(200, _reply("unsafe", "unsafe", "unsafe", "safe", "safe"))] * 2
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"criteria": {"safety_v1": 0.8}}))
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels), "--judge_model",
                                 f"openai-compat:j@{server.base_url}", "--write", str(config),
                                 "--parallelism", "1"],
                           env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    assert "safety_v1" in r.output and "Thresholds written to" in r.output
    written = json.loads(config.read_text())["criteria"]["safety_v1"]
    assert written["threshold"] == 0.8 and 0 <= written["judge_model_options"]["min_confidence"] <= 1


def test_written_thresholds_carry_the_judge_and_samples_they_were_measured_with(
        server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--write wrote min_confidence alone: a later run judged with the config's own judge model
    and sample count (the defaults: another judge, 5 samples) at a threshold measured with
    others, and a certificate written beside it (measured at the shipped threshold) did not
    apply to the config written."""
    from agenteval.criteria import default_registry
    from agenteval.criteria.judge.certificates import CertificateBook, certify
    from agenteval.datasets import load_eval_config

    monkeypatch.chdir(tmp_path)
    labels = tmp_path / "safety.json"
    labels.write_text(json.dumps(json.loads((BENCH_SET / "safety.json").read_text())[:4]))
    model = f"openai-compat:j@{server.base_url}"
    config = tmp_path / "cfg.json"
    # a config judging with another model, or with other samples, is refused before any question
    for options, field in (({"judge_model": "local"}, "judge_model"), ({"num_samples": 5}, "num_samples")):
        config.write_text(json.dumps({"criteria": {"safety_v1": {"threshold": 0.8,
                                                                 "judge_model_options": options}}}))
        r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels), "--judge_model", model,
                                     "--num_samples", "3", "--write", str(config)], env={"COLUMNS": "300"})
        assert r.exit_code == 2, r.output
        assert f"{config}: criteria.safety_v1.judge_model_options.{field}: " in r.output, r.output
        assert json.loads(config.read_text())["criteria"]["safety_v1"]["judge_model_options"] == options
    # a file that is no eval config is named before anything is judged (it raised a traceback
    # once every case was judged)
    config.write_text(json.dumps({"criteria": []}))
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels), "--judge_model", model,
                                 "--write", str(config)], env={"COLUMNS": "300"})
    assert r.exit_code == 2 and f"{config}: criteria: " in r.output, r.output
    assert server.received == []
    config.write_text(json.dumps({"criteria": {"safety_v1": 0.8}}))
    server.steps = [Step(200, _reply("safe"))] + [Step(200, _reply("safe", "safe"))] + [
        Step(200, _reply(*["safe"] * 3))] + [Step(200, _reply("unsafe", "unsafe", "safe"))] * 2
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels), "--judge_model", model,
                                 "--num_samples", "3", "--write", str(config), "--certify", "certs",
                                 "--parallelism", "1"], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    options = json.loads(config.read_text())["criteria"]["safety_v1"]["judge_model_options"]
    assert options["judge_model"] == model and options["num_samples"] == 3, options
    # what a later run reads of the config written: the certificate written beside applies to it
    (metric,) = default_registry().resolve(load_eval_config(config), config, include_informational=False)
    note = certify(metric, CertificateBook.load([tmp_path / "certs"], shipped=False))
    assert note is not None and note.status != "uncalibrated", note


def test_a_bad_labelled_set_names_the_file_and_case(tmp_path: Path) -> None:
    labels = tmp_path / "safety.json"
    labels.write_text(json.dumps([{"id": "x", "label": "safe", "user_prompt": "hi"}]))
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels)])
    assert r.exit_code == 2 and f"{labels}: [0].response: field required" in r.output
    # A label its kind does not have is not read as a negative (a typo would skew the calibration).
    labels.write_text(json.dumps([{"id": "x", "label": "Safe", "user_prompt": "hi", "response": "ok"}]))
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels), "--judge_model",
                                 "openai-compat:j@http://127.0.0.1:9/v1"])
    assert r.exit_code == 2 and f"{labels}: [0].label: 'Safe' is not a label of safety: safe or unsafe" \
        in r.output, r.output


def test_nothing_to_calibrate_on_is_an_error_not_an_empty_table(tmp_path: Path) -> None:
    labels = tmp_path / "safety.json"
    labels.write_text("[]")
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels)])
    assert r.exit_code == 2 and f"{labels}: no labelled case to judge" in r.output
    (tmp_path / "empty").mkdir()  # a folder with no labelled file
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(tmp_path / "empty")])
    assert r.exit_code == 2 and "no labelled case to judge" in r.output, r.output


def test_calibrate_certify_writes_a_certificate_bound_to_the_judge_and_prompt(
        server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.criteria import default_registry
    from agenteval.criteria.judge.certificates import CertificateBook, certify, read_certificate

    monkeypatch.chdir(tmp_path)
    labels = tmp_path / "safety.json"
    labels.write_text(json.dumps(json.loads((BENCH_SET / "safety.json").read_text())[:2]))
    server.steps = [Step(200, _reply("safe"))] + [Step(200, _reply(*["safe"] * 5))] * 3
    model = f"openai-compat:j@{server.base_url}"
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels), "--judge_model", model,
                                 "--certify", ".agenteval/certificates", "--parallelism", "1"],
                           env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    cert = read_certificate(tmp_path / ".agenteval" / "certificates" / "safety_v1.json")
    assert cert.judge_identity == model and cert.labels == 2 and cert.source == "safety.json"
    assert len(cert.prompt_sha256) == 64 and len(cert.source_sha256) == 64
    printed = " ".join(r.output.split())
    assert f"Certificate .agenteval/certificates/safety_v1.json: {cert.summary()}" in printed
    # the run that uses this judge finds it; another judge does not
    book = CertificateBook.load([tmp_path / ".agenteval" / "certificates"], shipped=False)
    same = default_registry().configure("safety_v1", {"threshold": 1.0, "judge_model_options": {
        "judge_model": model}})
    note = certify(same, book, JudgeCertificatesConfig(min_labels=2))
    # it applies; both labels are "safe", so κ is undefined and the default κ floor holds it back
    assert note is not None and note.certificate == "safety_v1.json"
    assert note.status == "below_floor" and "κ n/a < min_kappa 0.4" in note.text
    other = default_registry().configure("safety_v1", 1.0)
    assert certify(other, book).status == "uncalibrated"  # type: ignore[union-attr]


def test_certify_must_name_a_folder(tmp_path: Path) -> None:
    labels = tmp_path / "safety.json"
    labels.write_text(json.dumps(json.loads((BENCH_SET / "safety.json").read_text())[:1]))
    taken = tmp_path / "file"
    taken.write_text("x")
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels), "--certify", str(taken)])
    assert r.exit_code == 2 and "--certify" in r.output and "is a file" in r.output


def test_a_judge_that_gives_no_verdict_is_said_not_a_zero_accuracy(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    labels = tmp_path / "safety.json"
    labels.write_text(json.dumps(json.loads((BENCH_SET / "safety.json").read_text())[:2]))
    config = tmp_path / "cfg.json"
    r = CliRunner().invoke(cli, ["judge", "calibrate", str(labels), "--judge_model",
                                 "openai-compat:j@http://127.0.0.1:9/v1", "--write", str(config),
                                 "--details", str(tmp_path / "d.jsonl"), "--num_samples", "1"])
    assert r.exit_code == 2, r.output
    assert "error: --judge_model openai-compat:j@http://127.0.0.1:9/v1: no labelled case got a verdict " \
           "(2 of 2): judge openai-compat:j@http://127.0.0.1:9/v1: cannot connect" in r.output
    assert "accuracy" not in r.output and not config.exists() and not (tmp_path / "d.jsonl").exists()
