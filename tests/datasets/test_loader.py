import json
import os
from pathlib import Path

import pytest

from agenteval.datasets import (
    load_eval_config,
    load_eval_set,
    load_session_file,
    migrate,
    parse_eval_set,
    read_json,
    validate_eval_set_json,
)
from agenteval.errors import DataError
from tests.conftest import ADK, FIXTURES, PARITY


def _json_files() -> list[Path]:
    return sorted(p for d in (ADK, PARITY) for p in d.rglob("*.json") if p.name != "adk_scores.json")


@pytest.mark.parametrize("path", _json_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_shared_fixture_loads(path: Path) -> None:
    if path.name.startswith("config_") or path.name == "test_config.json":
        load_eval_config(path)
    elif path.name.endswith(".session.json"):
        load_session_file(path)
    else:
        s = load_eval_set(path)
        assert s.eval_cases and all(c.conversation for c in s.eval_cases)


def test_legacy_test_file_becomes_one_case_with_initial_session() -> None:
    path = ADK / "trip_planner_agent" / "trip_inquiry.test.json"
    s = load_eval_set(path, ADK / "trip_planner_agent" / "initial.session.json")
    raw = json.loads(path.read_text())
    (case,) = s.eval_cases
    assert case.eval_id == path.relative_to(Path.cwd()).as_posix()  # (see the next test)
    assert case.conversation is not None and len(case.conversation) == len(raw)
    first = case.conversation[0]
    assert first.user_content.text() == raw[0]["query"]
    assert [c.name for c in first.tool_calls()] == [t["tool_name"] for t in raw[0]["expected_tool_use"]]
    assert case.session_input is not None and case.session_input.state["origin"] == "San Francisco"
    assert "/" not in s.eval_set_id  # unlike ADK, safe to use in a result file name


def test_a_legacy_case_id_is_its_path_as_given_or_relative_never_absolute(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An absolute path made the case's id name one machine's folders: another id, and another
    # history, on every machine and checkout. Given relative, the id is the path as given (ADK's).
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "greet.test.json").write_text('[{"query": "hi", "reference": "hello"}]')
    monkeypatch.chdir(tmp_path)
    for given in (tmp_path / "evals" / "greet.test.json", "evals/greet.test.json"):
        (case,) = load_eval_set(given).eval_cases
        assert case.eval_id == "evals/greet.test.json"
    monkeypatch.chdir(tmp_path / "evals")
    (case,) = load_eval_set(tmp_path / "evals" / "greet.test.json").eval_cases
    assert case.eval_id == "greet.test.json"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # not under it: no `../` id
    (case,) = load_eval_set(tmp_path / "evals" / "greet.test.json").eval_cases
    assert case.eval_id == str(tmp_path / "evals" / "greet.test.json")


def test_old_session_list_format(tmp_path: Path) -> None:
    p = tmp_path / "old.json"
    p.write_text(json.dumps([{
        "name": "greet", "data": [{"query": "hi", "expected_tool_use": [], "reference": "hello"}],
        "initial_session": {"app_name": "a", "user_id": "u", "state": {"x": 1}},
    }]))
    (case,) = load_eval_set(p).eval_cases
    assert case.eval_id == "greet" and case.session_input and case.session_input.state == {"x": 1}


def test_migrate_writes_a_loadable_current_format_file(tmp_path: Path) -> None:
    new = tmp_path / "new.evalset.json"
    migrate(ADK / "home_automation_agent" / "simple_test2.test.json", new)
    data = json.loads(new.read_text())
    assert "eval_cases" in data and "evalCases" not in data
    assert load_eval_set(new).eval_cases[0].conversation


@pytest.mark.parametrize(("content", "where", "message"), [
    ("{", "line 1 column 2", "malformed JSON"),
    ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{}]}]}',
     "eval_cases[0].conversation[0].user_content", "field required"),
    ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{"user_content": '
     '{"parts": [{"text": 5}]}}]}]}', "eval_cases[0].conversation[0].user_content.parts[0].text",
     "string"),
    ('[{"query": "q", "expected_tool_use": [{"tool_input": {}}]}]',
     "[0].expected_tool_use[0].tool_name", "field required"),
    ('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c"}]}', "eval_cases[0]", "exactly one"),
    ('{"something": 1}', "eval_set_id", "field required"),
    ('"text"', "", "not an eval set"),
])
def test_bad_files_name_file_and_json_path(tmp_path: Path, content: str, where: str,
                                          message: str) -> None:
    p = tmp_path / "bad.evalset.json"
    p.write_text(content)
    with pytest.raises(DataError) as err:
        load_eval_set(p)
    assert err.value.file == str(p)
    assert err.value.path == where
    assert message in err.value.message


