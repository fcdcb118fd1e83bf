"""Criteria from other packages through the `agenteval.criteria` entry points: the example plugin
in examples/criterion_plugin, made visible to importlib.metadata as an installed package is."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli
from agenteval.criteria.plugins import plugin_names
from tests.conftest import REPO
from tests.helpers import eval_set, inv

PLUGIN = REPO / "examples" / "criterion_plugin"


def _install(site: Path) -> None:
    """What `pip install examples/criterion_plugin` leaves for importlib.metadata: a dist-info
    with the entry points, and the package importable."""
    info = site / "agenteval_polite-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: agenteval-polite\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[agenteval.criteria]\npolite_v1 = agenteval_polite:Polite\n")
    (site / "agenteval_polite.pth").write_text(str(PLUGIN) + "\n")


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    _install(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(PLUGIN))
    yield site
    sys.modules.pop("agenteval_polite", None)


def test_a_plugin_criterion_is_found_and_scores(installed: Path, tmp_path: Path) -> None:
    assert "polite_v1" in plugin_names()
    s = eval_set("s", {"a": [inv("hi", "Thank you for asking!")], "b": [inv("hi", "No.")]})
    path = tmp_path / "s.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"criteria": {"polite_v1": 0.5}}))
    out = tmp_path / "o.json"
    r = CliRunner().invoke(cli, ["score", str(path), "--actual", str(path), "--config_file_path", str(cfg),
                                 "-o", str(out)])
    assert r.exit_code == 1, r.output  # case b is not polite
    scores = {c["eval_id"]: c["overall_eval_metric_results"][0]["score"]
              for c in json.loads(out.read_text())["eval_case_results"]}
    assert scores == {"a": 1.0, "b": 0.0}


def test_an_unused_plugin_is_never_imported(installed: Path, tmp_path: Path) -> None:
    s = eval_set("s", {"a": [inv("hi", "ok")]})
    path = tmp_path / "s.evalset.json"
    path.write_text(s.model_dump_json(exclude_none=True))
    code = ("import sys; from agenteval.cli.main import cli\n"
            "try:\n"
            f"    cli.main(args=['score', {str(path)!r}, '--actual', {str(path)!r}])\n"
            "except SystemExit:\n    pass\n"
            "print('PLUGIN', 'agenteval_polite' in sys.modules)")
    env_path = f"{installed}:{PLUGIN}"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**__import__("os").environ, "PYTHONPATH": env_path})
    assert "PLUGIN False" in p.stdout, p.stdout + p.stderr
