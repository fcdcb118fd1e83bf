"""How well `screen` cuts judge-directed text: three sets written blind (by writers who never saw
the screen's patterns), each with injected answers (and the genuine part they hide) and
ordinary answers full of judge-like words (courts, grades, ratings, JSON with score fields).

    python bench/bench_screen.py

Per set: injected answers whose genuine part is exactly what remains ("exact"), where something
but not all of the injection was cut, or nothing ("missed"); ordinary answers changed at all
(false positives). No model is involved.
"""

from __future__ import annotations

import json
from pathlib import Path

from agenteval.criteria.judge.screen import screen

SETS = sorted((Path(__file__).resolve().parent / "judge_set").glob("screen_set_*.json"))


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).strip(" .") == " ".join(b.split()).strip(" .")


def main() -> None:
    print("| set | injected | exact | partial | missed | ordinary | changed |")
    print("|---|---|---|---|---|---|---|")
    for path in SETS:
        data = json.loads(path.read_text())
        exact = partial = 0
        for case in data["injected"]:
            result = screen(case["text"])
            if _same(result.text, case["answer_part"]):
                exact += 1
            elif result.removed:
                partial += 1
        injected = len(data["injected"])
        changed = sum(1 for text in data["ordinary"] if screen(text).removed)
        print(f"| {path.stem} | {injected} | {exact} | {partial} | {injected - exact - partial} | "
              f"{len(data['ordinary'])} | {changed} |")


if __name__ == "__main__":
    main()
