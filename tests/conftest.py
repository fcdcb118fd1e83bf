"""Shared test fixtures: paths to the shared ADK fixtures and small builders."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "fixtures"
ADK = SHARED / "adk"
PARITY = SHARED / "parity"


@pytest.fixture
def parity_dir() -> Path:
    return PARITY


@pytest.fixture
def adk_dir() -> Path:
    return ADK


from tests.fake_server import server  # noqa: E402, F401  (the fixture, for every test)
