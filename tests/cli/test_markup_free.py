"""Paths, ids and names a user chose are printed as they are: brackets in them are never taken
for the console's markup (which ate them, or ended the command with a traceback)."""

import json
from pathlib import Path

from click.testing import CliRunner

from agenteval.cli.main import cli
from tests.helpers import eval_set, inv

AGENT = "def root_agent(text):\n    return 'answer to ' + text\n"


def test_bracketed_paths_and_ids_are_printed_as_they_are(tmp_path: Path) -> None:
    agent = tmp_path / "ag[red]x"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("[red]set[/red]", {"good": [inv("x", "answer to x")], "bad": [inv("y", "no")]})
    (agent / "s.evalset.json").write_text(s.model_dump_json(exclude_none=True))
    (agent / "test_config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.9}}))
    out = tmp_path / "rep [draft]"
    out.mkdir()
    # `[/x]` closes no tag: printed as markup, it raised rich's MarkupError after the run
    # (exit 1, a traceback, the history not recorded); `[draft]` and `[red]` vanished.
    r = CliRunner().invoke(cli, ["eval", str(agent), str(agent / "s.evalset.json"),
                                 "--output", str(out / "out[bold].json"),
                                 "--markdown", str(out / "[/x].md")])
    assert r.exit_code == 1, r.output  # (the run's own: a case failed)
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert f"Using criteria from {agent / 'test_config.json'}" in r.output
    assert f"Results written to {out / 'out[bold].json'}" in r.output
    assert f"Report written to {out / '[/x].md'}" in r.output
    assert "Recorded run " in r.output and (out / "[/x].md").is_file()
    show = CliRunner().invoke(cli, ["runs", "show", "latest", "--root", str(agent)],
                              env={"COLUMNS": "200"})
    assert show.exit_code == 0, show.output
    assert "Run ag[red]x_[red]set[/red]_" in show.output  # its title
    a = json.loads((out / "out[bold].json").read_text())["eval_set_result_id"]
    compared = CliRunner().invoke(cli, ["compare", str(out / "out[bold].json"), "latest",
                                        "--root", str(agent)], env={"COLUMNS": "200"})
    assert compared.exit_code in (0, 1), compared.output
    assert f"[red]set[/red]: A = {a}" in compared.output
