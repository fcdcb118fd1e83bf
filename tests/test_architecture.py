"""The import graph stays a one-way street: no circles, and every arrow points down a floor.

Read from the source with `ast` (`tests/import_graph.py`); lazy imports inside functions count.
"""

import re
from pathlib import Path

import pytest

from tests.import_graph import cycles, module_graph, package_graph, package_of

# Floors, bottom first: a package may import packages on lower floors only.
FLOORS = [
    {"schema", "errors", "lazy"},
    {"datasets", "models", "verdicts", "tracing"},
    {"criteria", "agents", "simulation", "store", "reporting"},
    {"runner"},
    {"authoring", "calibration", "collector"},  # tools built on the runner
    {"web"},  # a front end too, below cli only because `agenteval web` launches it
    {"cli", "pytest_plugin", "evaluator"},
    {"__main__", "(root)"},  # entry points: `python -m agenteval`, `agenteval.AgentEvaluator`
]
FLOOR = {pkg: i for i, floor in enumerate(FLOORS) for pkg in floor}


def test_no_module_imports_itself_back() -> None:
    assert cycles(module_graph()) == []


def test_no_package_circles() -> None:
    assert cycles(package_graph()) == []


def test_every_package_has_a_floor() -> None:
    assert sorted(set(package_graph()) - set(FLOOR)) == []


def test_the_readme_floor_table_is_these_floors() -> None:
    """README's Architecture table lists each floor's packages, floor 1 = FLOORS[0]."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d) \| ([^|]*) \|", readme, re.M)
    table = {int(n): set(re.findall(r"`(\w+)`", pkgs)) for n, pkgs in rows}
    assert table == {i + 1: floor for i, floor in enumerate(FLOORS[:-1])}


@pytest.mark.parametrize("pkg", sorted(package_graph()))
def test_arrows_point_down(pkg: str) -> None:
    up = sorted(t for t in package_graph()[pkg] if FLOOR[t] >= FLOOR[pkg])
    assert up == [], f"{pkg} (floor {FLOOR[pkg]}) imports {up} on its own floor or above"


def test_only_the_web_command_imports_web() -> None:
    importers = sorted(m for m, targets in module_graph().items()
                       if package_of(m) != "web" and any(package_of(t) == "web" for t in targets))
    assert importers == ["agenteval.cli.web"]


def test_the_runner_phases_do_not_know_who_drives_them() -> None:
    """Inference (with its turns recorded), scoring and the values they share sit under the
    runner's front door (`request`, `run`), its driver, its re-scoring sources and its
    executors, never above them."""
    graph = module_graph()
    phases = ("inference", "turns", "scoring", "values")
    up = sorted(f"{p} -> {t}" for p in phases for t in graph[f"agenteval.runner.{p}"]
                if t.startswith("agenteval.runner.") and t.removeprefix("agenteval.runner.") not in phases)
    assert up == []


# The rooms of `criteria/judge/`, bottom first: the engine (asking judges, deciding verdicts),
# then what the judge is shown (prompting), then the judged criteria (the modules beside them).
JUDGE_FLOORS = ["engine", "prompting", "criteria"]


def judge_room(module: str) -> str | None:
    """`agenteval.criteria.judge.engine.service` → `engine`; a judged criterion → `criteria`;
    None outside `criteria/judge/`."""
    if not module.startswith("agenteval.criteria.judge"):
        return None
    room = module.removeprefix("agenteval.criteria.judge").lstrip(".").split(".")[0]
    return room if room in JUDGE_FLOORS else "criteria"


def test_the_judge_rooms_import_one_way() -> None:
    """The criteria use the prompts and the engine, the prompts may use the engine, never back;
    the engine and the prompts import nothing else of `criteria`."""
    up = []
    for module, targets in module_graph().items():
        room = judge_room(module)
        if room is None or module == "agenteval.criteria.judge":
            continue
        for target in targets:
            other = judge_room(target)
            outside = other is None and target.startswith("agenteval.criteria") and room != "criteria"
            if outside or (other is not None and JUDGE_FLOORS.index(other) > JUDGE_FLOORS.index(room)):
                up.append(f"{module} -> {target}")
    assert sorted(up) == []


def test_the_registry_imports_nothing_registered_in_it() -> None:
    imports = module_graph()["agenteval.criteria.registry"]
    criteria = sorted(m for m in imports if m.startswith("agenteval.criteria"))
    assert criteria == ["agenteval.criteria.spec"]


def test_the_cycle_finder_finds_cycles() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
