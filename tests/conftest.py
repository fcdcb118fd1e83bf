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


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """`python -m pytest -n 2 --dist loadgroup` (pytest-xdist, in the `dev` extra) keeps the
    groups of pytest_collection_modifyitems in their order: the model's group first, not
    reordered by size (xdist's default). Runs before xdist's own pytest_configure (trylast)."""
    if config.pluginmanager.hasplugin("xdist") and config.option.dist == "loadgroup":
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup` (pytest-xdist): the embedded model's tests are one group,
    so that one model process runs at a time (they use both cores, and share the prompt-state
    cache on disk), and are sent first, so that the other worker runs the rest beside them
    instead of idling while they finish; the Ray tests are one group (one local cluster), sent
    next, so that they run in a worker before any in-process pytester run; every
    other test is grouped by its file (its module-scoped fixtures, a browser or a server, are
    set up once). Without xdist nothing changes: same tests, same order."""
    if not getattr(config.option, "loadgroup", False):  # set on xdist's workers under loadgroup only
        return
    for item in items:
        if item.get_closest_marker("model") is not None:
            group = "model"
        elif "ray_cluster" in getattr(item, "fixturenames", ()):
            group = "ray"
        else:
            group = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))
    # Stable sort: the model group first, then the Ray group (so that it runs in a worker no
    # pytester test has run in yet: pytester puts back sys.modules after each test, and agenteval
    # or Ray imported again beside Ray's loaded C extension broke `ray.init` and the pickling of
    # the criteria for Ray's workers), everything else in collection order.
    items.sort(key=lambda item: (item.get_closest_marker("model") is None,
                                 "ray_cluster" not in getattr(item, "fixturenames", ())))
