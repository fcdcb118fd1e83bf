"""One local Ray cluster (2 CPUs, no dashboard) shared by the Ray tests of a module (starting one
costs seconds), stopped after them, so the rest of the suite does not share the machine with an
idle cluster. Skipped, with the reason, when Ray is not installed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'agenteval[ray]')")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    if started:
        ray.shutdown()

