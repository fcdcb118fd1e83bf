"""`agenteval compare RUN_A RUN_B`: is the candidate B worse than the baseline A beyond noise?

A RUN is as for `agenteval runs` (`cli.history`): a result JSON file, or a stored run's id,
unique id prefix, `latest` or `previous`. Exit codes: 1 when its gate fails (by default a
significant regression: `verdicts.paired`), else 0, or 2 on bad input.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from agenteval.cli import options as opt
from agenteval.cli.history import root_option

if TYPE_CHECKING:
    from agenteval.reporting.compare import ComparisonRows
    from agenteval.schema import EvalSetResult

FAIL_ON = ("regression", "case_regression", "none")


def _compare(ref_a: str, ref_b: str, root: str, fail_on: str, alpha: float, margin: float,
             markdown: str | None, junit: str | None, k: int | None, seed: int) -> int:
    from pathlib import Path

    from rich.console import Console
    from rich.markup import escape

    from agenteval.criteria import default_registry
    from agenteval.datasets.files import write_text_atomic
    from agenteval.datasets.targets import check_targets
    from agenteval.reporting.compare import compare as compare_results
    from agenteval.reporting.compare import comparison_markdown, comparison_table
    from agenteval.reporting.paired import config_differences, paired_console, paired_junit, paired_markdown
    from agenteval.store.lookup import is_path, load_runs
    from agenteval.verdicts.paired import compare_paired

    check_targets({"--markdown": markdown, "--junit": junit},  # before any work
                  {**opt.run_inputs("RUN_A", ref_a, root), **opt.run_inputs("RUN_B", ref_b, root)}
                  if markdown or junit else None)
    # The case summaries only for the per-case gate: the paired comparison reads the case runs.
    # Two stored runs are compared in the database (`_stored_rows`), their summaries not read.
    whole = fail_on == "case_regression"
    stored = whole and not is_path(ref_a) and not is_path(ref_b)
    (a, runs_a), (b, runs_b) = (load_runs(ref, root, summaries=whole and not stored)
                                for ref in (ref_a, ref_b))
    # the same file twice, or one stored run under two names (`latest` and its id); a file
    # against a stored run of the same id stays allowed (it checks the database against the file)
    if (Path(ref_a).resolve() == Path(ref_b).resolve() if is_path(ref_a) and is_path(ref_b) else
            not is_path(ref_a) and not is_path(ref_b) and a.eval_set_result_id == b.eval_set_result_id):
        from agenteval.errors import DataError

        raise DataError(ref_b, "", f"compares run {a.eval_set_result_id!r} with itself: name two runs")
    console = Console()
    if a.eval_set_id != b.eval_set_id:
        console.print(f"note: comparing different eval sets ({a.eval_set_id} vs {b.eval_set_id}); "
                      "cases are matched by eval id", style="yellow", markup=False, highlight=False)
    differ = config_differences(_config(ref_a, a, root), _config(ref_b, b, root),
                                settings=default_registry().settings)
    if differ:  # (a lowered threshold makes the same scores pass: an "improvement", a hidden regression)
        console.print(f"[yellow]note: the runs' criteria differ, so their passes are judged against "
                      f"different bars: {escape('; '.join(differ))}[/]")
    paired = compare_paired(a, b, alpha=alpha, k=k, seed=seed, runs_a=runs_a, runs_b=runs_b)
    if not any(m.pairs for m in paired.measures):  # nothing to compare (cases pair by eval id)
        from agenteval.errors import DataError

        raise DataError(ref_b, "", f"no case in common with {ref_a} (cases are paired by eval id)")
    console.print(paired_console(paired))
    per_case = (_stored_rows(root, a, b, margin) if stored
                else compare_results(a, b, margin) if whole else None)
    if per_case is not None:
        console.print(comparison_table(per_case))
    if markdown:
        text = paired_markdown(paired)
        if per_case is not None:
            text += "\n" + comparison_markdown(per_case)
        write_text_atomic(markdown, text)
    if junit:
        write_text_atomic(junit, paired_junit(paired))
    if fail_on == "regression":
        return 1 if paired.gate_failed else 0
    return 1 if per_case is not None and per_case.has_regressions else 0


def _config(ref: str, document: EvalSetResult, root: str) -> dict[str, Any]:
    """The config RUN ran with: its document header's, else the run history's ({} if neither)."""
    from agenteval.store import RunStore
    from agenteval.store.lookup import is_path

    if document.run is not None and document.run.config:
        return document.run.config
    if is_path(ref):
        return {}
    config = RunStore(root).details(ref).get("config")
    return config if isinstance(config, dict) else {}


def _stored_rows(root: str, a: EvalSetResult, b: EvalSetResult, margin: float) -> ComparisonRows:
    """What the table and the Markdown show of stored runs `a` and `b` (their heads) of the
    store at `root`: compared in its database, only the shown rows' cases read."""
    from agenteval.reporting.compare import CRITERION_CODE, case_changes, compare_rows, criterion_params
    from agenteval.store import RunStore
    from agenteval.store.case_pairs import coded_cases, pairs_of

    store, run_a, run_b = RunStore(root), a.eval_set_result_id, b.eval_set_result_id
    coded = coded_cases(store, run_a, store, run_b, CRITERION_CODE, criterion_params(margin))
    return compare_rows(case_changes(coded, a, b, margin),
                        lambda ids: pairs_of(store, run_a, store, run_b, ids), a, b)


