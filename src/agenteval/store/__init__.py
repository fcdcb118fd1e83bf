"""Run history: result documents on disk in ADK's eval_history layout."""

from agenteval.store.history import history_dir, list_results, load_result, save_result

__all__ = ["history_dir", "list_results", "load_result", "save_result"]
