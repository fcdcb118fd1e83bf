"""`agenteval.lazy.names_from`: a package's names imported from their submodules when first asked for."""

import sys
from pathlib import Path

import pytest


def test_a_name_is_imported_from_its_submodule_when_asked_for_and_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "lazypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from agenteval.lazy import names_from\n__getattr__ = names_from(__name__, {'value': 'heavy'})\n")
    (pkg / "heavy.py").write_text("value = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import lazypkg  # type: ignore[import-not-found]

        assert "lazypkg.heavy" not in sys.modules  # nothing imported until asked for
        assert lazypkg.value == 42
        assert "lazypkg.heavy" in sys.modules and lazypkg.__dict__["value"] == 42  # kept: asked once
        with pytest.raises(AttributeError, match="'lazypkg' has no attribute 'other'"):
            _ = lazypkg.other
    finally:
        for name in ("lazypkg", "lazypkg.heavy"):
            sys.modules.pop(name, None)
