"""Trace files of any shape: 100,000 spans under one parent or a chain 100,000 parents deep score
as the 24-span trace they extend does (in O(spans), never recursing); parent ids that form a
cycle, or a span id used twice, are refused naming the file and the span; a parent id that names
no span is tolerated (the span is a root). No test here times anything: a quadratic or recursive
reading of 100,000 spans shows as a RecursionError or as the suite's own time, not as a bound
that a loaded machine can miss."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.reporting.trace import MAX_CHILDREN, MAX_DEPTH, trace_html, trace_tree
from agenteval.schema.trace import Span, Trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
EXPECTED = FIXTURES / "expected.evalset.json"
AGENT = "ba6d1683ab388fbd"  # weather_agent of the first turn of weather-paris-rome
EXTRA = 100_000


def _spans(d: dict[str, Any]) -> list[dict[str, Any]]:
    return d["resourceSpans"][0]["scopeSpans"][0]["spans"]  # type: ignore[no-any-return]


def _extended(shape: str) -> dict[str, Any]:
    """The OpenAI Agents fixture with EXTRA plain spans under one span: side by side ("wide")
    or each the parent of the next ("deep")."""
    data = json.loads((FIXTURES / "openai_agents.otlp.json").read_text())
    spans = _spans(data)
    agent = next(s for s in spans if s["spanId"] == AGENT)
    t0, parent = int(agent["startTimeUnixNano"]), AGENT
    for i in range(EXTRA):
        span_id = f"{i + 1:016x}"
        spans.append({"traceId": agent["traceId"], "spanId": span_id, "parentSpanId": parent,
                      "name": f"step {i}", "kind": 1, "startTimeUnixNano": str(t0 + 1 + i),
                      "endTimeUnixNano": str(t0 + 2 + i), "status": {},
                      "attributes": [{"key": "openinference.span.kind",
                                      "value": {"stringValue": "CHAIN"}}]})
        if shape == "deep":
            parent = span_id
    return data


def _score(tmp_path: Path, data: dict[str, Any], *extra: str) -> tuple[Any, dict[str, Any]]:
    path = tmp_path / "t.otlp.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["score", str(EXPECTED), "--actual", str(path), "-o", str(out), *extra],
                           env={"COLUMNS": "400"})  # the deepest lines shown, unwrapped
    return r, (json.loads(out.read_text()) if out.exists() else {})


def _metrics(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["eval_id"]: {m["metric_name"]: m["score"] for m in c["overall_eval_metric_results"]}
            for c in doc["eval_case_results"]}


Scored = tuple[Any, dict[str, Any], Path]


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Scored]:
    """`score` of a shape's extended trace (with `--html` and `--print_detailed_results`): the
    CLI's result, the document and its folder; run once a shape for the module (a 100,000-span
    score takes 5-15 s, and two tests read the deep one)."""
    done: dict[str, Scored] = {}

    def get(shape: str) -> Scored:
        if shape not in done:
            folder = tmp_path_factory.mktemp(shape)
            r, doc = _score(folder, _extended(shape), "--html", str(folder / "r.html"),
                            "--print_detailed_results")
            done[shape] = (r, doc, folder)
        return done[shape]

    return get


@pytest.mark.parametrize("shape", ["wide", "deep"])
def test_100000_extra_spans_score_as_the_trace_they_extend(
        shape: str, tmp_path: Path, scored: Callable[[str], Scored]) -> None:
    _, plain = _score(tmp_path, json.loads((FIXTURES / "openai_agents.otlp.json").read_text()))
    r, doc, folder = scored(shape)
    html = folder / "r.html"
    assert r.exit_code == 0, r.output
    assert _metrics(doc) == _metrics(plain)  # the same calls, tokens and scores
    paris = next(c for c in doc["eval_case_results"] if c["eval_id"] == "weather-paris-rome")
    spans = paris["trace"]["spans"]
    assert len(spans) == 24 - 8 + 2 + EXTRA  # the file's spans of two turns, an invocation span each
    assert paris["eval_metric_result_per_invocation"][0]["actual_invocation"]["intermediate_data"][
        "tool_responses"][0]["response"]["city"] == "Paris"
    # the views show a bounded part, and say how much they left out
    note = (f"… {EXTRA - MAX_DEPTH + 4} more spans below (deeper than {MAX_DEPTH} levels)" if shape == "deep"
            else f"… {EXTRA - MAX_CHILDREN + 2 + 3} more spans here ({EXTRA + 2 - MAX_CHILDREN} children")
    assert note in r.output and note in html.read_text()
    assert len(r.output.splitlines()) < 1000


def test_the_trace_command_shows_a_deep_chain(scored: Callable[[str], Scored]) -> None:
    folder = scored("deep")[2]
    r = CliRunner().invoke(cli, ["trace", str(folder / "r.json"), "weather-paris-rome"],
                           env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    assert "step 35 " in r.output and "step 36 " not in r.output
    assert f"… {EXTRA - MAX_DEPTH + 4} more spans below" in r.output


def _document(tmp_path: Path, mutate: Callable[[list[dict[str, Any]]], object]) -> Path:
    data = json.loads((FIXTURES / "openai_agents.otlp.json").read_text())
    mutate(_spans(data))
    path = tmp_path / "t.otlp.json"
    path.write_text(json.dumps(data))
    return path


def _chain_cycle(spans: list[dict[str, Any]]) -> None:
    """EXTRA spans, each the parent of the next, the last the parent of the first."""
    first = spans[0]
    for i in range(EXTRA):
        spans.append({**first, "spanId": f"{i + 1:016x}", "parentSpanId": f"{(i - 1) % EXTRA + 1:016x}",
                      "name": f"step {i}", "attributes": []})


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda s: s[2].update(parentSpanId="55dd8f0fbbb0e479"),  # `turn` under its own model call
     "spans[0].parentSpanId: span 'response' (55dd8f0fbbb0e479) is its own ancestor: the parent ids "
     "55dd8f0fbbb0e479 → 58fd7c7129c4bb2e → 55dd8f0fbbb0e479 form a cycle of 2 spans"),
    (lambda s: s[0].update(parentSpanId=s[0]["spanId"]),
     "spans[0].parentSpanId: span 'response' (55dd8f0fbbb0e479) is its own ancestor: the parent ids "
     "55dd8f0fbbb0e479 → 55dd8f0fbbb0e479 form a cycle of 1 span"),
    (_chain_cycle, f"spans[24].parentSpanId: span 'step 0' (0000000000000001) is its own ancestor: the "
     f"parent ids 0000000000000001 → 00000000000186a0 → 000000000001869f → 000000000001869e → "
     f"000000000001869d → 000000000001869c → … → 0000000000000001 form a cycle of {EXTRA} spans"),
    (lambda s: s.append(dict(s[1], name="other")), "spans[24].spanId: span id 2a61f9e7b0ca5459 is used "
     "twice in trace "
     "7cc76ef9150775ab8bbae73b1513f704 (also resourceSpans[0].scopeSpans[0].spans[1])"),
], ids=["two-span-cycle", "own-parent", "100000-span-cycle", "duplicate-id"])
def test_a_malformed_tree_is_refused_naming_the_file_and_the_span(
        tmp_path: Path, mutate: Callable[[list[dict[str, Any]]], object], message: str) -> None:
    path = _document(tmp_path, mutate)
    r = CliRunner().invoke(cli, ["score", str(EXPECTED), "--actual", str(path), "-o",
                                 str(tmp_path / "o.json")], env={"COLUMNS": "400"})
    assert r.exit_code == 2, r.output
    assert f"{path}: resourceSpans[0].scopeSpans[0].{message}" in " ".join(r.output.split())
    assert not (tmp_path / "o.json").exists()


def test_a_parent_that_is_not_in_the_file_makes_a_root(tmp_path: Path) -> None:
    path = _document(tmp_path, lambda s: s[2].update(parentSpanId="00000000000000ff"))  # `turn` of turn 1
    out = tmp_path / "o.json"
    r = CliRunner().invoke(cli, ["score", str(EXPECTED), "--actual", str(path), "-o", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    _, plain = _score(tmp_path, json.loads((FIXTURES / "openai_agents.otlp.json").read_text()))
    assert _metrics(doc) == _metrics(plain)
    paris = next(c for c in doc["eval_case_results"] if c["eval_id"] == "weather-paris-rome")
    spans = paris["trace"]["spans"]
    invocation = next(s for s in spans if s["name"] == "invocation 0")
    assert next(s for s in spans if s["span_id"] == "58fd7c7129c4bb2e")["parent_id"] == invocation["span_id"]


def test_a_span_written_twice_as_it_was_is_read_once(tmp_path: Path) -> None:
    # an exporter's retry, written twice by a collector's file exporter (or two overlapping exports
    # joined): the live receiver holds such a span once; a file refused it as an id used twice
    data = json.loads((FIXTURES / "openai_agents.otlp.json").read_text())
    doubled = json.loads(json.dumps(data))
    _spans(doubled).extend(json.loads(json.dumps(_spans(data)[:5])))
    r, doc = _score(tmp_path, doubled)
    assert r.exit_code == 0, r.output
    _, plain = _score(tmp_path, data)
    assert _metrics(doc) == _metrics(plain)
    assert [len(c["trace"]["spans"]) for c in doc["eval_case_results"]] == \
        [len(c["trace"]["spans"]) for c in plain["eval_case_results"]]


def _span(span_id: str, parent: str | None, kind: str = "other") -> Span:
    return Span(span_id=span_id, parent_id=parent, name=span_id, kind=kind, start=0.0, end=1.0)  # type: ignore[arg-type]


def test_walks_of_a_stored_trace_end_on_repeated_ids() -> None:
    # a -> x -> y -> x (a second span with id x, under y): each walk lists it and stops
    trace = Trace(trace_id="1" * 32, spans=[_span("a", None), _span("x", "a"), _span("y", "x"),
                                            _span("x", "y")])
    assert [s.span_id for s in trace.below("a")] == ["x", "y", "x"]
    assert trace_html(trace).count("<li>") == 4
    assert len(trace_tree(trace, "t").children[0].children) == 1


def test_views_are_unchanged_for_a_small_tree() -> None:
    trace = Trace(trace_id="1" * 32, spans=[_span("a", None), _span("b", "a"), _span("c", "b"),
                                            _span("d", "a"), _span("e", None)])
    assert trace_html(trace) == (
        "<details class=trace><summary>trace</summary><ul>"
        "<li><b>a</b> <span class=e>1000 ms</span> <ul><li><b>b</b> <span class=e>1000 ms</span> "
        "<ul><li><b>c</b> <span class=e>1000 ms</span> </li></ul></li>"
        "<li><b>d</b> <span class=e>1000 ms</span> </li></ul></li>"
        "<li><b>e</b> <span class=e>1000 ms</span> </li></ul></details>")
    tree = trace_tree(trace, "t")
    assert [[str(g.label.plain) for g in n.children] for n in tree.children] == [  # type: ignore[union-attr]
        ["b  1000 ms", "d  1000 ms"], []]
