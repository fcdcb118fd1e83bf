"""Which verdicts get a rationale, set per criterion (`judge_model_options.rationales`) or for a
whole run (`--judge_rationales` on `agenteval score` / `eval`): the question's setting overrides
the judge service's, reaches the reply's schema (a verdict alone ends at its label), and never
changes the label or its votes."""

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.criteria import default_registry
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.verdict import RATIONALE_TOKENS, VERDICT_TOKENS, reply_tokens
from agenteval.errors import DataError
from agenteval.models import ScriptedModel
from agenteval.runner import CaseRun, JobOptions, score_case
from agenteval.schema import EvalCase
from tests.criteria.judge.engine.test_fast_verdicts import POSITIVE, VALID, _label_reply
from tests.fake_server import FakeServer, Step
from tests.helpers import eval_set, inv

FAILING = {"valid": 0.2, "invalid": 0.8}


def _ask(model: ScriptedModel, service: str, question: str | None) -> Any:
    judge = JudgeService(lambda n: model, rationales=service)  # type: ignore[arg-type]
    return asyncio.run(judge.ask("m", "sys", "Q", VALID, 5, positive=POSITIVE,
                                 rationales=question))  # type: ignore[arg-type]


@pytest.mark.parametrize(("service", "question", "explained"), [
    ("negative", "never", False), ("never", "negative", True), ("never", None, False),
    ("negative", None, True)])
def test_the_questions_setting_overrides_the_services(service: str, question: str | None,
                                                      explained: bool) -> None:
    model = ScriptedModel(_label_reply(FAILING))
    answer = _ask(model, service, question)
    (request,) = model.requests
    assert ("anyOf" in (request.json_schema or {})) == explained
    assert request.max_tokens == (reply_tokens(RATIONALE_TOKENS) if explained else VERDICT_TOKENS)
    rationale = "the totals differ" if explained else ""
    assert {s.verdict.rationale for s in answer.samples if s.verdict and s.verdict.label == "invalid"} \
        == {rationale}


def test_never_also_ends_the_samples_of_a_judge_without_log_probabilities() -> None:
    # No log-probabilities: the samples are written; under "never" each ends at its label.
    model = ScriptedModel(['{"verdict": "invalid"}'] * 5)
    answer = _ask(model, "negative", "never")
    assert answer.readings == ["invalid"] * 3  # early stop: a sure majority of 5
    assert all("rationale" not in (r.json_schema or {})["properties"] for r in model.requests)
    assert {r.max_tokens for r in model.requests} == {VERDICT_TOKENS}


def _frm_run(rationales: str | None) -> tuple[Any, ScriptedModel]:
    options: dict[str, Any] = {"judge_model": "m", "num_samples": 5}
    if rationales is not None:
        options["rationales"] = rationales
    metric = default_registry().configure("final_response_match_v2",
                                          {"threshold": 0.5, "judge_model_options": options})
    model = ScriptedModel(_label_reply(FAILING))
    case = EvalCase(eval_id="c", conversation=[inv("Capital of France?", "Paris")])
    run = CaseRun(case, [inv("Capital of France?", "Lyon")], "s")
    result = asyncio.run(score_case(run, [metric], judge=JudgeService(lambda n: model)))
    return result, model


def test_a_criterions_rationales_option_reaches_its_questions() -> None:
    explained, _ = _frm_run(None)
    alone, model = _frm_run("never")
    (request,) = model.requests
    assert "rationale" not in json.dumps(request.json_schema)
    (a,), (b,) = explained.judge_records, alone.judge_records
    assert (a.verdict, a.label_probs) == (b.verdict, b.label_probs) == ("invalid", FAILING)
    assert a.verdicts == b.verdicts  # the same votes
    assert a.rationale == "the totals differ" and not b.rationale
    # The reason still says what was decided, without the judge's words.
    reason = " ".join(r.reason for r in alone.reasons)
    assert "invalid" in reason and "the totals differ" not in reason


