"""One local Ray cluster (2 CPUs, no dashboard) shared by the Ray tests of this package (starting
one costs 5-10 s, stopping it 3), stopped after its last test, so the rest of the suite does not
share the machine with an idle cluster: the modules that use it (`test_ray_*`) run last in the
package, one after the other. Skipped, with the reason, when Ray is not installed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="package")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'agenteval[ray]')")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    if started:
        ray.shutdown()