def test_missing_file() -> None:
    with pytest.raises(DataError, match="file not found"):
        load_eval_set("/nonexistent/x.evalset.json")


def _case(eval_id: object) -> dict[str, object]:
    return {"eval_id": eval_id, "conversation": [
        {"user_content": {"role": "user", "parts": [{"text": "hi"}]}}]}


def _refused_by_every_loader(p: Path, message: str) -> None:
    """Each way an eval set is read (whole, from parsed JSON, from bytes) refuses `p` so."""
    for load in (load_eval_set, lambda path: parse_eval_set(path, read_json(path)),
                 lambda path: validate_eval_set_json(path.read_bytes(), path)):
        with pytest.raises(DataError) as err:
            load(p)
        assert str(err.value) == f"{p}: {message}"


@pytest.mark.parametrize("initial_space", ["", "\n"])
def test_duplicate_eval_ids_name_both_positions(tmp_path: Path, initial_space: str) -> None:
    p = tmp_path / "x.evalset.json"
    p.write_text(initial_space + json.dumps(
        {"eval_set_id": "s", "eval_cases": [_case("a"), _case("b"), _case("c"), _case("a")]}))
    _refused_by_every_loader(p, "eval_cases[3].eval_id: duplicate eval_id 'a' (also eval_cases[0])")


T = [{"query": "q"}]  # one turn


@pytest.mark.parametrize(("sessions", "where", "message"), [
    ([{"name": "a", "data": T}, {"name": "a", "data": T}], "[1].name",
     "duplicate eval_id 'a' (also [0].name)"),
    ([{"name": None, "data": T}], "[0].name", "expected a string (the case's eval_id), got null"),
    ([{"name": 1, "data": T}], "[0].name", "expected a string (the case's eval_id), got int"),
    ([{"name": "a", "data": T}, {"data": T}], "[1].name", "field required"),
    ([{"name": "a", "data": T}, 3], "[1]", "expected an object with `name` and `data`"),
    ([{"name": "a", "data": T}, {"name": "b", "data": []}], "[1].data",
     "the list is empty: there is no turn"),
    ([{"name": "a", "data": [{"query": "q"}, {"reference": "r"}]}], "[0].data[1].query",
     "field required"),
    # ADK ignores a mistyped key here, and the case ran without its session
    ([{"name": "a", "data": T, "initial_sesion": {"state": {"x": 1}}}], "[0].initial_sesion",
     "unknown key (a session holds name, data and initial_session)"),
    ([{"name": "a", "data": T, "initial_session": {"stat": {"x": 1}}}], "[0].initial_session.stat",
     "unknown key"),
])
def test_old_session_list_mistakes(tmp_path: Path, sessions: object, where: str,
                                   message: str) -> None:
    p = tmp_path / "old.json"
    p.write_text(json.dumps(sessions))
    with pytest.raises(DataError) as err:
        load_eval_set(p)
    assert (err.value.file, err.value.path, err.value.message) == (str(p), where, message)


