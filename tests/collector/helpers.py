"""A live collector on a free port for tests: real HTTP, real assembler and scorer, a temporary
run history; outcomes gathered as the worker reports them."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval.collector import Assembler, Collector, ConversationScorer, JudgeBudget, Limits, Receiver
from agenteval.collector.scoring import Outcome, Target
from agenteval.datasets import load_eval_set
from agenteval.models.base import LLM
from agenteval.runner import Services, resolve_config
from agenteval.schema import EvalConfig

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
# reference-free and judged by nobody: the tests that do not test the judge stay fast
NO_JUDGE = EvalConfig.model_validate({"criteria": {
    "tool_trajectory_single_tool_use": {"threshold": 1.0, "tool_name": "get_weather"}}})


@dataclass
class Live:
    """A running collector and what it has reported."""

    collector: Collector
    root: Path
    outcomes: list[tuple[Outcome, float]] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.collector.receiver.port}/v1/traces"

    def wait_for(self, n: int, timeout: float = 60.0) -> list[Outcome]:
        """The first `n` outcomes, waiting for them (AssertionError after `timeout`)."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while len(self.outcomes) < n:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self.outcomes)} outcomes after {timeout} s, wanted {n}: {self.logs}"
                self.changed.wait(left)
            return [o for o, _ in self.outcomes[:n]]


@contextmanager
def live_collector(root: Path, eval_sets: Sequence[Path] = (), free: EvalConfig = NO_JUDGE, *,
                   limits: Limits | None = None, models: Mapping[str, LLM] | None = None,
                   judge_model: str | None = None, sample_rate: float = 1.0,
                   budget: JudgeBudget | None = None) -> Iterator[Live]:
    """A collector on 127.0.0.1 (a free port), recording under `root`, stopped (drained) after."""
    targets = [Target(p, load_eval_set(p), *resolve_config(None, p)) for p in eval_sets]
    services = Services.create({}, store_root=root, models=models)
    scorer = ConversationScorer(root, services, targets, free, judge_model=judge_model,
                                sample_rate=sample_rate, budget=budget)
    receiver = Receiver(Assembler(limits or Limits(quiet_seconds=0.3)), "127.0.0.1", 0)
    live = Live(None, root)  # type: ignore[arg-type]

    def heard(outcome: Outcome, seconds: float) -> None:
        with live.changed:
            live.outcomes.append((outcome, seconds))
            live.changed.notify_all()

    receiver.log = live.logs.append
    live.collector = Collector(receiver, scorer, on_outcome=heard, log=live.logs.append, tick=0.02)
    live.collector.start()
    try:
        yield live
    finally:
        live.collector.stop(drain=True, timeout=60)


def otlp_json(spans: Sequence[dict[str, Any]]) -> bytes:
    """An OTLP/JSON export of `spans` (already in OTLP/JSON form) under one resource and scope."""
    scope = {"scope": {"name": "t"}, "spans": list(spans)}
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [scope]}]}).encode()
