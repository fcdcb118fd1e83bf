"""Run history: result documents on disk in ADK's eval_history layout, indexed in SQLite; and
where result documents are written and found."""

from agenteval.store.db import RunRow, RunStore, history_db_path
from agenteval.store.history import history_dir, list_results, load_result, parse_result, save_result
from agenteval.store.judge_cache import JudgeCacheDB, judge_cache_path
from agenteval.store.lookup import is_path, load_run, load_summary
from agenteval.store.output import output_paths, write_outputs
from agenteval.store.record import file_sha256, record, record_run

__all__ = [
    "JudgeCacheDB",
    "RunRow",
    "RunStore",
    "file_sha256",
    "history_db_path",
    "history_dir",
    "is_path",
    "judge_cache_path",
    "list_results",
    "load_result",
    "load_run",
    "load_summary",
    "output_paths",
    "parse_result",
    "record",
    "record_run",
    "save_result",
    "write_outputs",
]