@pytest.mark.parametrize(("turns", "where", "message"), [
    ([{"query": "a"}, {"reference": "b"}], "[1].query", "field required"),
    ([{"query": "a"}, "b"], "[1]", "expected a turn: an object with `query`"),
    ([{"query": "a", "expected_tool_use": {}}], "[0].expected_tool_use", "valid list"),
    ([{"query": "a", "expected_intermediate_agent_responses": [{"author": "b", "text": "c", "txt": "d"}]}],
     "[0].expected_intermediate_agent_responses[0].txt", "unknown key"),
])
def test_legacy_turn_list_mistakes_are_located(tmp_path: Path, turns: object, where: str,
                                               message: str) -> None:
    p = tmp_path / "f.test.json"
    p.write_text(json.dumps(turns))
    with pytest.raises(DataError) as err:
        load_eval_set(p)
    assert (err.value.file, err.value.path) == (str(p), where)
    assert message in err.value.message


BOM = b"\xef\xbb\xbf"


def test_a_byte_order_mark_is_accepted_in_every_input(tmp_path: Path) -> None:
    current = tmp_path / "x.evalset.json"
    current.write_bytes(BOM + json.dumps({"eval_set_id": "s", "eval_cases": [_case("a")]}).encode())
    assert load_eval_set(current).eval_cases[0].eval_id == "a"
    assert validate_eval_set_json(current.read_bytes()).eval_cases[0].eval_id == "a"
    legacy = tmp_path / "old.test.json"
    legacy.write_bytes(BOM + b'[{"query": "hi"}]')
    session = tmp_path / "s.session.json"
    session.write_bytes(BOM + b'{"app_name": "app", "state": {"k": 1}}')
    (case,) = load_eval_set(legacy, session).eval_cases
    assert case.session_input is not None and case.session_input.state == {"k": 1}
    assert load_session_file(session).app_name == "app"


def test_a_mistyped_key_in_a_session_file_is_refused(tmp_path: Path) -> None:
    # Every key of a session ADK saves is accepted (the shared fixtures hold three generations).
    session = tmp_path / "s.session.json"
    session.write_text('{"app_name": "app", "stat": {"k": 1}}')
    with pytest.raises(DataError) as err:
        load_session_file(session)
    assert (err.value.file, err.value.path, err.value.message) == (str(session), "stat", "unknown key")


def _legacy(tmp_path: Path) -> Path:
    old = tmp_path / "old.test.json"
    old.write_text('[{"query": "hi", "reference": "hello"}]')
    return old


def test_migrate_refuses_an_existing_file_unless_forced(tmp_path: Path) -> None:
    old, new = _legacy(tmp_path), tmp_path / "new.evalset.json"
    new.write_text("precious")
    with pytest.raises(DataError) as err:
        migrate(old, new)
    assert (err.value.file, err.value.message) == (str(new), "already exists; use --force to replace it")
    assert new.read_text() == "precious"
    migrate(old, new, force=True)
    assert load_eval_set(new).eval_cases[0].conversation


def test_migrate_never_writes_over_its_source(tmp_path: Path) -> None:
    old = _legacy(tmp_path)
    data = old.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(old)
    hard = tmp_path / "hard.json"
    os.link(old, hard)
    for new in (old, tmp_path / "." / old.name, link, hard):
        with pytest.raises(DataError, match="is the source file"):
            migrate(old, new, force=True)
    assert old.read_bytes() == data


@pytest.mark.parametrize(("text", "message"), [
    ('{"eval_set_id": "s", "eval_cases": []}', "already in the current eval-set format; nothing to migrate"),
    ('{"foo": 1}', "not a legacy test file: expected a list of turns with `query`, got an object"),
    ("{}", "not a legacy test file: expected a list of turns with `query`, got an object"),
])
def test_migrate_of_an_object_says_what_it_is(tmp_path: Path, text: str, message: str) -> None:
    old, new = tmp_path / "old.test.json", tmp_path / "new.evalset.json"
    old.write_text(text)
    with pytest.raises(DataError) as err:
        migrate(old, new)
    assert (err.value.file, err.value.message) == (str(old), message)
    assert not new.exists()


