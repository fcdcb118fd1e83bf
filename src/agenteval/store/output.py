"""Writing a run's result documents where the user asked (`--output`, `output_file`).

One eval set: the document goes to the path as given. Several: one document each beside it,
named `<stem>.<eval set id><suffix>`, the id made safe for a file name (an id is never a path).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from agenteval.datasets.files import write_model
from agenteval.schema import EvalSetResult


def safe_name(text: str) -> str:
    """`text` with every character outside `[A-Za-z0-9_.-]` replaced by `_` (no separators, no
    `..` that could climb)."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", text)
    return "_" + name if name.startswith(".") or not name else name


def output_paths(eval_set_ids: Sequence[str], output: str | Path) -> list[Path]:
    """Where the document of each eval set goes for `output` (known before the run, so that
    the targets can be checked first)."""
    out = Path(output)
    if len(eval_set_ids) == 1:
        return [out]
    return [out.with_name(f"{out.stem}.{safe_name(i)}{out.suffix}") for i in eval_set_ids]


def write_outputs(results: Sequence[EvalSetResult], output: str | Path) -> list[Path]:
    """Writes the documents (see `agenteval.datasets.targets`); returns their paths."""
    paths = output_paths([r.eval_set_id for r in results], output)
    for result, path in zip(results, paths, strict=True):
        write_model(path, result, exclude_none=False)
    return paths


__all__ = ["output_paths", "safe_name", "write_outputs"]
