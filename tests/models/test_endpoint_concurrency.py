"""One concurrency model (models/pool.py): the calls in flight to one endpoint never exceed its
limit, whoever makes them, in whichever process. A real HTTP stub counts them while the agent,
an LLM judge and the user simulator of one run all call it, at parallelism 4 and 32 (the default
limit of an HTTP endpoint is the parallelism, at least 4), in this process and with the agent in
worker processes (`--isolation process`), and with a limit set below the parallelism."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from tests.fake_server import FakeServer, Step, chat
from tests.helpers import eval_set, inv

from agenteval.agents.loader import load_root_agent
from agenteval.runner.job import EvalJob
from agenteval.runner.run import run
from agenteval.runner.selection import Selection
from agenteval.runner.services import Services
from agenteval.schema import Concurrency, ConversationScenario, EvalCase, EvalConfig


class _WideServer(FakeServer):
    """The stub with a listen backlog of 256, so that 32 connections opened at once are all
    accepted at once (the default backlog of 5 would hold some back, hiding excess calls)."""

    def start(self) -> _WideServer:
        backlog = ThreadingHTTPServer.request_queue_size
        ThreadingHTTPServer.request_queue_size = 256
        try:
            super().start()
        finally:
            ThreadingHTTPServer.request_queue_size = backlog
        return self


@pytest.fixture
def stub() -> Iterator[FakeServer]:
    server = _WideServer().start()
    server.respond = chat(lambda text: "an answer", delay=0.15)
    yield server
    server.close()


def _held_until(server: FakeServer, peak: int) -> None:
    """Each call is held (before its 0.15 s) until `peak` calls were once in flight together, for
    up to 10 s: on a loaded machine calls that start late would otherwise find the first ones
    done, and the peak would fall short of the limit for want of CPU, not of slots."""
    answer = server.respond
    assert answer is not None

    def held(body: dict[str, object]) -> Step:
        deadline = time.monotonic() + 10
        while server.peak < peak and time.monotonic() < deadline:
            time.sleep(0.01)
        return answer(body)

    server.respond = held


def _run(tmp_path: Path, server: FakeServer, parallelism: int, limit: int | None = None,
         isolation: str | None = None) -> dict[str, int]:
    model = f"openai-compat:stub@{server.base_url}"
    agent = tmp_path / "stub_agent"
    agent.mkdir()
    source = f"root_agent = Agent(name='s', model={model!r}, instruction='Answer.')\n"
    (agent / "agent.py").write_text("from agenteval.agents import Agent\n" + source)
    s = eval_set("stubset", {f"c{i}": [inv("hello", "an answer"), inv("again", "an answer")]
                             for i in range(2 * parallelism)})
    s.eval_cases += [EvalCase(eval_id=f"sim{i}", conversation_scenario=ConversationScenario(
        starting_prompt="hello", conversation_plan="ask twice, then stop")) for i in range(parallelism)]
    config = EvalConfig(criteria={"response_match_score": 0.0, "final_response_match_v2": {
        "threshold": 0.0, "judge_model_options": {"judge_model": model, "num_samples": 1}}},
        user_simulator_config={"model": model, "max_allowed_invocations": 3})
    job = EvalJob(config=config, agent=load_root_agent(agent), agent_path=str(agent),
                  concurrency=Concurrency(cases=parallelism, model_calls={model: limit} if limit else {}),
                  selections=[Selection(None, s)], isolation=isolation)
    done = asyncio.run(run(job, Services.for_job(job, {})))
    assert done.spec.totals.case_runs == 3 * parallelism
    return done.spec.concurrency.model_calls


@pytest.mark.parametrize("isolation", [None, "process"])
@pytest.mark.parametrize("parallelism", [4, 32])
def test_agent_judge_and_simulator_share_one_limit_per_endpoint(
        tmp_path: Path, stub: FakeServer, parallelism: int, isolation: str | None) -> None:
    # With process isolation the agent and the simulator call from worker processes and the
    # judge from this one: the slots of one semaphore bound them all (models.limits.SharedSlots).
    _held_until(stub, parallelism)
    limits = _run(tmp_path, stub, parallelism, isolation=isolation)
    assert list(limits.values()) == [parallelism]
    system = [str(body["messages"][0]["content"]) for body in stub.received]
    callers = {"agent": system.count("Answer."),
               "judge": sum(t.startswith("You are a strict, impartial judge") for t in system),
               "simulator": sum(t.startswith("You are role-playing a human user") for t in system)}
    assert all(callers.values()) and sum(callers.values()) == len(system)  # all three called it
    assert stub.peak == parallelism  # all of the limit used, never more


@pytest.mark.parametrize("isolation", [None, "process"])
def test_a_limit_below_the_parallelism_holds(tmp_path: Path, stub: FakeServer, isolation: str | None) -> None:
    # Under process isolation each of the 8 workers' own share is 1: 8 calls in flight before
    # the workers and this process took the slots of one semaphore.
    _held_until(stub, 3)
    limits = _run(tmp_path, stub, 8, limit=3, isolation=isolation)
    assert list(limits.values()) == [3]
    assert stub.peak == 3
