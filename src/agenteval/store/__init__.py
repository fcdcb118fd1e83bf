"""Run history: result documents on disk in ADK's eval_history layout, indexed in SQLite."""

from agenteval.store.db import RunRow, RunStore, history_db_path
from agenteval.store.history import history_dir, list_results, load_result, save_result
from agenteval.store.judge_cache import JudgeCacheDB, judge_cache_path
from agenteval.store.record import file_sha256, record_run

__all__ = [
    "JudgeCacheDB",
    "RunRow",
    "RunStore",
    "file_sha256",
    "history_db_path",
    "history_dir",
    "judge_cache_path",
    "list_results",
    "load_result",
    "record_run",
    "save_result",
]
