"""A model pool per run: its own limits, never the process's."""

import asyncio

import pytest

from agenteval.errors import DataError
from agenteval.models import ModelRequest, ModelUnavailable, ScriptedModel, resolve_model
from agenteval.models.base import Message
from agenteval.models.pool import ModelPool, check_limits
from agenteval.runner import Services
from agenteval.schema import Concurrency


def test_two_pools_keep_their_limits_apart() -> None:
    a = ModelPool({}, {"ollama:m": 2})
    b = ModelPool({}, default_http=9)
    assert a.get("ollama:m").max_concurrency == 2 and b.get("ollama:m").max_concurrency == 9
    assert a.get("ollama:m") is a.get("ollama:m") and a.get("ollama:m") is not b.get("ollama:m")
    assert a.limits() == {"ollama:m": 2} and b.names() == ["ollama:m"]


def test_a_run_never_changes_the_process_wide_limit() -> None:
    shared = resolve_model("ollama:pool-test", {})
    before = shared.max_concurrency
    services = Services.create({}, Concurrency(cases=32, model_calls={"ollama:pool-test": 1}))
    assert services.models.get("ollama:pool-test").max_concurrency == 1
    assert Services.create({}, Concurrency(cases=32)).models.get("ollama:pool-test").max_concurrency == 32
    assert resolve_model("ollama:pool-test", {}).max_concurrency == before


def test_limits_are_keyed_by_canonical_name_and_validated() -> None:
    assert check_limits({"gemini-2.5-flash": 3}) == {"gemini:gemini-2.5-flash": 3}
    with pytest.raises(DataError, match=r"model_calls\.nope: unknown model 'nope'"):
        check_limits({"nope": 3})
    with pytest.raises(DataError, match=r"model_calls\.local: calls in flight must be an integer >= 1"):
        check_limits({"local": 0})
    with pytest.raises(DataError, match="integer"):
        check_limits({"local": True})


def test_missing_key_is_reported_when_the_model_is_asked_for() -> None:
    pool = ModelPool({})
    with pytest.raises(ModelUnavailable, match="OPENAI_API_KEY"):
        pool.get("openai:gpt-4o-mini")
    assert ModelPool({"OPENAI_API_KEY": "k"}).get("openai:gpt-4o-mini").name == "openai:gpt-4o-mini"


def test_provided_models_are_used_under_their_own_names_within_their_limit() -> None:
    model = ScriptedModel(lambda req: "ok", latency=0.05)
    pool = ModelPool({}, {"mine": 2}, provided={"mine": model})
    llm = pool.get("mine")

    async def many() -> None:
        request = ModelRequest(messages=(Message("user", "hi"),))
        await asyncio.gather(*(llm.generate(request) for _ in range(6)))

    asyncio.run(many())
    assert model.max_in_flight == 2 and pool.limits() == {"mine": 2}


def test_rates_hold_across_every_caller_of_an_endpoint() -> None:
    import time

    from agenteval.schema import EndpointOptions

    model = ScriptedModel(lambda req: "ok")
    # 120 requests a minute = 2 a second; the bucket starts full (a minute's allowance), so
    # drain it first, then 4 more calls need about 2 seconds whoever makes them.
    pool = ModelPool({}, {"mine": 8}, provided={"mine": model},
                     endpoints={"mine": EndpointOptions(requests_per_minute=120)})
    llm = pool.get("mine")
    request = ModelRequest(messages=(Message("user", "hi"),))

    async def burst(n: int) -> None:
        await asyncio.gather(*(llm.generate(request) for _ in range(n)))

    asyncio.run(burst(120))
    started = time.monotonic()
    asyncio.run(burst(4))
    assert 1.5 <= time.monotonic() - started < 4


def test_token_rate_waits_for_the_debt_of_earlier_replies() -> None:
    import time

    from agenteval.models.rate import RateBucket

    async def main() -> float:
        bucket = RateBucket(600)  # 10 tokens a second
        bucket.spend(600 + 10)  # a reply used a minute's allowance and 10 more
        started = time.monotonic()
        await bucket.take(0)
        return time.monotonic() - started

    assert 0.8 <= asyncio.run(main()) < 2
