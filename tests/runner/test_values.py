"""Values from the agent made JSON-safe where they enter (`runner.values`)."""

import datetime
import json
import math
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from agenteval.runner import values
from agenteval.runner.values import MAX_DEPTH, make_safe
from agenteval.schema import FunctionCall


@dataclass
class Point:
    x: float
    y: float


class Opaque:
    def __repr__(self) -> str:
        return "Opaque(42)"


def test_json_values_pass_unchanged_and_known_types_take_their_json_form() -> None:
    notes: list[str] = []
    value = {"a": [1, 2.5, "s", None, True], "t": (1, 2), 3: "int key",
             "when": datetime.date(2024, 5, 1), "id": uuid.UUID(int=1), "p": Point(1, 2), "s": {7}}
    safe = make_safe(value, "args", notes)
    assert notes == []
    assert safe == {"a": [1, 2.5, "s", None, True], "t": [1, 2], "3": "int key", "when": "2024-05-01",
                    "id": "00000000-0000-0000-0000-000000000001", "p": {"x": 1, "y": 2}, "s": [7]}
    json.dumps(safe, allow_nan=False)


def test_what_loses_information_is_written_readably_and_noted() -> None:
    notes: list[str] = []
    cyclic: list[object] = [1]
    cyclic.append(cyclic)
    deep: object = "bottom"
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    safe = make_safe({"nan": math.nan, "inf": -math.inf, "obj": Opaque(), "cyc": cyclic, "deep": deep},
                     "invocation 0.tool args", notes)
    assert safe["nan"] == "NaN" and safe["inf"] == "-Infinity"
    assert safe["obj"] == "<unserialisable tests.runner.test_values.Opaque: Opaque(42)>"
    assert safe["cyc"] == [1, "<cycle>"]
    json.dumps(safe, allow_nan=False)
    assert [n.split(":")[0] for n in notes] == [
        "invocation 0.tool args.nan", "invocation 0.tool args.inf", "invocation 0.tool args.obj",
        "invocation 0.tool args.cyc[1]", "invocation 0.tool args.deep" + "[0]" * (MAX_DEPTH - 1)]


def test_models_are_made_safe_in_place() -> None:
    call = FunctionCall(name="f", args={"when": datetime.datetime(2024, 1, 2, 3, 4), "x": Opaque()})
    notes: list[str] = []
    assert make_safe([call], "calls", notes)[0] is call
    assert call.args == {"when": "2024-01-02T03:04:00", "x": "<unserialisable tests.runner.test_values."
                         "Opaque: Opaque(42)>"}
    assert notes == ["calls[0].args.x: Opaque cannot be written as JSON; written as its repr"]
    assert json.loads(call.model_dump_json())["args"]["when"] == "2024-01-02T03:04:00"


def test_unpaired_surrogates_become_replacement_characters() -> None:
    notes: list[str] = []
    call = FunctionCall(name="f\ud800", args={"q": "a\udc00b", "ok": "é"})
    make_safe(call, "call", notes)
    assert call.name == "f\ufffd" and call.args == {"q": "a\ufffdb", "ok": "é"}
    assert len(notes) == 2 and "unpaired surrogate" in notes[0]
    call.model_dump_json()  # writable


def test_a_values_place_is_written_out_only_for_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = values._where

    def where(at: object) -> str:
        made.append(real(at))  # type: ignore[arg-type]
        return made[-1]

    monkeypatch.setattr(values, "_where", where)
    notes: list[str] = []
    call = FunctionCall(name="f", args={"q": ["a", 1, 2.5, None, {"k": "é"}]})
    make_safe({"calls": [call], 3: (True,)}, "turn", notes)
    assert made == [] and notes == []
    make_safe({"calls": [FunctionCall(name="f", args={"q": [0, {"k": math.inf}]})], 7: [0, math.nan]},
              "turn", notes)
    assert made == ["turn.calls[0].args.q[1].k", "turn.7[1]"]
    assert [n.split(":")[0] for n in notes] == made


def test_a_value_of_a_class_in_the_agent_file_is_named_as_its_user_knows_it(tmp_path: Path) -> None:
    # It was shown as `agenteval_agent_<hash>.Odd`, the loader's private name for the file.
    from agenteval.agents.loader import load_root_agent

    (tmp_path / "shop_agent.py").write_text("class Odd:\n    pass\n\nroot_agent = Odd()\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "json").mkdir()  # a package named as a standard module: a private name
    (tmp_path / "pkg" / "json" / "__init__.py").write_text("from .kinds import Odd\nroot_agent = Odd()\n")
    (tmp_path / "pkg" / "json" / "kinds.py").write_text("class Odd:\n    pass\n")
    for path, shown in ((tmp_path / "shop_agent.py", "shop_agent.Odd"),
                        (tmp_path / "pkg" / "json", "json.kinds.Odd")):
        notes: list[str] = []
        text = make_safe(load_root_agent(path), "tool_response", notes)
        assert text.startswith(f"<unserialisable {shown}: <{shown} object at 0x"), text
        assert "agenteval_agent_" not in text and notes
