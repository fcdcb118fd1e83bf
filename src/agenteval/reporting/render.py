"""Report files from result documents: JUnit XML, HTML, Markdown, and the console's text.

Format modules are imported on demand, so asking for one report loads only its renderer.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from agenteval.datasets.files import write_text_atomic
from agenteval.schema import EvalSetResult

FORMATS = ("console", "html", "junit", "markdown")


def render_report(fmt: str, results: Sequence[EvalSetResult], width: int = 160) -> str:
    """The report text in `fmt` (one of `FORMATS`; `console` is the tables as plain text)."""
    if fmt == "junit":
        from agenteval.reporting.junit import junit_xml

        return junit_xml(results)
    if fmt == "html":
        from agenteval.reporting.html import html_report

        return html_report(results)
    if fmt == "markdown":
        from agenteval.reporting.markdown import markdown_summary

        return markdown_summary(results)
    if fmt == "console":
        from rich.console import Console

        from agenteval.reporting.console import console_report

        console = Console(file=io.StringIO(), width=width, record=True)
        for renderable in console_report(results):
            console.print(renderable)
        return console.export_text()
    raise ValueError(f"unknown report format {fmt!r}")


def write_reports(results: Sequence[EvalSetResult], junit_xml: str | Path | None = None,
                  html: str | Path | None = None, markdown: str | Path | None = None) -> list[Path]:
    """Writes each requested report (atomically, parent folders created); returns their paths."""
    written = []
    for fmt, path in (("junit", junit_xml), ("html", html), ("markdown", markdown)):
        if path:
            write_text_atomic(path, render_report(fmt, results))
            written.append(Path(path))
    return written


__all__ = ["FORMATS", "render_report", "write_reports"]
