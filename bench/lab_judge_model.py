"""Lab: `bench_judge_speed.py` on another model file or engine setting (issue 28 item 1, session 20).

Runs `bench_judge_speed.py` (its arguments after `--`) with the embedded model's file replaced
by `--model` (e.g. a derived GGUF from `lab_requant.py`) and/or llama.cpp parameters changed by
`--set` (`lab_engine_params` keys, e.g. `fa=off`). Nothing else changes: the same judge, prompts,
cases and slots. Compare the output with a run on the shipped model (`bench_judge_speed.py
--compare`) and with `--probs A B`: per judge record of the same case, the largest |difference|
of a label probability. Saved prompt states go to `--states`, never to the shared model cache
(with flash attention off llama.cpp stores V transposed: one setting's states must not be
restored into another's engine).

    python bench/lab_judge_model.py --model /tmp/derived/q6k-as-q8_0.gguf -- --out bench/out/q8.jsonl
    python bench/lab_judge_model.py --probs bench/out/shipped.jsonl bench/out/q8.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_engine_params import apply

from agenteval.models import local as local_module


def patch(model: str | None, sets: list[str], states: str) -> None:
    # Saved prompt states are the engine's KV cells: never share them between settings (with
    # flash attention off llama.cpp stores V transposed) nor write them into the shared cache.
    Path(states).mkdir(parents=True, exist_ok=True)
    local_module._states_directory = lambda model_path: Path(states)  # type: ignore[assignment]
    if model:
        path = Path(model).resolve()
        local_module.model_file = lambda cache_dir=None: path  # type: ignore[assignment]
        local_module.ensure_model_file = lambda cache_dir=None: path  # type: ignore[assignment]
        local_module.check_local_available = lambda cache_dir=None: None  # type: ignore[assignment]
    if sets:
        shipped = local_module._params

        def params(xllamacpp: Any, key: Any, states: Any) -> Any:
            p = shipped(xllamacpp, key, states)
            for item in sets:
                k, _, v = item.partition("=")
                apply(p, k, v, xllamacpp)
            return p

        local_module._params = params  # type: ignore[assignment]


def probs(a_path: str, b_path: str) -> None:
    read = lambda path: {r["id"]: r for r in map(json.loads, Path(path).read_text().splitlines())}  # noqa: E731
    a, b = read(a_path), read(b_path)
    diffs: list[tuple[float, str]] = []
    same = 0
    for case, ra in a.items():
        rb = b.get(case)
        if rb is None:
            continue
        same += ra["labels"] == rb["labels"]
        worst = 0.0
        for pa, pb in zip(ra.get("probs") or [], rb.get("probs") or [], strict=False):
            for label in set(pa or {}) | set(pb or {}):
                worst = max(worst, abs((pa or {}).get(label, 0.0) - (pb or {}).get(label, 0.0)))
        diffs.append((worst, case))
        print(f"{case:28} labels {'same' if ra['labels'] == rb['labels'] else 'DIFFER'}  "
              f"max |dp| {worst:.4f}  {ra['labels']} / {rb['labels']}")
    values = [d for d, _ in diffs]
    print(f"{len(diffs)} cases: same labels {same}/{len(diffs)}; max |dp| median "
          f"{statistics.median(values):.4f}, max {max(values):.4f} ({max(diffs)[1]})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model")
    p.add_argument("--set", action="append", default=[], help="key=value (lab_engine_params keys)")
    p.add_argument("--states", default="/tmp/lab_judge_model_states",
                   help="saved prompt states for this setting (not the shared model cache)")
    p.add_argument("--probs", nargs=2, metavar=("A", "B"))
    args, rest = p.parse_known_args()
    if args.probs:
        probs(*args.probs)
        return
    patch(args.model, args.set, args.states)
    import bench_judge_speed

    sys.argv = [sys.argv[0], *[x for x in rest if x != "--"]]
    bench_judge_speed.main()


if __name__ == "__main__":
    main()
