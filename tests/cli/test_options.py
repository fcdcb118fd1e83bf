"""Number options refuse NaN (it passes every range check, as no comparison with it is true);
Ctrl-C in any command exits 130."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from agenteval.cli.main import cli


@pytest.mark.parametrize("argv", [
    ["eval", "AGENT", "SET", "--case_timeout", "nan"],
    ["eval", "AGENT", "SET", "--judge_timeout", "NaN"],
    ["eval", "AGENT", "SET", "--until_decided", "--decide_alpha", "nan"],
    ["eval", "AGENT", "SET", "--until_decided", "--decide_rate", "nan"],
    ["score", "SET", "--actual", "SET", "--judge_timeout", "nan"],
    ["compare", "SET", "SET", "--alpha", "nan"],
    ["compare", "SET", "SET", "--margin", "nan"],
    ["collect", "--quiet_seconds", "nan"],
    ["collect", "--sample_rate", "nan"],
    ["collect", "--max_judge_calls_per_minute", "nan"],
    ["judge", "calibrate", "SET", "--target", "nan"],
])
def test_nan_is_refused_in_one_line_before_anything_runs(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "set.json").write_text("{}")
    args = [str(tmp_path / "agent") if a == "AGENT" else str(tmp_path / "set.json") if a == "SET" else a
            for a in argv]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    assert "nan' is not a number" in r.output.lower() and "Traceback" not in r.output


def test_the_otlp_endpoint_is_an_http_url_named_where_it_came_from() -> None:
    from agenteval.cli.options import otlp_from

    assert otlp_from("https://h:4318", {}) == "https://h:4318"
    assert otlp_from(None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h"}) == "http://h"
    assert otlp_from(None, {}) is None
    with pytest.raises(click.BadParameter, match="expected an http:// or https:// URL") as err:
        otlp_from(None, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "h:4317"})
    assert err.value.param_hint == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"


@pytest.mark.parametrize(("where", "argv"), [
    ("agenteval.cli.run.check_agent_path", ["eval", "AGENT", "SET"]),  # before a run has begun
    ("agenteval.cli.commands.check_rereadable", ["score", "SET", "--actual", "SET"]),
    ("agenteval.cli.commands.migrate_command", ["migrate", "SET", "NEW"]),  # any command
])
def test_ctrl_c_anywhere_in_a_command_exits_130_never_1(tmp_path: Path, where: str, argv: list[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Exit 1 says "a case failed": an interrupted command must not say it (click's own answer to
    # Ctrl-C is "Aborted!" and 1).
    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(where, interrupted)
    (tmp_path / "agent").mkdir()
    (tmp_path / "set.json").write_text("{}")
    paths = {"AGENT": tmp_path / "agent", "SET": tmp_path / "set.json", "NEW": tmp_path / "new.json"}
    r = CliRunner().invoke(cli, [str(paths[a]) if a in paths else a for a in argv])
    assert r.exit_code == 130, r.output
    assert "interrupted" in r.output and "Aborted" not in r.output