def test_a_scenario_with_an_unknown_persona_id_is_refused_by_every_loader(tmp_path: Path) -> None:
    # The simulator cannot play such a persona: every run of the case would fail, so the set is
    # refused when read, naming the field (a built-in id in any case, or an inline persona, loads).
    def scenario(persona: object) -> dict[str, object]:
        return {"starting_prompt": "hi", "conversation_plan": "ask", "user_persona": persona}

    p = tmp_path / "x.evalset.json"
    p.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [
        {"eval_id": "a", "conversation_scenario": scenario("novice")},
        {"eval_id": "b", "conversation_scenario": scenario(
            {"id": "MINE", "description": "a user of my own"})},
        {"eval_id": "c", "conversation_scenario": scenario("ALIEN")}]}))
    _refused_by_every_loader(p, "eval_cases[2].conversation_scenario.user_persona: "
                             "unknown user persona 'ALIEN'; built-in: EXPERT, NOVICE, EVALUATOR")


def test_a_legacy_mock_tool_output_becomes_the_calls_recorded_response(tmp_path: Path) -> None:
    # ADK's first evaluator answered a call matching an expected one that had `mock_tool_output`
    # with {"result": output}; migrate (and eval of the file) dropped it silently, so
    # `--mock_tools expected` ran those tools live on the migrated set
    old, new = tmp_path / "old.test.json", tmp_path / "new.evalset.json"
    old.write_text(json.dumps([{"query": "lights?", "reference": "on", "expected_tool_use": [
        {"tool_name": "get_time", "tool_input": {}},
        {"tool_name": "get_lights", "tool_input": {"room": "hall"}, "mock_tool_output": "on"},
        {"tool_name": "ping", "tool_input": {}, "mock_tool_output": None}]}]))
    for source in (old, new):
        if source is new:
            migrate(old, new)
        (inv,) = load_eval_set(source).eval_cases[0].conversation
        pairs = [(c.name, c.args, r and (r.name, r.response)) for c, r in inv.tool_calls_with_responses()]
        assert pairs == [("get_time", {}, None),
                         ("get_lights", {"room": "hall"}, ("get_lights", {"result": "on"})),
                         ("ping", {}, ("ping", {"result": None}))], source


def test_an_empty_legacy_query_loads_as_adk_loads_it_and_migrate_notes_it(tmp_path: Path) -> None:
    """ADK 2.13 keeps a turn whose `query` is empty (a user message with empty text): a file it
    loads loads here too, for `eval` / `score` and `migrate`, and migrate says where."""
    from click.testing import CliRunner

    from agenteval.cli.main import cli
    from agenteval.datasets.legacy import asks_nothing

    old = tmp_path / "old.test.json"
    old.write_text(json.dumps([{"query": "hi", "reference": "hello"}, {"query": "  ", "reference": "bye"}]))
    loaded = load_eval_set(old)
    assert [inv.user_content.text() for inv in loaded.eval_cases[0].conversation] == ["hi", "  "]
    assert asks_nothing(loaded) == [f"case {loaded.eval_cases[0].eval_id!r}, turn 2"]
    new = tmp_path / "new.evalset.json"
    result = CliRunner().invoke(cli, ["migrate", str(old), str(new)])
    assert result.exit_code == 0, result.output
    assert "1 turn(s) with an empty query" in result.output and "turn 2" in result.output
    assert load_eval_set(new).eval_cases[0].conversation[1].user_content.text() == "  "


def test_a_legacy_file_reads_the_same_every_time(tmp_path: Path) -> None:
    """Its invocations' ids included: the set's digest is what `--resume` compares (a random id
    made every run of a legacy file unresumable: 'eval set changed')."""
    old = tmp_path / "old.test.json"
    old.write_text(json.dumps([{"query": "hi", "reference": "hello"}, {"query": "bye", "reference": "bye"}]))
    first, again = load_eval_set(old), load_eval_set(old)
    assert first.model_dump_json() == again.model_dump_json()
    ids = [inv.invocation_id for inv in first.eval_cases[0].conversation]
    assert len(set(ids)) == 2
