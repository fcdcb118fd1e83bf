"""The judge cache: a file that is not a usable database is named, before and during a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval.errors import DataError
from agenteval.store import JudgeCacheDB


def test_a_missing_cache_passes_the_check_and_is_not_created(tmp_path: Path) -> None:
    cache = JudgeCacheDB(tmp_path / "c.sqlite")
    cache.check()
    assert not (tmp_path / "c.sqlite").exists()
    cache.put("k", "v")
    assert cache.get("k") == "v"
    cache.check()


def test_a_corrupt_cache_is_named_by_check_get_and_put(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_text("not a database " * 100)
    for use in (lambda c: c.check(), lambda c: c.get("k"), lambda c: c.put("k", "v")):
        with pytest.raises(DataError, match=r"c\.sqlite: cannot use the judge cache: file is not a database"):
            use(JudgeCacheDB(path))
    assert path.read_text() == "not a database " * 100  # left as it was
