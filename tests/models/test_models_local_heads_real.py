"""An agent's head (system message and tools) saved by one engine and restored by the next, on
the real model: the next engine evaluates only the prompt's last token, and replies as the cold
engine did, token for token."""

import gc
import shutil
from pathlib import Path

import pytest
from tests.models.local_marks import EMBEDDED_MODEL

from agenteval.models import local as local_module
from agenteval.models.base import Message, ModelRequest, ToolSpec
from agenteval.models.local import LocalModel
from agenteval.models.local_assets import default_cache_dir, model_file

pytestmark = EMBEDDED_MODEL

SYSTEM = ("You roll dice for the user. When asked to roll a die, call roll_die with the number of "
          "sides; then report the result in one short sentence.")
ROLL = ToolSpec(name="roll_die", description="Roll a die and return the rolled result.",
                parameters={"type": "object", "properties": {"sides": {"type": "integer"}},
                            "required": ["sides"]})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # one backend is enough here: each extra run costs real inference


def _request(question: str) -> ModelRequest:
    return ModelRequest(messages=(Message("system", SYSTEM), Message("user", question)),
                        tools=(ROLL,), temperature=0.0, max_tokens=24)


async def _engine_run(cache: Path, questions: list[str]) -> tuple[list[str], list[int], int, int]:
    """Replies, cached prompt tokens per call, files saved and restored, by a fresh engine."""
    model = LocalModel(cache_dir=cache, slots=1, ctx_per_slot=1024)
    replies, cached = [], []
    for question in questions:
        response = await model.generate(_request(question))
        replies.append(response.text + repr([(c.name, c.args) for c in response.generations[0].tool_calls]))
        cached.append(response.usage.cached_tokens)
    table = (await model._engine()).table
    saved, restored = table.saved, table.restored
    local_module._ENGINES.clear()  # as the process's exit does: the next engine starts afresh
    gc.collect()
    return replies, cached, saved, restored


async def test_a_restored_head_gives_the_cold_reply(tmp_path: Path) -> None:
    source = model_file()
    if not source.is_file():
        pytest.skip("the model file is not assembled yet")
    cache = tmp_path / "models"
    cache.mkdir()
    (cache / source.name).symlink_to(source)
    for stamp in default_cache_dir().glob(f"{source.name}.*"):
        shutil.copy(stamp, cache / stamp.name)
    questions = ["Roll a 6-sided die.", "What can you do?"]
    cold, cold_cached, saved, restored = await _engine_run(cache, questions[:1])
    assert (saved, restored, cold_cached) == (1, 0, [0])
    assert len(list((cache / "prompt-states").glob("head-*.bin"))) == 1
    warm, warm_cached, saved, restored = await _engine_run(cache, questions)
    assert (saved, restored) == (0, 1)
    assert warm[0] == cold[0]  # restored: the same reply, token for token
    # The whole prompt but its last token came from the file; the second question, from the
    # head the slot holds.
    assert warm_cached[0] > 100 and warm_cached[1] > 100