@click.command()
@click.argument("run_a")
@click.argument("run_b")
@root_option
@click.option("--fail_on", "--fail-on", type=click.Choice(FAIL_ON), default="regression", show_default=True,
              help="regression: exit 1 only on a statistically significant regression (paired exact "
              "McNemar tests of the case verdict and of each criterion, Holm-adjusted, at --alpha). "
              "case_regression: the per-case gate (exit 1 when any case or criterion went from "
              "PASSED to not passing, or a score dropped by more than --margin). none: exit 0.")
@click.option("--alpha", type=opt.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Significance level of the gate and of each case's change.")
@click.option("--margin", type=opt.FloatRange(min=0.0), default=0.0, show_default=True,
              help="With --fail_on case_regression: score drop tolerated before a criterion counts "
              "as regressed.")
@click.option("--markdown", type=click.Path(dir_okay=False),
              help="Also write the comparison as Markdown (for a pull-request comment).")
@click.option("--junit", type=click.Path(dir_okay=False),
              help="Also write the comparison as JUnit XML (a failure per significant regression).")
@click.option("--k", type=click.IntRange(min=1), help="k of pass@k and pass^k (default: the fewest "
              "runs of a case on either side).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap intervals.")
def compare(run_a: str, run_b: str, root: str | None, fail_on: str, alpha: float, margin: float,
            markdown: str | None, junit: str | None, k: int | None, seed: int) -> None:
    """Compare baseline RUN_A with candidate RUN_B, paired by case and run index.

    Prints the decision, then per measure (the case verdict and each criterion) the pass rate and
    mean score A → B with 95% intervals and exact p-values, and each case's change from its own
    runs (REGRESSED, IMPROVED, INCONCLUSIVE, UNCHANGED). Exits 1 when the gate (--fail_on) fails,
    0 otherwise, 2 on bad input.
    """
    from agenteval.datasets.files import gc_paused

    opt.check_needs({"margin": ("--fail_on case_regression", fail_on == "case_regression")})
    # Two runs' verdicts are millions of long-lived objects without cycles: left to the cyclic
    # GC, every collection rescans them (bench/bench_history_commands.py measures it).
    with gc_paused():
        code = opt.guard(_compare, run_a, run_b, root or ".", fail_on, alpha, margin, markdown, junit,
                         k, seed)
    sys.exit(code)


__all__ = ["FAIL_ON", "compare"]
