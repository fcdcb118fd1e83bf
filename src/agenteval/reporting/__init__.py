"""Reports over result documents: console (rich), JUnit, HTML, Markdown, comparisons."""

from agenteval.reporting.console import (
    case_table,
    console_report,
    invocation_details,
    repeat_table,
    summary,
)
from agenteval.reporting.render import FORMATS, render_report, write_reports

__all__ = ["FORMATS", "case_table", "console_report", "invocation_details", "render_report",
           "repeat_table", "summary", "write_reports"]
