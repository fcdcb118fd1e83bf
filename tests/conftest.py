"""Test fixtures: paths to the ADK and parity fixtures (copied into tests/fixtures/, see its
README, so that a clone passes alone) and the fake model server."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
ADK = FIXTURES / "adk"
PARITY = FIXTURES / "parity"


@pytest.fixture
def parity_dir() -> Path:
    return PARITY


@pytest.fixture
def adk_dir() -> Path:
    return ADK


from tests.fake_server import server  # noqa: E402, F401  (the fixture, for every test)
