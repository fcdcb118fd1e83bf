"""The embedded engine's llama.cpp parameters (`models.local._params`): built without loading the
model (only `xllamacpp` is needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.models import local as local_module

xllamacpp = pytest.importorskip("xllamacpp")


def _params(tmp_path: Path, states: Path | None) -> object:
    key = local_module._EngineKey(str(tmp_path / "model.gguf"), 4, 4096, 2)
    return local_module._params(xllamacpp, key, states)


def test_no_idle_slot_is_copied_into_the_ram_cache_nobody_reads(tmp_path: Path) -> None:
    # Every call names its slot, so llama.cpp never reads its RAM prompt cache for them; the copy
    # of each idle slot made when a call starts (~70 MB a judge's slot) was pure cost.
    params = _params(tmp_path, tmp_path)
    assert params.cache_idle_slots is False  # type: ignore[attr-defined]
    # The cache itself stays, for clients of the HTTP listener (requests that name no slot).
    assert params.cache_ram_mib == local_module._PROMPT_CACHE_MIB  # type: ignore[attr-defined]


def test_no_start_up_fit(tmp_path: Path) -> None:
    # The fit loads the vocabulary a first time to size a context that is set here anyway.
    params = _params(tmp_path, tmp_path)
    assert params.fit_params is False  # type: ignore[attr-defined]


def test_the_shipped_rest_is_unchanged(tmp_path: Path) -> None:
    params = _params(tmp_path, None)
    assert (params.n_parallel, params.n_ctx) == (4, 4 * 4096)  # type: ignore[attr-defined]
    assert params.cpuparams.n_threads == params.cpuparams_batch.n_threads == 2  # type: ignore[attr-defined]
    assert params.slot_save_path == ""  # type: ignore[attr-defined]  # no states directory
    with_states = _params(tmp_path, tmp_path / "prompt-states")
    assert with_states.slot_save_path.endswith("prompt-states/")  # type: ignore[attr-defined]