def test_the_option_is_checked_where_it_is_read() -> None:
    with pytest.raises(DataError, match=r"criteria.final_response_match_v2.judge_model_options.rationales"):
        default_registry().configure("final_response_match_v2", {
            "threshold": 0.5, "judge_model_options": {"rationales": "sometimes"}})


def test_the_run_wide_setting_lies_over_every_judged_criterion() -> None:
    from agenteval.schema import EvalConfig

    config = EvalConfig.model_validate({"criteria": {
        "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"rationales": "always"}},
        "safety_v1": 0.5, "response_match_score": 0.5}})
    metrics = {m.name: m.criterion for m in JobOptions(config=config, judge_rationales="never").metrics()}
    assert metrics["final_response_match_v2"].judge_model_options.rationales == "never"  # type: ignore[attr-defined]
    assert metrics["safety_v1"].judge_model_options.rationales == "never"  # type: ignore[attr-defined]
    kept = {m.name: m.criterion for m in JobOptions(config=config).metrics()}
    assert kept["final_response_match_v2"].judge_model_options.rationales == "always"  # type: ignore[attr-defined]
    assert kept["safety_v1"].judge_model_options.rationales is None  # type: ignore[attr-defined]


def _invalid() -> Step:
    return Step(200, {"model": "m", "usage": {"prompt_tokens": 5, "completion_tokens": 2}, "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": json.dumps({"verdict": "invalid"})}}]})


@pytest.mark.parametrize(("flag", "explained"), [((), True), (("--judge_rationales", "never"), False)])
def test_score_takes_the_flag(server: FakeServer, tmp_path: Path, flag: tuple[str, ...],
                              explained: bool) -> None:
    # Over HTTP (a server without log-probabilities: written samples, each asked in the schema).
    expected = tmp_path / "e.evalset.json"
    expected.write_text(eval_set("s", {"c": [inv("capital of France?", "Paris")]}).model_dump_json(
        exclude_none=True))
    model = f"openai-compat:m@{server.base_url}"
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"criteria": {"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"judge_model": model, "num_samples": 1}}}}))
    server.steps = [_invalid()]
    r = CliRunner().invoke(cli, ["score", str(expected), "--actual", str(expected), "--config_file_path",
                                 str(config), "--no_cache", *flag])
    assert r.exit_code == 1, r.output  # the judge said invalid
    schemas = [json.dumps(body.get("response_format")) for body in server.received]
    assert schemas and all(("rationale" in s) == explained for s in schemas)


def test_a_bad_flag_value_is_refused() -> None:
    r = CliRunner().invoke(cli, ["score", "e.json", "--actual", "a.json", "--judge_rationales", "maybe"])
    assert r.exit_code == 2 and "judge_rationales" in r.output


def test_eval_takes_the_flag_into_its_run_request(monkeypatch: pytest.MonkeyPatch) -> None:
    import agenteval.cli.run as run

    seen: list[Any] = []
    monkeypatch.setattr(run, "eval_command", lambda args: seen.append(args.request) or 0)
    r = CliRunner().invoke(cli, ["eval", "agent_dir", "s.evalset.json", "--judge_rationales", "never"])
    assert r.exit_code == 0, r.output
    assert seen[0].judge_rationales == "never"
    from agenteval.runner.request import request_config, to_job

    config, source = request_config(seen[0], None)
    assert to_job(seen[0], config, source, command="api").judge_rationales == "never"


def test_the_front_ends_offer_the_settings_the_schema_takes() -> None:
    # The CLI and the pytest plugin spell them out, so that they start without pydantic.
    from typing import get_args

    import pytest as pytest_module

    from agenteval.cli.options import RATIONALES
    from agenteval.pytest_plugin import plugin
    from agenteval.schema.criterion import Rationales

    assert get_args(Rationales) == RATIONALES
    parser = pytest_module.Parser()
    plugin.pytest_addoption(parser)
    option = next(o for o in parser.getgroup("agenteval").options
                  if "--agenteval-judge-rationales" in o.names())
    assert tuple(option.attrs()["choices"]) == get_args(Rationales)
