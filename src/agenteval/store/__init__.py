"""Run history: result documents on disk in ADK's eval_history layout, indexed in SQLite; and
where result documents are written and found.

Each name is imported from its module when first asked for (`__getattr__`), so that importing
one module of the store (`store.output` for the result document's writer, `store.judge_cache`)
does not import the others: the run database (`store.db`, `store.record`, `store.lookup`) and
what they bring (the paired comparison's statistics), which a `score` without `--history`
never uses.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING

from agenteval.lazy import names_from

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


class _Store(types.ModuleType):
    """This package, whose `record` is the function, not the submodule of that name: the import
    system names a submodule on its package once it is loaded (`store.record`)."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _HOME and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Store


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
