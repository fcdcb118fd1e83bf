"""The run's services and its per-run state compare by identity and keep object's repr.

They hold models, connections, callables or a case run's progress: two of them are never the
same by their fields. Each method `dataclass` generates is compiled when `eval` starts
(bench/README.md, session 39), so these have none but `__init__`.
"""

import pytest

from agenteval.agents.mock_tools import ToolServer
from agenteval.criteria.judge.engine.progress import CaseJudging
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.runner.driver import Scorer, Source
from agenteval.runner.evaluate import _Case
from agenteval.runner.executors.local import LocalExecutor
from agenteval.runner.selection import StreamedCases
from agenteval.runner.services import Services
from agenteval.runner.streamed import StreamedRun

CLASSES = [ToolServer, CaseJudging, JudgeService, Scorer, Source, _Case, LocalExecutor, StreamedCases,
           Services, StreamedRun]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_a_service_compares_by_identity_with_objects_repr(cls: type) -> None:
    assert cls.__eq__ is object.__eq__ and cls.__hash__ is object.__hash__
    assert cls.__repr__ is object.__repr__


def test_two_judge_services_alike_are_two() -> None:
    def resolve(name: str) -> object:
        raise AssertionError(name)

    a, b = JudgeService(resolve), JudgeService(resolve)  # type: ignore[arg-type]
    assert a == a and a != b and len({a, b}) == 2
    assert repr(a).startswith("<agenteval.criteria.judge.engine.service.JudgeService object at ")
