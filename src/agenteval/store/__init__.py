"""Run history: result documents on disk in ADK's eval_history layout, indexed in SQLite; and
where result documents are written and found.

Each name is imported from its module when first asked for (`__getattr__`), so that importing
one module of the store (`store.output` for the result document's writer, `store.judge_cache`)
does not import the others: the run database (`store.db`, `store.record`, `store.lookup`) and
what they bring (the paired comparison's statistics), which a `score` without `--history`
never uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval.lazy import names_from, names_over_submodules

if TYPE_CHECKING:
    from agenteval.store.db import RunRow, RunStore, history_db_path
    from agenteval.store.history import history_dir, list_results, load_result, parse_result, save_result
    from agenteval.store.judge_cache import JudgeCacheDB, judge_cache_path
    from agenteval.store.lookup import is_path, load_run, load_summary
    from agenteval.store.output import output_paths, write_outputs
    from agenteval.store.record import file_sha256, record, record_run

_HOME = {
    **dict.fromkeys(["RunRow", "RunStore", "history_db_path"], "db"),
    **dict.fromkeys(["history_dir", "list_results", "load_result", "parse_result", "save_result"],
                    "history"),
    **dict.fromkeys(["JudgeCacheDB", "judge_cache_path"], "judge_cache"),
    **dict.fromkeys(["is_path", "load_run", "load_summary"], "lookup"),
    **dict.fromkeys(["output_paths", "write_outputs"], "output"),
    **dict.fromkeys(["file_sha256", "record", "record_run"], "record"),
}


names_over_submodules(__name__, _HOME)  # (`record`: the function, not its submodule)
__getattr__ = names_from(__name__, _HOME)


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
