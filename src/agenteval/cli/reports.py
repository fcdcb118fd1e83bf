"""Report files and run recording for `eval` and `score`.

`report_options` adds `--junit_xml`, `--html` and `--markdown` to a command; `write_reports`
writes the requested files; `record_run` indexes results in the run database. Only click is
imported at module level (the console script imports this module when it starts).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
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


def file_sha256(path: str | Path) -> str | None:
    """The sha256 of a file's bytes (hex), or None if it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def record_run(root: str | Path, results: Sequence[EvalSetResult],
               paths: Sequence[str | Path] | None = None, meta: Mapping[str, Any] | None = None,
               eval_set_files: Sequence[str | Path | None] | None = None) -> list[str]:
    """Records results in `<root>/.agenteval/history.sqlite`; returns the run ids.

    `paths[i]` is where `results[i]`'s document was written; with `paths` None each result is
    first saved into `<root>/.agenteval/eval_history`. `meta` is shared by all results (see
    `RunStore.record` for its keys); `eval_set_files[i]`, when given, is recorded with the
    sha256 of its content as the eval set's version.
    """
    from agenteval.store import RunStore, save_result

    store = RunStore(root)
    ids = []
    for i, result in enumerate(results):
        path = Path(paths[i]) if paths is not None else save_result(root, result)
        info = dict(meta or {})
        set_file = eval_set_files[i] if eval_set_files is not None else None
        if set_file is not None:
            info.setdefault("eval_set_file", str(set_file))
            info.setdefault("eval_set_sha256", file_sha256(set_file))
        ids.append(store.record(result, path, info))
    return ids


__all__ = ["file_sha256", "record_run", "render_report", "report_options", "write_reports"]
