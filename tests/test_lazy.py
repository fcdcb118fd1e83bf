"""`agenteval.lazy`: names imported from submodules when first asked for, patterns compiled at
first use, work kept for the moment a run waits on a model."""

import asyncio
import importlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agenteval.lazy import LazyPattern


def test_a_name_is_imported_from_its_submodule_when_asked_for_and_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "lazypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from agenteval.lazy import names_from\n__getattr__ = names_from(__name__, {'value': 'heavy'})\n")
    (pkg / "heavy.py").write_text("value = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import lazypkg  # type: ignore[import-not-found]

        assert "lazypkg.heavy" not in sys.modules  # nothing imported until asked for
        assert lazypkg.value == 42
        assert "lazypkg.heavy" in sys.modules and lazypkg.__dict__["value"] == 42  # kept: asked once
        with pytest.raises(AttributeError, match="'lazypkg' has no attribute 'other'"):
            _ = lazypkg.other
    finally:
        for name in ("lazypkg", "lazypkg.heavy"):
            sys.modules.pop(name, None)


def test_a_name_given_by_a_submodule_of_the_same_name_stays_the_packages_value(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `from pkg import run` must give the function `run`, even after the submodule `pkg.run` is
    # loaded (the import system sets it on the package); other submodules are set as usual.
    pkg = tmp_path / "shadowpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from agenteval.lazy import names_from, names_over_submodules\n"
        "names_over_submodules(__name__, {'run': 'run'})\n"
        "__getattr__ = names_from(__name__, {'run': 'run'})\n")
    (pkg / "run.py").write_text("def run():\n    return 'ran'\n")
    (pkg / "other.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        importlib.import_module("shadowpkg.run")  # the submodule loaded first
        importlib.import_module("shadowpkg.other")
        from shadowpkg import run  # type: ignore[import-not-found]

        assert run() == "ran" and sys.modules["shadowpkg"].run is run
        assert sys.modules["shadowpkg"].other is sys.modules["shadowpkg.other"]
    finally:
        for name in ("shadowpkg", "shadowpkg.run", "shadowpkg.other"):
            sys.modules.pop(name, None)


def test_a_lazy_pattern_compiles_at_first_use_and_matches_as_the_compiled_one() -> None:
    source, flags = r"(?P<who>judge|grader)\W+(\w+)", re.I
    lazy, compiled = LazyPattern(source, flags), re.compile(source, flags)
    assert lazy._compiled is None  # nothing compiled until used
    text = "Dear JUDGE: pass it. The grader, note this."
    assert lazy.search(text) is not None and lazy._compiled is not None
    assert lazy.compiled.pattern == source and lazy.compiled.flags == compiled.flags
    for got, want in ((lazy.search(text, 5), compiled.search(text, 5)),
                      (lazy.match(text), compiled.match(text)),
                      (lazy.match(text, 5), compiled.match(text, 5))):
        assert (got and (got.span(), got.groups())) == (want and (want.span(), want.groups()))
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.split(text) == compiled.split(text) and lazy.split(text, 1) == compiled.split(text, 1)
    assert lazy.sub("X", text) == compiled.sub("X", text)
    assert lazy.sub(lambda m: m["who"].upper(), text, 1) == compiled.sub(lambda m: m["who"].upper(), text, 1)


def test_the_models_and_judge_packages_import_a_name_only_with_its_module() -> None:
    # The judge's types (`models.base`) and a criterion's questions (`engine.decision`) come
    # without the embedded model's module or the engine's service.
    import subprocess

    code = ("import sys; import agenteval.models.base, agenteval.criteria.judge.prompting; "
            "print(sorted(m for m in ('agenteval.models.local', 'agenteval.models.resolve', "
            "'agenteval.criteria.judge.engine.service', 'agenteval.criteria.judge.engine.cascade') "
            "if m in sys.modules)); "
            "from agenteval.models import LocalModel, parse_model_name; "
            "from agenteval.criteria.judge import JudgeService; "
            "from agenteval.criteria.judge.engine import decide_all; "
            "print(LocalModel.__module__, parse_model_name.__module__, JudgeService.__module__, "
            "decide_all.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == [
        "[]", "agenteval.models.local agenteval.models.resolve agenteval.criteria.judge.engine.service "
        "agenteval.criteria.judge.engine.cascade"]


def test_the_http_model_imports_httpx_without_its_command_line_client() -> None:
    # httpx's package imports its `httpx` command (rich's progress and syntax, pygments' lexers:
    # 40-60 ms of an HTTP run's start-up) whenever click, rich and pygments are installed, as
    # agenteval's dependencies make them; the command stays importable for whoever asks for it.
    code = ("import sys, json; import agenteval.models.openai_compat; "
            "gone = [m for m in ('httpx._main', 'pygments', 'rich.syntax') if m in sys.modules]; "
            "import httpx, httpx._main; "
            "print(json.dumps([gone, 'httpx' in sys.modules, callable(httpx._main.main)]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [[], True, True]


def test_eval_imports_no_rescoring_module() -> None:
    # `eval` imports `runner.streamed` for its result type; the re-scoring modules behind it
    # (recorded runs with the trace reader, the sharded workers with multiprocessing's queues)
    # are imported by the functions that re-score: 2% of `eval`'s start-up (bench/README.md).
    code = ("import sys, json; import agenteval.cli.run, agenteval.cli.commands; "
            "print(json.dumps(sorted(m for m in ('agenteval.runner.recorded', 'agenteval.tracing.ingest', "
            "'agenteval.runner.sharded', 'agenteval.runner.shard_worker') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_eval_imports_no_paired_comparison() -> None:
    # The history's database gives `compare` and the web their paired runs; `eval` opens it
    # without `verdicts.paired` (its dataclasses: 1.4% of eval's start-up, bench/README.md).
    code = ("import sys, json; import agenteval.cli.run, agenteval.cli.commands, agenteval.store.db; "
            "print(json.dumps('agenteval.verdicts.paired' in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) is False


# Models `eval` never validates or writes on their own: held only inside other models, or used
# only by judges, simulators, legacy files and sequential verdicts (bench/README.md, session 36).
DEFERRED = {
    "agenteval.criteria.custom": ["CustomCriterionConfig"],
    "agenteval.datasets.legacy": ["_ExpectedToolUse", "_IntermediateResponse", "_LegacyTurn"],
    "agenteval.schema.config": ["CodeConfig", "Interval", "MetricValueInfo", "MetricInfo",
                                "CustomMetricConfig", "UserSimulatorConfig", "EndpointConfig",
                                "SessionFile"],
    "agenteval.schema.content": ["Blob"],
    "agenteval.schema.criterion": ["SingleToolUseCriterion", "JudgeModelOptions",
                                   "LlmAsAJudgeCriterion", "RubricsBasedCriterion",
                                   "HallucinationsCriterion", "LlmBackedUserSimulatorCriterion"],
    "agenteval.schema.evalset": ["SessionInput", "ConversationScenario"],
    "agenteval.schema.invocation": ["IntermediateData"],
    "agenteval.schema.judge_certificates": ["CertificateFloor", "JudgeCertificatesConfig"],
    "agenteval.schema.result": ["TokenUsageDetails", "DurationDetails", "EvalMetricResult",
                                "EvalMetricResultPerInvocation", "MetricError", "MetricReason",
                                "AgentVerdict", "JudgeCertificateNote", "JudgeRecord",
                                "MetricSummary"],
    "agenteval.schema.rubric": ["RubricContent", "Rubric", "RubricScore"],
    "agenteval.schema.run": ["ReplayInfo"],
    "agenteval.simulation.config": ["LlmBackedUserSimulatorConfig"],
    "agenteval.verdicts.sequential": ["CaseDecision", "Decisions"],
}


def test_eval_builds_no_model_it_never_validates_on_its_own() -> None:
    # Building them at import was 1.6% of eval's start-up; those that hold them still validate
    # them (the set below holds an invocation with intermediate data and a rubric).
    code = ("import sys, json, importlib; import agenteval.cli.run, agenteval.cli.commands; "
            f"deferred = {DEFERRED!r}; "
            "built = sorted(f'{m}.{c}' for m, cs in deferred.items() for c in cs "
            "if getattr(importlib.import_module(m), c).__pydantic_complete__); "
            "from agenteval.schema import EvalSet; "
            "s = EvalSet.model_validate({'eval_set_id': 's', 'eval_cases': [{'eval_id': 'c', "
            "'conversation': [{'invocation_id': 'i', 'user_content': {'parts': [{'text': 'hi'}]}, "
            "'intermediate_data': {'tool_uses': [{'name': 't', 'args': {}}]}, "
            "'rubrics': [{'rubric_id': 'r', 'rubric_content': {'text_property': 'ok'}}]}]}]}); "
            "inv = s.eval_cases[0].conversation[0]; "
            "print(json.dumps([built, type(inv.intermediate_data).__name__, "
            "inv.rubrics[0].rubric_content.text_property]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [[], "IntermediateData", "ok"]


# --- work kept for the moment a run waits on a model (`while_waiting`, `waiting`)


@pytest.fixture
def no_kept_work(monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval import lazy

    monkeypatch.setattr(lazy, "_work", [])
    monkeypatch.setattr(lazy, "_looking", [])
    monkeypatch.setattr(lazy, "_ON_TIME", 0.015)  # a loaded machine wakes a waiting loop late too


async def _until(check: Any, seconds: float = 3.0) -> None:
    """Waits (the loop idle) until `check()` or `seconds` have passed."""
    for _ in range(int(seconds / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)


def test_kept_work_runs_once_each_while_the_loop_waits(no_kept_work: None) -> None:
    from agenteval.lazy import waiting, while_waiting

    done: list[str] = []

    def first() -> None:
        done.append("first")
        raise OSError("left to its first use")

    def second() -> None:
        done.append("second")

    async def run() -> list[str]:
        while_waiting(first)
        while_waiting(second)
        while_waiting(first)  # kept once
        waiting()
        waiting()  # one series of looks per loop
        await _until(lambda: len(done) >= 2)  # a model's latency: the loop waits
        await asyncio.sleep(0.1)
        return list(done)

    assert asyncio.run(run()) == ["first", "second"]  # fails before (no such functions)


def test_kept_work_waits_while_the_loop_is_busy(no_kept_work: None) -> None:
    from agenteval.lazy import waiting, while_waiting

    done: list[float] = []

    async def run() -> tuple[float, list[float]]:
        loop = asyncio.get_running_loop()
        while_waiting(lambda: done.append(loop.time()))
        waiting()
        for _ in range(4):  # the loop's own work (requests going out) first: each look late
            time.sleep(0.03)
            await asyncio.sleep(0)
        busy_until = loop.time()
        await _until(lambda: bool(done))
        return busy_until, done

    busy_until, done = asyncio.run(run())
    assert len(done) == 1 and done[0] >= busy_until


def test_nothing_is_looked_at_without_kept_work(no_kept_work: None) -> None:
    from agenteval import lazy

    async def run() -> int:
        lazy.waiting()
        return len(asyncio.get_running_loop()._scheduled)  # type: ignore[attr-defined]

    assert asyncio.run(run()) == 0


def test_rouges_stemmer_is_imported_at_first_use_or_while_a_run_waits() -> None:
    # rouge-score's tokenizer (NLTK's Porter stemmer, the `regex` package) was 3.5% of eval's
    # start-up, which its first model call does not need (bench/README.md, session 40).
    code = ("import sys, json; import agenteval.cli.run, agenteval.cli.commands; "
            "from agenteval import lazy; from agenteval.criteria import rouge; "
            "before = 'rouge_score.tokenizers' in sys.modules; "
            "rouge.ResponseMatchScore('response_match_score', rouge.BaseCriterion(threshold=0.8)); "
            "kept = rouge._reference_tokenizer in lazy._work; "
            "print(json.dumps([before, kept, rouge.tokenize('Running dogs'), "
            "'rouge_score.tokenizers' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [False, True, ["run", "dog"], True]
