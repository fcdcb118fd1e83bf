"""`agenteval runs`, `report` and `compare`: the run history and reports over stored results.

A RUN is a path to a result JSON file, or a run in the store's database
(`<root>/.agenteval/history.sqlite`): its id, a unique id prefix, `latest` or `previous`.
Exit codes: `runs` and `report` 0, or 2 on bad input; `compare` 1 when something regressed
beyond the margin, else 0, or 2 on bad input.
"""

from __future__ import annotations

import json
import shlex
import sys
from datetime import datetime
from typing import TYPE_CHECKING

import click

from agenteval.cli import options as opt

if TYPE_CHECKING:
    from rich.table import Table

    from agenteval.store import RunRow

FORMATS = ("console", "html", "junit", "markdown")  # agenteval.reporting.FORMATS, without importing it
_FAILING_SHOWN = 20

root_option = click.option("--root", type=click.Path(file_okay=False), default=None,
                           help="Store root holding .agenteval/ (default: the current directory).")


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _num(value: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if value is None else fmt.format(value)


def _runs_table(rows: list[RunRow]) -> Table:
    from rich.table import Table

    table = Table(title="Runs (newest first)", title_justify="left")
    numeric = ("runs", "passed", "failed", "seconds", "tokens")
    for col in ("run id", "created", "eval set", "agent", "agent model", "judge model", *numeric):
        table.add_column(col, overflow="fold", justify="right" if col in numeric else "left",
                         no_wrap=col in ("run id", "created"))
    for r in rows:
        table.add_row(r.run_id, _when(r.created), r.eval_set_id, r.agent or "-", r.agent_model or "-",
                      r.judge_model or "-", str(r.num_runs), f"[green]{r.cases_passed}[/]",
                      f"[red]{r.cases_failed}[/]" if r.cases_failed else "0",
                      _num(r.duration_seconds), _num(r.total_tokens, "{:.0f}"))
    return table


def _list(root: str, limit: int | None) -> int:
    from rich.console import Console

    from agenteval.store import RunStore

    store = RunStore(root)
    rows = store.list_runs(limit)
    console = Console()
    if not rows:
        console.print(f"No runs recorded in {store.path}")
    else:
        console.print(_runs_table(rows))
    return 0


def _flatten(value: object, prefix: str = "") -> list[tuple[str, object]]:
    """`{"models": {"agent": "local"}}` → `[("models.agent", "local")]`; a list of objects is
    numbered (`eval_sets[0].file`), other lists stay whole."""
    if isinstance(value, dict) and value:
        return [kv for k, v in value.items() for kv in _flatten(v, f"{prefix}.{k}" if prefix else k)]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [kv for i, v in enumerate(value) for kv in _flatten(v, f"{prefix}[{i}]")]
    return [(prefix, value)]


def _show_value(key: str, value: object) -> str:
    if key.split(".")[-1] in ("created", "recorded", "started", "ended") and isinstance(value, float):
        return _when(value)
    if key.endswith("_seconds") and isinstance(value, float):
        return f"{value:.3f}"
    if key.endswith("argv") and isinstance(value, list):
        return shlex.join(str(v) for v in value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False) if value else "-"
    return "-" if value is None else str(value)


def _show(root: str, ref: str) -> int:
    from rich.console import Console
    from rich.table import Table

    from agenteval.reporting import summary
    from agenteval.reporting.outcome import criterion_problem
    from agenteval.schema import EvalStatus
    from agenteval.store import RunStore
    from agenteval.verdicts.outcome import outcomes

    store = RunStore(root)
    row = store.resolve(ref)
    console = Console()
    table = Table(title=f"Run {row.run_id}", title_justify="left", show_header=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    details = store.details(row.run_id)
    header = details.pop("spec", None)
    details.pop("run_group", None)
    if header is not None:  # the run header, as the result document holds it
        details.pop("config", None)
        details = {"document": details.pop("run_id"), "result_path": details.pop("result_path"),
                   "recorded": details.pop("recorded"), **{f"run.{k}": v for k, v in header.items()}}
    for key, value in _flatten(details):
        table.add_row(key, _show_value(key, value))
    console.print(table)
    if row.run_group:
        others = [r for r in store.documents(row.run_group) if r.run_id != row.run_id]
        if others:
            console.print(f"Other eval sets of run {row.run_group}: "
                          + ", ".join(f"{r.eval_set_id} ({r.run_id})" for r in others))
    if not row.result_path.is_file():
        console.print(f"[yellow]result document missing: {row.result_path}[/]")
    result = store.summary(row.run_id)  # from the database: no need to load the document
    console.print(summary([result]))
    failing = [c for c in outcomes(result) if c.status != EvalStatus.PASSED]
    if failing:
        cases = Table(title="Cases not passed", title_justify="left")
        for col in ("eval id", "status", "why"):
            cases.add_column(col, overflow="fold")
        for c in failing[:_FAILING_SHOWN]:
            why = "\n".join(criterion_problem(m, c.gating) for m in c.failing_metrics())
            cases.add_row(c.eval_id, c.status.name, why or "inference failed or no gating criterion")
        console.print(cases)
        if len(failing) > _FAILING_SHOWN:
            console.print(f"... and {len(failing) - _FAILING_SHOWN} more; see `agenteval report "
                          f"{row.run_id} --format html -o report.html`")
    return 0


@click.group(invoke_without_command=True)
@root_option
@click.option("--limit", type=click.IntRange(min=1), help="Show at most N runs.")
@click.pass_context
def runs(ctx: click.Context, root: str | None, limit: int | None) -> None:
    """List recorded runs, newest first (`runs list`), or show one (`runs show RUN`)."""
    ctx.ensure_object(dict)
    ctx.obj["root"] = root
    if ctx.invoked_subcommand is None:
        sys.exit(opt.guard(_list, root or ".", limit))


@runs.command(name="list")
@root_option
@click.option("--limit", type=click.IntRange(min=1), help="Show at most N runs.")
@click.pass_context
def list_(ctx: click.Context, root: str | None, limit: int | None) -> None:
    """List recorded runs, newest first."""
    sys.exit(opt.guard(_list, root or ctx.obj.get("root") or ".", limit))


@runs.command()
@click.argument("run")
@root_option
@click.pass_context
def show(ctx: click.Context, run: str, root: str | None) -> None:
    """Show RUN (id, unique prefix, latest or previous): stored details, summary, failing cases."""
    sys.exit(opt.guard(_show, root or ctx.obj.get("root") or ".", run))


def _report(ref: str, root: str, fmt: str, output: str | None) -> int:
    from agenteval.datasets.files import write_text_atomic
    from agenteval.reporting import console_report, render_report
    from agenteval.store import load_run

    result = load_run(ref, root)
    if fmt == "console" and not output:
        from rich.console import Console

        console = Console()
        for renderable in console_report([result]):
            console.print(renderable)
        return 0
    text = render_report(fmt, [result])
    if output:
        write_text_atomic(output, text)
    else:
        click.echo(text, nl=False)
    return 0


@click.command()
@click.argument("run")
@root_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="console", show_default=True,
              help="Report format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="Write the report to this file (default: standard output).")
def report(run: str, root: str | None, fmt: str, output: str | None) -> None:
    """Render a report of RUN (a result JSON file, or a run id / prefix / latest / previous)."""
    sys.exit(opt.guard(_report, run, root or ".", fmt, output))


def _compare(ref_a: str, ref_b: str, root: str, margin: float, markdown: str | None) -> int:
    from rich.console import Console

    from agenteval.datasets.files import write_text_atomic
    from agenteval.reporting.compare import compare as compare_results
    from agenteval.reporting.compare import comparison_markdown, comparison_table
    from agenteval.store import load_summary

    a, b = load_summary(ref_a, root), load_summary(ref_b, root)
    console = Console()
    if a.eval_set_id != b.eval_set_id:
        console.print(f"[yellow]note: comparing different eval sets ({a.eval_set_id} vs "
                      f"{b.eval_set_id}); cases are matched by eval id[/]")
    result = compare_results(a, b, margin)
    console.print(comparison_table(result))
    if markdown:
        write_text_atomic(markdown, comparison_markdown(result))
    return 1 if result.has_regressions else 0


@click.command()
@click.argument("run_a")
@click.argument("run_b")
@root_option
@click.option("--margin", type=click.FloatRange(min=0.0), default=0.0, show_default=True,
              help="Score drop tolerated before a criterion counts as regressed.")
@click.option("--markdown", type=click.Path(dir_okay=False), help="Also write the comparison as Markdown.")
def compare(run_a: str, run_b: str, root: str | None, margin: float, markdown: str | None) -> None:
    """Compare baseline RUN_A with candidate RUN_B per case and criterion.

    Exits 1 when a criterion's score dropped by more than --margin or a case or criterion went
    from PASSED to not passing; 0 otherwise; 2 on bad input.
    """
    sys.exit(opt.guard(_compare, run_a, run_b, root or ".", margin, markdown))


COMMANDS = (runs, report, compare)

__all__ = ["COMMANDS", "compare", "report", "runs"]
