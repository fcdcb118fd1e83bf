"""The embedded model, for real (marked `model`; skipped when `agenteval[local]` is missing).

The first run assembles the 1.1 GB model into ~/.cache/agenteval/models (seconds); every test
shares one loaded model (the backend keeps it per process). Prompts and outputs are short.
"""

from __future__ import annotations

import json

import anyio
import pytest
from tests.models.local_marks import EMBEDDED_MODEL

from agenteval.models import (
    LocalModel,
    Message,
    ModelError,
    ModelRequest,
    OpenAICompatModel,
    ToolCallRequest,
    ToolSpec,
)
from agenteval.models import local as local_module

pytestmark = EMBEDDED_MODEL

YES_NO = 'root ::= "YES" | "NO"'
JUDGE = Message("system", "You are a strict judge. Answer YES or NO.")
ROLL_DIE = ToolSpec(
    "roll_die",
    "Roll a die with the given number of sides and return the result.",
    {"type": "object", "properties": {"sides": {"type": "integer"}}, "required": ["sides"]},
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # one backend is enough here: each extra run costs real inference


@pytest.fixture(scope="module")
def model() -> LocalModel:
    return LocalModel()


def ask(question: str, **kwargs: object) -> ModelRequest:
    return ModelRequest(messages=(JUDGE, Message("user", question)), **kwargs)  # type: ignore[arg-type]


async def test_yes_no_under_a_grammar_with_usage(model: LocalModel) -> None:
    yes = await model.generate(ask("Is 7 a prime number?", grammar=YES_NO, max_tokens=4))
    no = await model.generate(ask("Is Paris the capital of Germany?", grammar=YES_NO, max_tokens=4))
    assert (yes.text, no.text) == ("YES", "NO")
    assert yes.usage.prompt_tokens > 0 and yes.usage.completion_tokens > 0
    assert no.usage.cached_tokens > 0  # the shared system prompt was reused
    assert yes.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"


async def test_json_schema_constrained_answer(model: LocalModel) -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
    }
    request = ModelRequest(
        messages=(Message("user", "Ann is 31 years old. Give her name and age as JSON."),),
        json_schema=schema, max_tokens=40,
    )
    answer = json.loads((await model.generate(request)).text)
    assert answer == {"name": "Ann", "age": 31}


async def test_tool_call_parsed_from_the_text(model: LocalModel) -> None:
    request = ModelRequest(
        messages=(Message("user", "Roll a 20-sided die."),), tools=(ROLL_DIE,), max_tokens=60,
    )
    generation = (await model.generate(request)).generations[0]
    assert generation.tool_calls == (ToolCallRequest("roll_die", {"sides": 20}),), generation.text


async def test_three_samples(model: LocalModel) -> None:
    question = "Name one colour of the rainbow. One word."
    sampled = await model.generate(ask(question, n=3, temperature=0.9, seed=11, max_tokens=5))
    assert len(sampled.generations) == 3 and all(g.text for g in sampled.generations)
    assert sampled.usage.completion_tokens >= 3
    again = await model.generate(ask(question, n=3, temperature=0.9, seed=11, max_tokens=5))
    assert [g.text for g in again.generations] == [g.text for g in sampled.generations]  # seeded
    greedy = await model.generate(ask(question, n=3, max_tokens=5))
    assert len({g.text for g in greedy.generations}) == 1 and len(greedy.generations) == 3


async def test_concurrent_callers_share_the_model(model: LocalModel) -> None:
    results: list[str] = []

    async def one(question: str) -> None:
        results.append((await LocalModel().generate(ask(question, grammar=YES_NO, max_tokens=4))).text)

    async with anyio.create_task_group() as tg:
        for q in ("Is Tokyo in Japan?", "Is 2 + 2 equal to 5?", "Is the sun hot?"):
            tg.start_soon(one, q)
    assert sorted(results) == ["NO", "YES", "YES"]
    assert len(local_module._ENGINES) == 1  # every LocalModel used the one loaded model


async def test_errors_are_model_errors(model: LocalModel) -> None:
    with pytest.raises(ModelError, match="grammar"):
        await model.generate(ask("Is 2 even?", grammar="root ::= (", max_tokens=4))


async def test_openai_backend_against_llama_cpp_http_server(model: LocalModel) -> None:
    # xllamacpp's Server also serves llama.cpp's HTTP API on 127.0.0.1 (key-protected).
    base_url, key = await model.http_endpoint()
    http = OpenAICompatModel(model="local", base_url=base_url, api_key=key, max_attempts=1)
    try:
        reply = await http.generate(ask("Is 7 a prime number?", grammar=YES_NO, max_tokens=4))
        assert reply.text == "YES" and reply.usage.completion_tokens > 0
        keyless = OpenAICompatModel(model="local", base_url=base_url, max_attempts=1)
        with pytest.raises(ModelError, match="401"):
            await keyless.generate(ask("Is 7 a prime number?", max_tokens=2))
        await keyless.aclose()
    finally:
        await http.aclose()
