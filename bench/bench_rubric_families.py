"""Agreement of the rubric criteria per rubric family, before vs after (issue 28, item 3).

Reads per-case outcome files written by `bench_certify.py --outcomes` (one JSON line per judged
case: id, right or wrong, confidence) for two source states, and the rubric sets' hand-tagged
`family` field, and prints per set and family: cases judged by both, right before, right after.
Also how often the code's family (`rubric_checks.family_of`) equals the hand tag.

    python bench/bench_rubric_families.py --before bench/out/rubric_before.jsonl \\
        --after bench/out/rubric_after.jsonl [--json bench/out/rubric_families.json]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from agenteval.criteria.judge.rubric_checks import family_of

FR, TU = "FINAL_RESPONSE_QUALITY", "TOOL_USE_QUALITY"
SETS = {"rubric_final_response": FR, "rubric_final_response_blind": FR,
        "rubric_tool_use": TU, "rubric_tool_use_blind": TU}
HERE = Path(__file__).resolve().parent / "judge_set"


def outcomes(path: str) -> dict[str, bool | None]:
    """Case id -> right (True), wrong (False) or no verdict (None); the last line of an id wins."""
    out: dict[str, bool | None] = {}
    if not Path(path).exists():
        return out
    for line in Path(path).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["id"]] = row["correct"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--json", help="also write the table as JSON here")
    args = ap.parse_args()
    before, after = outcomes(args.before), outcomes(args.after)
    rows = []
    for name, rubric_type in SETS.items():
        cases = json.loads((HERE / f"{name}.json").read_text())
        tagged = sum(1 for c in cases if family_of(c["rubric"], rubric_type) == c["family"])
        print(f"\n{name}: code family = hand tag for {tagged}/{len(cases)}")
        by: dict[str, list[tuple[bool | None, bool | None]]] = defaultdict(list)
        for c in cases:
            if c["id"] in before and c["id"] in after:
                by[c["family"]].append((before[c["id"]], after[c["id"]]))
        total = [0, 0, 0]
        print(f"  {'family':18} {'cases':>5} {'before':>7} {'after':>7}")
        for family, pairs in sorted(by.items()):
            b = sum(1 for x, _ in pairs if x)
            a = sum(1 for _, y in pairs if y)
            total = [total[0] + len(pairs), total[1] + b, total[2] + a]
            print(f"  {family:18} {len(pairs):5} {b:4}/{len(pairs):<2} {a:4}/{len(pairs):<2}")
            rows.append({"set": name, "family": family, "cases": len(pairs), "before": b, "after": a})
        if total[0]:
            print(f"  {'all':18} {total[0]:5} {total[1]:4}/{total[0]:<2} {total[2]:4}/{total[0]:<2}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
