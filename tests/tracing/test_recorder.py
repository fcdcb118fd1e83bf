"""Recording spans: nesting by call structure, across tasks, bounded payloads, no-op outside a run."""

import asyncio
import json

import anyio
import pytest

from agenteval.schema.trace import MAX_VALUE_CHARS, Span, Trace
from agenteval.tracing import TraceRecorder, recording, span
from agenteval.tracing.figures import union_seconds
from agenteval.tracing.recorder import as_attribute, bounded


def test_spans_nest_by_call_structure_and_across_tasks() -> None:
    recorder = TraceRecorder()

    async def step(name: str) -> None:
        with span("tool", name):
            await anyio.sleep(0.01)

    async def main() -> None:
        with recording(recorder), span("case", "case") as root, span("agent", "agent") as agent:
            assert root is not None and agent is not None
            async with anyio.create_task_group() as tg:
                tg.start_soon(step, "a")
                tg.start_soon(step, "b")

    asyncio.run(main())
    spans = {s.name: s for s in recorder.trace.spans}
    assert spans["agent"].parent_id == spans["case"].span_id
    assert spans["a"].parent_id == spans["b"].parent_id == spans["agent"].span_id
    assert all(s.end is not None and s.end >= s.start for s in spans.values())
    assert len(recorder.trace.trace_id) == 32 and len(spans["a"].span_id) == 16
    assert [s.name for s in recorder.trace.below(spans["case"].span_id)] in (
        ["agent", "a", "b"], ["agent", "b", "a"])


def test_no_recorder_no_spans() -> None:
    with span("tool", "x") as s:
        assert s is None


def test_an_exception_marks_the_span_and_propagates() -> None:
    recorder = TraceRecorder()
    with pytest.raises(ValueError), recording(recorder), span("tool", "t"):
        raise ValueError("bad input")
    (s,) = recorder.trace.spans
    assert (s.status, s.error) == ("error", "ValueError: bad input") and s.end is not None


def test_payloads_are_bounded_with_the_cut_marked() -> None:
    text, cut = bounded("x" * 10_000)
    assert cut and len(text) <= MAX_VALUE_CHARS and "characters cut]" in text
    assert text.startswith("x") and text.endswith("x")
    assert bounded("short") == ("short", False)
    value, cut = as_attribute({"args": "y" * 9000})
    assert cut and isinstance(value, str) and len(value) <= MAX_VALUE_CHARS
    assert as_attribute({"a": 1}) == (json.dumps({"a": 1}), False)
    assert as_attribute(["a", "b"]) == (["a", "b"], False) and as_attribute(3) == (3, False)
    recorder = TraceRecorder()
    with recording(recorder), span("llm", "m", {"gen_ai.input.messages": "z" * 5000}):
        pass
    assert recorder.trace.spans[0].truncated == ["gen_ai.input.messages"]


def test_union_counts_overlaps_once() -> None:
    assert union_seconds([(0, 2), (1, 3), (5, 6)]) == 4
    assert union_seconds([]) == 0


def test_invocations_come_in_turn_order() -> None:
    t = Trace(trace_id="0" * 32, spans=[
        Span(span_id="b", name="invocation 1", kind="invocation", start=1,
             attributes={"agenteval.invocation_index": 1}),
        Span(span_id="a", name="invocation 0", kind="invocation", start=2,
             attributes={"agenteval.invocation_index": 0})])
    assert [s.span_id for s in t.invocations()] == ["a", "b"]


def test_values_json_cannot_hold_are_recorded_without_failing() -> None:
    cyclic: list[object] = []
    cyclic.append(cyclic)
    value, _ = as_attribute({"c": cyclic})
    assert isinstance(value, str) and value.startswith("<not recordable as JSON: ValueError")
    value, _ = as_attribute({"o": object()})
    assert isinstance(value, str) and "<object object at" in value


def test_ids_are_not_repeated_by_an_agents_seed_or_a_fork() -> None:
    # An agent seeding the `random` module for its own reasons must not make two runs' (or two
    # cases') span ids equal, and a forked worker must not draw its parent's ids.
    import os
    import random

    from agenteval.tracing.recorder import new_span_id, new_trace_id

    random.seed(7)
    first = [new_span_id(), new_trace_id()]
    random.seed(7)
    assert [new_span_id(), new_trace_id()] != first
    assert all(int(i, 16) for i in first) and [len(i) for i in first] == [16, 32]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child writes the id it draws next, then leaves without cleanup
        os.write(write, new_span_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    os.close(read)
    assert len(child) == 16 and child != new_span_id()


def test_attributes_hold_only_text_a_document_can_hold() -> None:
    from agenteval.tracing.recorder import as_attribute

    assert as_attribute("a\ud800b") == ("a\ufffdb", False)
    assert as_attribute(["\udfff", "é"]) == (["\ufffd", "é"], False)
    assert as_attribute({"q": "x\ud83d"}) == ('{"q": "x\ufffd"}', False)


def test_a_clock_stepped_back_while_a_span_runs_never_ends_it_before_it_starts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a span ending before it starts is refused when its export is read back (otlp_json)
    import agenteval.tracing.recorder as recorder_module

    clock = iter([1000.0, 999.0])
    monkeypatch.setattr(recorder_module.time, "time", lambda: next(clock))
    recorder = TraceRecorder()
    with recording(recorder), span("tool", "t"):
        pass
    (s,) = recorder.trace.spans
    assert s.end is not None and s.end >= s.start == 1000.0
