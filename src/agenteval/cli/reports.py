"""Report files and run recording for `eval` and `score`.

`report_options` adds `--junit_xml`, `--html` and `--markdown` to a command; `write_reports`
writes the requested files; `agenteval.store.record_run` indexes results in the run database. Only click is
imported at module level (the console script imports this module when it starts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:  # the CLI imports this module at start-up, so pydantic stays unloaded
    from agenteval.schema import EvalSetResult

F = TypeVar("F", bound=Callable[..., Any])


def report_options(fn: F) -> F:
    """The report-file options: `junit_xml`, `html`, `markdown` (each a path or None)."""
    fn = click.option("--markdown", type=click.Path(dir_okay=False),
                      help="Write a Markdown summary (e.g. to $GITHUB_STEP_SUMMARY).")(fn)
    fn = click.option("--html", type=click.Path(dir_okay=False),
                      help="Write a self-contained HTML report.")(fn)
    return click.option("--junit_xml", "--junit-xml", "junit_xml", type=click.Path(dir_okay=False),
                        help="Write a JUnit XML report (one testcase per eval case).")(fn)


def write_reports(results: Sequence[EvalSetResult], junit_xml: str | Path | None = None,
                  html: str | Path | None = None, markdown: str | Path | None = None) -> list[Path]:
    """Writes each requested report (atomically, parent folders created); returns their paths."""
    from agenteval.datasets.files import write_text_atomic

    written = []
    for fmt, path in (("junit", junit_xml), ("html", html), ("markdown", markdown)):
        if path:
            write_text_atomic(path, render_report(fmt, results))
            written.append(Path(path))
    return written


def render_report(fmt: str, results: Sequence[EvalSetResult]) -> str:
    """The report text in `fmt`: `junit`, `html` or `markdown` (modules imported on demand)."""
    if fmt == "junit":
        from agenteval.reporting.junit import junit_xml

        return junit_xml(results)
    if fmt == "html":
        from agenteval.reporting.html import html_report

        return html_report(results)
    if fmt == "markdown":
        from agenteval.reporting.markdown import markdown_summary

        return markdown_summary(results)
    raise ValueError(f"unknown report format {fmt!r}")


__all__ = ["render_report", "report_options", "write_reports"]
