"""A judge's follow-up call on the embedded engine gets the slot its first call released, even
with more calls in flight than worker threads (`LocalModel._limiter`) and slots. The engine is
played by a fake server that takes a while per call and records the slot each call ran in: the
slot table and the model's scheduling are under test, not llama.cpp."""

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from agenteval.models import local as local_module
from agenteval.models.base import Message, ModelRequest
from agenteval.models.local import LocalModel
from agenteval.models.local_slots import SlotTable


class SlowServer:
    """llama.cpp's chat completion as a 0.1 s call; records (slot, user message, reply begun)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, str, str]] = []
        self.lock = threading.Lock()

    def handle_chat_completions(self, body: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.1)
        messages = body["messages"]
        with self.lock:
            self.calls.append((body["id_slot"], messages[-2]["content"], messages[-1]["content"]))
        return {"choices": [{"message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 1}, "timings": {"prompt_n": 5}}


def _question(text: str, begun: str) -> ModelRequest:
    return ModelRequest(messages=(Message("system", "judge instructions and examples"),
                                  Message("user", text), Message("assistant", begun)))


def _run(hold: float, tmp_path: Path) -> tuple[list[tuple[int, str, str]], int]:
    model = LocalModel(cache_dir=tmp_path, slots=1)  # 1 slot, 2 worker threads
    server = SlowServer()
    table = SlotTable(1, None, None, "m")
    table.hold = hold
    local_module._ENGINES[model._key] = local_module._Engine(server, "k", 0.0, table)

    async def verdict(name: str, failing: bool) -> None:
        await model.generate(_question(name, '{"verdict": "'))
        if failing:  # its rationale: the same question, the reply begun further
            await model.generate(_question(name, '{"verdict": "invalid", "rationale": "'))

    async def main() -> None:
        first = asyncio.create_task(verdict("failing question", True))
        await asyncio.sleep(0.02)  # it runs; five more questions wait for a thread and the slot
        await asyncio.gather(first, *(verdict(f"question {i}", False) for i in range(5)))

    try:
        asyncio.run(main())
    finally:
        local_module._ENGINES.pop(model._key, None)
    return server.calls, table.continued


def test_a_failing_verdicts_rationale_follows_its_label_in_the_same_slot(tmp_path: Path) -> None:
    calls, continued = _run(0.5, tmp_path)
    assert [c[1] for c in calls[:2]] == ["failing question", "failing question"]
    assert calls[1][2].endswith('"rationale": "') and continued == 1
    assert len(calls) == 7


def test_without_the_hold_the_waiting_questions_go_first(tmp_path: Path) -> None:
    # What the hold prevents: the follow-up queued behind every call in flight (its question's
    # tail evaluated again in a slot that has held four other questions since).
    calls, continued = _run(0.0, tmp_path)
    assert calls[1][1] != "failing question" and continued == 0
