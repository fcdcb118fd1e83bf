"""Run history: result documents on disk in ADK's eval_history layout."""

from agenteval.store.history import history_dir, list_results, load_result, save_result
from agenteval.store.judge_cache import JudgeCacheDB, judge_cache_path

__all__ = ["JudgeCacheDB", "history_dir", "judge_cache_path", "list_results", "load_result", "save_result"]
