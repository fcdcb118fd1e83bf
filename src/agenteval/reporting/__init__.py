"""Reports over result documents: console (rich)."""

from agenteval.reporting.console import case_table, invocation_details, summary

__all__ = ["case_table", "invocation_details", "summary"]
