"""`store.fast_json`: a result document's models written by orjson where it writes the bytes
pydantic writes (`store.placing.placed_model_json`), and by pydantic everywhere else."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from enum import Enum
from typing import Any

import pytest
from pydantic import BaseModel, Field, computed_field, field_serializer

from agenteval.schema import (
    AgentVerdict,
    CaseSummary,
    Content,
    DurationDetails,
    EvalCaseResult,
    EvalMetricResult,
    EvalMetricResultDetails,
    EvalMetricResultPerInvocation,
    EvalStatus,
    FunctionCall,
    FunctionResponse,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    JudgeRecord,
    MetricError,
    MetricReason,
    MetricSummary,
    Part,
    RubricScore,
    TokenUsageDetails,
    UsageMetadata,
)
from agenteval.schema.trace import Span, Trace
from agenteval.store import fast_json as pj
from agenteval.store import output
from agenteval.store.fast_json import fast_json, placed_checked, placed_json
from agenteval.store.placing import placed_model_json
from tests.helpers import call, inv


def _invocation(args: dict[str, Any], **fields: Any) -> Invocation:
    """An invocation in the current form with every kind of value: extras on open models,
    usage metadata, a response, texts that look like numbers, non-ASCII and control chars."""
    return Invocation.model_validate({
        "invocation_id": "i-1", "user_content": {"role": "user", "parts": [
            {"text": "Book 2 rooms\tfor \u00e9t\u00e9 \U0001f600 \"quoted\" \\ 1e3 times, 2e5. ok",
             "video_metadata": {"fps": 2.5}}]},
        "final_response": {"role": "model", "parts": [
            {"text": "done", "thought": False, "part_metadata": {"k": [1, None, True]}}]},
        "intermediate_data": {"invocation_events": [
            {"author": "root", "content": {"role": "model", "parts": [
                {"function_call": {"id": "adk-52e599", "name": "book", "args": args}}]},
             "usage_metadata": {"prompt_token_count": 7, "total_token_count": 9, "traffic_type": "ON_DEMAND"},
             "model_version": "m"},
            {"author": "root", "content": {"role": "user", "parts": [
                {"function_response": {"id": "adk-52e599", "name": "book",
                                       "response": {"result": {"status": "ok", "n": 0.1}}}}]}},
        ]},
        "creation_timestamp": 1764200000.125, "duration": 0.5, **fields,
    })


def _result(actual: Invocation, expected: Invocation | None = None,
            score: Any = 0.75, threshold: float | None = 0.8) -> EvalCaseResult:
    details = EvalMetricResultDetails(
        rubric_scores=[RubricScore(rubric_id="r", rationale="why", score=1.0)],
        token_usage_details=TokenUsageDetails(total_tokens=12.0, input_tokens=3.0),
        duration_details=DurationDetails(total_seconds=1.5, model_seconds=1e-7))
    metric = EvalMetricResult.model_construct(
        metric_name="response_match_score", threshold=threshold,
        criterion={"threshold": threshold, "match_type": "EXACT", "ignore_tools": []},
        custom_function_path=None, score=score, eval_status=EvalStatus.FAILED, details=details)
    return EvalCaseResult(
        eval_set_file="s", eval_set_id="s", eval_id="c", final_eval_status=EvalStatus.FAILED,
        overall_eval_metric_results=[metric],
        eval_metric_result_per_invocation=[EvalMetricResultPerInvocation(
            actual_invocation=actual, expected_invocation=expected, eval_metric_results=[metric])],
        session_id="", metric_errors=[MetricError(metric_name="m", message="no", invocation_index=0)],
        reasons=[MetricReason(metric_name="m", invocation_index=None, reason="below 0.8")],
        agent_verdicts=[AgentVerdict(metric_name="m", invocation_index=0, agent="a", passed=False,
                                     reason="missed")])


_ARGS = {"city": "Krak\u00f3w", "nights": 3, "rate": 99.5, "guests": [{"age": 7}], "none": None,
         "big": 2**63 - 1, "neg": -1.5e-7, "empty": {}, "list": []}


def test_a_scored_result_and_summary_are_written_by_orjson_with_pydantics_bytes() -> None:
    legacy = inv("q", "a", [call("t", x=1), call("u")])
    legacy.intermediate_data.intermediate_responses = [("sub", [Part(text="t")])]  # type: ignore[union-attr]
    for result in (_result(_invocation(_ARGS), _invocation({})), _result(legacy, legacy),
                   _result(_invocation(_ARGS), None, score=None, threshold=None)):
        fast = fast_json(result)
        assert fast is not None
        assert fast == placed_model_json(result) == placed_json(result)
    summary = CaseSummary(eval_id="c", runs=1, final_eval_status=EvalStatus.PASSED, metrics=[
        MetricSummary(metric_name="m", threshold=0.5, runs=1, scored_runs=1, passed_runs=1,
                      mean=0.5, std=None, eval_status=EvalStatus.PASSED, reason="ok")])
    assert fast_json(summary) == placed_model_json(summary)


@pytest.mark.parametrize("value", [0.0, -0.0, 1.0, 0.1, 1 / 3, 1e-7, 5e-324, 123456.789, 9999999999999998.0,
                                   -9.87654321e15, 1764200000.123456])
def test_floats_below_1e16_are_written_alike(value: float) -> None:
    result = _result(_invocation({**_ARGS, "v": value}, duration=abs(value)), score=value)
    assert fast_json(result) == placed_model_json(result)


@pytest.mark.parametrize("change", [
    pytest.param(lambda: _result(_invocation(_ARGS), score=float("nan")), id="NaN score"),
    pytest.param(lambda: _result(_invocation(_ARGS), score=float("-inf")), id="infinite score"),
    pytest.param(lambda: _result(_invocation(_ARGS), score=1e16), id="large score"),
    pytest.param(lambda: _result(_invocation(_ARGS), score=1), id="an int in a float field"),
    pytest.param(lambda: _result(_invocation(_ARGS, duration=float("inf"))), id="infinite duration"),
    pytest.param(lambda: _result(_invocation({"x": 2**64})), id="integer beyond 64 bits"),
    pytest.param(lambda: _result(_invocation({"x": Decimal("1.5")})), id="a Decimal"),
    pytest.param(lambda: _result(_invocation({"x": "\ud800"})), id="a lone surrogate"),
    pytest.param(lambda: _result(_invocation(_ARGS)).model_copy(update={"judge_records": [JudgeRecord(
        metric_name="m", judge_model="j", prompt="p", label_probs={"yes": 0.5})]}), id="a judge record"),
])
def test_what_orjson_would_write_otherwise_is_written_by_pydantic(change: Any) -> None:
    result = change()
    assert fast_json(result) is None
    assert _written(placed_json, result) == _written(placed_model_json, result)


def _written(write: Any, model: BaseModel) -> bytes | str:
    try:
        out: bytes = write(model)
    except ValueError as e:  # pydantic refuses a lone surrogate too
        return type(e).__name__
    return out


@pytest.mark.parametrize(("cls", "values"), [
    # a model that keeps extras, one that does not, one with float fields (the hook tells each
    # kind apart on its own way)
    (FunctionCall, {"name": "t"}), (FunctionCall, {"id": None, "name": "t", "args": {}, "more": 1}),
    (MetricReason, {"metric_name": "m", "reason": "r"}),
    (MetricReason, {"metric_name": "m", "invocation_index": None, "reason": "r", "more": 1}),
    (DurationDetails, {"total_seconds": 1.5}),
    (DurationDetails, {"total_seconds": 1.5, "model_seconds": None, "tool_seconds": None,
                       "framework_seconds": None, "more": 1}),
])
def test_a_model_missing_a_field_or_holding_another_key_is_written_by_pydantic(
        cls: type[BaseModel], values: dict[str, Any]) -> None:
    made = cls.model_construct()
    object.__setattr__(made, "__dict__", values)
    assert fast_json(made) is None
    # the same model inside a result is written by pydantic too
    whole = CaseSummary.model_construct(eval_id="c", runs=1, final_eval_status=EvalStatus.PASSED,
                                        metrics=[made])
    assert fast_json(whole) is None


def test_plain_looks_inside_json_values() -> None:
    assert pj.plain({"a": [1, 2.5, {"b": (None, "NaN", 10**30)}]})
    assert not pj.plain({"a": [1, {"b": (float("nan"),)}]})
    assert not pj.plain([float("inf")])
    assert not pj.plain({"x": [-2.5e16]})


def test_where_orjson_is_unusable_pydantic_writes_every_model(monkeypatch: pytest.MonkeyPatch) -> None:
    result = _result(_invocation(_ARGS))
    monkeypatch.setattr(pj, "_usable", False)
    assert fast_json(result) is None and placed_json(result) == placed_model_json(result)


def test_a_model_that_serialises_itself_cannot_be_named_plain() -> None:
    class Shouted(BaseModel):
        text: str

        @field_serializer("text")
        def _up(self, v: str) -> str:
            return v.upper()

    class Counted(BaseModel):
        text: str

        @computed_field  # type: ignore[prop-decorator]
        @property
        def size(self) -> int:
            return len(self.text)

    assert pj._ready() and len(pj._LAYOUTS) == len(pj.PLAIN) + len(pj.CHECKED)
    for cls in (Shouted, Counted):
        with pytest.raises(TypeError):
            pj._layout(cls)


def test_a_plain_model_written_otherwise_is_left_to_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    # A model named plain that pydantic writes otherwise (here a field with metadata) gets no
    # layout and is written by pydantic; the other models are still written by orjson.
    class Bounded(BaseModel):
        n: int = Field(ge=0)

    monkeypatch.setattr(pj, "PLAIN", (*pj.PLAIN, Bounded))
    monkeypatch.setattr(pj, "_LAYOUTS", {})
    monkeypatch.setattr(pj, "_usable", None)
    assert pj._ready() and Bounded not in pj._LAYOUTS
    assert len(pj._LAYOUTS) == len(pj.PLAIN) + len(pj.CHECKED) - 1
    assert fast_json(Bounded(n=1)) is None and placed_json(Bounded(n=1)) == placed_model_json(Bounded(n=1))
    result = _result(_invocation(_ARGS))
    assert fast_json(result) == placed_model_json(result)


def test_the_plain_models_are_the_result_and_summary_models() -> None:
    # Every model a deterministic criterion's result holds is named (else each case would
    # silently take pydantic's path).
    for cls in (EvalCaseResult, EvalMetricResult, EvalMetricResultDetails, Invocation, Content, Part,
                FunctionCall, FunctionResponse, InvocationEvent, InvocationEvents, UsageMetadata,
                CaseSummary, MetricSummary):
        assert cls in pj.PLAIN
    assert JudgeRecord not in pj.PLAIN


def test_orjson_is_used_only_when_it_writes_the_probe_values_as_pydantic_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # An orjson release that wrote floats or text otherwise would change the document's bytes.
    assert pj._ready() and pj._agrees()
    # orjson writes NaN as `null`, pydantic as `NaN` (in every release of both)
    monkeypatch.setattr(pj, "_PROBE", [[1.0, float("nan")]])
    assert not pj._agrees()
    monkeypatch.setattr(pj, "_usable", None)  # (checked again; restored after the test)
    result = _result(_invocation(_ARGS))
    assert fast_json(result) is None and pj._usable is False
    assert placed_json(result) == placed_model_json(result)


def test_a_plain_result_and_summary_are_written_by_orjson_with_every_value_checked() -> None:
    result = _result(_invocation(_ARGS), _invocation({}))
    summary = CaseSummary(eval_id="c", runs=1, final_eval_status=EvalStatus.PASSED, metrics=[])
    for model in (result, summary):
        fast = fast_json(model, checked=True)
        assert fast is not None and fast == placed_model_json(model) == placed_checked(model)


def _traced(attributes: dict[str, Any]) -> EvalCaseResult:
    spans = [Span(span_id="a" * 16, name="invocation 0", kind="invocation", start=1764200000.125,
                  end=1764200000.5, attributes={"agenteval.invocation_index": 0, "input.value": "hi"}),
             Span(span_id="b" * 16, parent_id="a" * 16, name="chat m", kind="llm", start=1764200000.2,
                  status="error", error="boom", attributes=attributes, truncated=["output.value"])]
    return _result(_invocation(_ARGS), _invocation({})).model_copy(
        update={"trace": Trace(trace_id="c" * 32, spans=spans)})


def test_a_result_with_its_trace_is_written_by_orjson_only_with_every_value_checked() -> None:
    # eval writes every case with its trace: each went to pydantic whole before.
    result = _traced({"gen_ai.usage.input_tokens": 7, "rate": 0.25, "tags": ["x", "y"], "ok": True})
    fast = fast_json(result, checked=True)
    assert fast is not None and fast == placed_model_json(result) == placed_checked(result)
    # Span attributes may come from elsewhere: unchecked, the trace is pydantic's to write.
    assert fast_json(result) is None and placed_json(result) == placed_model_json(result)
    for value in (1e17, float("nan"), float("-inf")):
        odd = _traced({"x": value})
        assert fast_json(odd, checked=True) is None
        assert _written(placed_checked, odd) == _written(placed_model_json, odd)


class _Color(str, Enum):
    RED = "red"


@pytest.mark.parametrize("change", [
    pytest.param(lambda: _result(_invocation({"x": 1e20})), id="a large float in a call's args"),
    pytest.param(lambda: _result(_invocation({"x": [{"y": -2.5e16}]})), id="a large float deep in args"),
    pytest.param(lambda: _result(_invocation({"x": float("nan")})), id="NaN in args"),
    pytest.param(lambda: _result(_invocation({"at": datetime(2026, 1, 1, tzinfo=timezone.utc)})),
                 id="a datetime in args"),
    pytest.param(lambda: _result(_invocation({"x": {1, 2}})), id="a set in args"),
    pytest.param(lambda: _result(_invocation({"x": _Color.RED})), id="an enum member in args"),
    pytest.param(lambda: _result(_invocation({"x": {1: "a"}})), id="a key that is not a string"),
    pytest.param(lambda: _result(_invocation(_ARGS, user_content={"role": "user", "parts": [
        {"text": "t", "video_metadata": {"fps": 1e17}}]})), id="a large float in an extra"),
    pytest.param(lambda: _result(_invocation(_ARGS), threshold=None).model_copy(update={
        "session_details": {"t": float("inf")}}), id="an infinity in the session details"),
])
def test_placed_checked_writes_by_pydantic_what_orjson_would_write_otherwise(change: Any) -> None:
    result = change()
    assert fast_json(result, checked=True) is None
    assert _written(placed_checked, result) == _written(placed_model_json, result)


def test_placed_checked_looks_into_a_metrics_criterion() -> None:
    result = _result(_invocation(_ARGS))
    result.overall_eval_metric_results[0].criterion = {"threshold": 1e16}
    assert fast_json(result) is not None  # not looked into: the caller's to guarantee
    assert fast_json(result, checked=True) is None
    assert placed_checked(result) == placed_model_json(result)


def test_plain_takes_json_values_only() -> None:
    assert pj.plain({"a": "x", "b": [True, None, 3, (1.5,)]})
    for value in (datetime(2026, 1, 1), {1, 2}, b"x", _Color.RED, {1: "a"}, Decimal("1"), object()):
        assert not pj.plain(value) and not pj.plain({"k": [value]})


class _PassesForText:
    """Not a string, though its `__class__` says it is one."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str


def test_plain_looks_at_a_values_type_not_at_the_class_it_claims() -> None:
    # The hooks read `type(...)`: an object passing itself off as a JSON value is no JSON value
    # (orjson would refuse it, or write what pydantic does not).
    liar = _PassesForText()
    assert liar.__class__ is str
    for value in (liar, {"k": liar}, [liar], {"k": [1, liar]}):
        assert not pj.plain(value)


def test_the_document_writes_a_scored_result_and_its_summary_by_orjson(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # One process (`score --parallelism 1`, `eval`): the document writer's and the journal's
    # JSON of a case, written by orjson with pydantic's bytes, pydantic not called.
    result = _result(_invocation(_ARGS), _invocation({}))
    summary = CaseSummary(eval_id="c", runs=1, final_eval_status=EvalStatus.PASSED, metrics=[])
    expected = placed_model_json(result), placed_model_json(summary)

    def refused(model: BaseModel) -> bytes:
        raise AssertionError(f"{type(model).__name__} written by pydantic")

    monkeypatch.setattr(pj, "placed_model_json", refused)
    assert (output.placed_json(result, keep=False), output.placed_summary(summary)) == expected
