"""How well `screen` cuts judge-directed text: three sets written blind (by writers who never saw
the screen's patterns), each with injected answers (and the genuine part they hide) and
ordinary answers full of judge-like words (courts, grades, ratings, JSON with score fields).

    python bench/bench_screen.py

Per set: injected answers whose genuine part is exactly what remains ("exact"), where something
but not all of the injection was cut, or nothing ("missed"); ordinary answers changed at all
(false positives). Then the time to screen long and pathological texts (a 50 KB paragraph,
an unclosed comment, 74 KB of grader words, 50 KB without a space ...). No model is involved.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from agenteval.criteria.judge.prompting.screen import screen

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

    long_texts = {
        "50 KB of prose": "The weather in Paris is sunny today, with a high of 21 degrees. " * 800,
        "28 KB of code": "def f(x):\n    return x * 2  # double it\n" * 700,
        "74 KB of grader words, no sentence end": "judge grader evaluator score correct " * 2000,
        "50 KB without a space": "a" * 50000,
        "unclosed <!-- and 40 KB": "<!--" + "a " * 20000,
        "10 KB of s p a c e d letters": " ".join("abcdefghij" * 500),
        "6 KB of nested braces": "{" * 3000 + '"verdict": 1' + "}" * 3000,
        "15 KB of open brackets": "[a " * 5000 + "x",
    }
    print("\n| long text | ms to screen |\n|---|---|")
    for name, text in long_texts.items():
        start = time.perf_counter()
        screen(text)
        print(f"| {name} | {1000 * (time.perf_counter() - start):.1f} |")


if __name__ == "__main__":
    main()
