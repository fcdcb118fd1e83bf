"""Reports over result documents: console (rich)."""

from agenteval.reporting.console import case_table, invocation_details, repeat_table, summary

__all__ = ["case_table", "invocation_details", "repeat_table", "summary"]
