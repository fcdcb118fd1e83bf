"""Seeded random eval sets and configs for the differential check against ADK 2.13 (the test is
`test_score_adk_differential.py`; `bench/parity_differential.py` runs more seeds).

Everything is plain JSON as a user writes it: expected / actual eval sets in snake_case or
camelCase, ADK's legacy list files, and eval configs with every criterion form ADK accepts.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

Json = Any

WORDS = ["the", "cat", "sat", "on", "mat", "Paris", "is", "a", "city", "42", "4.0", "ok", "don't",
         "naïve", "café", "ﬁne", "①", "東京", "タワー", "สวัสดี", "ຂອບໃຈ", "ខ្ញុំ", "Ωmega", "Straße",
         "e\u0301", "zero\u200bwidth", "under_score", "émoji😀", "-", "!", "a.b", "ÅNGSTRÖM"]
TOOLS = ["get_weather", "roll_die", "search", "book", "lookup_ü"]
MATCH_TYPES: list[Json] = ["EXACT", "IN_ORDER", "ANY_ORDER", "exact", "in-order", "IN ORDER", "any_order",
                           "Any-Order", 0, 1, 2]
THRESHOLDS: list[Json] = [0, 0.0, 1, 1.0, 0.5, 1 / 3, 2 / 3, 0.6666666666666667, 0.25, 0.75, 0.8,
                          0.999999, 1e-9]


def text(rng: random.Random, lo: int = 0, hi: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def value(rng: random.Random, depth: int = 0) -> Json:
    kind = rng.randrange(9 if depth < 2 else 6)
    if kind == 0:
        return rng.randint(-3, 3)
    if kind == 1:
        return rng.choice([1.0, 0.5, 2.5, -0.0, 1e20])
    if kind == 2:
        return text(rng, 1, 2)
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return rng.choice(["1", "1.0", "", "é", "True"])
    if kind == 5:
        return rng.randint(10**17, 10**18)
    if kind == 6:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["a", "b", "ключ", "k"]
    return {rng.choice(keys) + str(i): value(rng, depth + 1) for i in range(rng.randint(0, 3))}


def mutate_value(rng: random.Random, v: Json) -> Json:
    """A value that may or may not equal `v` in JSON (1 vs 1.0, 1 vs "1", True vs 1, reordered keys)."""
    r = rng.random()
    if isinstance(v, bool):
        return rng.choice([int(v), not v, v])
    if isinstance(v, int) and r < 0.5:
        return rng.choice([float(v), str(v), v + 1])
    if isinstance(v, float) and r < 0.5:
        return rng.choice([int(v) if v == int(v) and abs(v) < 1e18 else v, str(v)])
    if isinstance(v, dict) and v:
        items = list(v.items())
        rng.shuffle(items)  # key order never matters in JSON objects
        if r < 0.3:
            k, x = items[0]
            items[0] = (k, mutate_value(rng, x))
        return dict(items)
    if isinstance(v, list) and v and r < 0.4:
        out = list(v)
        rng.shuffle(out)
        return out
    return v


def calls(rng: random.Random) -> list[tuple[str, Json]]:
    return [(rng.choice(TOOLS), {f"p{i}": value(rng) for i in range(rng.randint(0, 3))})
            for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]


def mutate_calls(rng: random.Random, cs: list[tuple[str, Json]]) -> list[tuple[str, Json]]:
    out = [(n, copy.deepcopy(a)) for n, a in cs]
    r = rng.random()
    if r < 0.35:
        return out
    if r < 0.5:
        rng.shuffle(out)
    elif r < 0.6 and out:
        out.pop(rng.randrange(len(out)))
    elif r < 0.7:
        out.insert(rng.randint(0, len(out)), (rng.choice(TOOLS), {}))
    elif r < 0.8 and out:
        out.append(out[rng.randrange(len(out))])  # a repeated call
    elif out:
        i = rng.randrange(len(out))
        out[i] = (out[i][0], mutate_value(rng, out[i][1]))
    return out


def response(rng: random.Random, base: str | None) -> Json:
    """A final response as Content JSON (or None: the key is left out)."""
    r = rng.random()
    if base is None or r < 0.08:
        return None
    if r < 0.14:
        return {"role": "model", "parts": []}
    if r < 0.2:
        return {"role": "model", "parts": [{"text": text(rng, 1, 3), "thought": True}, {"text": base}]}
    if r < 0.25:
        return {"role": "model", "parts": [{"text": base}, {"text": text(rng, 0, 3)}]}
    return {"role": "model", "parts": [{"text": base}]}


def intermediate(rng: random.Random, cs: list[tuple[str, Json]], camel: bool) -> Json:
    """The calls as tool_uses or as invocation events (with responses and a text between), or no
    intermediate data at all where there are no calls."""
    if not cs and rng.random() < 0.4:
        return None
    if rng.random() < 0.5:
        key = "toolUses" if camel else "tool_uses"
        return {key: [{"name": n, "args": a} for n, a in cs]}
    events = []
    for n, a in cs:
        call = {"author": "agent", "content": {"role": "model", "parts": [
            {"function_call": {"name": n, "args": a}}]}}
        if rng.random() < 0.5:  # a model call's usage (the efficiency metrics read it)
            call["usage_metadata"] = {"prompt_token_count": rng.randint(0, 900),
                                      "candidates_token_count": rng.randint(0, 90),
                                      "total_token_count": rng.randint(0, 999)}
        events.append(call)
        events.append({"author": "agent", "content": {"role": "user", "parts": [
            {"function_response": {"name": n, "response": {"result": text(rng, 1, 2)}}}]}})
        if rng.random() < 0.3:
            events.append({"author": "agent",
                           "content": {"role": "model", "parts": [{"text": text(rng, 1, 4)}]}})
    return {"invocationEvents" if camel else "invocation_events": events}


def invocation(rng: random.Random, user: str, final: Json, cs: list[tuple[str, Json]], camel: bool) -> Json:
    user_content = {"role": "user", "parts": [{"text": user}]}
    d: dict[str, Any] = {("userContent" if camel else "user_content"): user_content}
    if final is not None:
        d["finalResponse" if camel else "final_response"] = final
    if rng.random() < 0.3:
        d["duration"] = rng.choice([0.5, 1.25, 0.1, 3.0, 0.0])
    inter = intermediate(rng, cs, camel)
    if inter is not None:
        d["intermediateData" if camel else "intermediate_data"] = inter
    return d


def case_pair(rng: random.Random, eval_id: str) -> tuple[Json, Json]:
    """(expected case, actual case) with the same number of turns."""
    camel_e, camel_a = rng.random() < 0.2, rng.random() < 0.2
    expected, actual = [], []
    for _ in range(rng.choice([1, 1, 2, 3, 4])):
        user = text(rng, 0, 5)
        ref = None if rng.random() < 0.05 else text(rng, 0, 8)
        got = ref if ref is not None and rng.random() < 0.35 else text(rng, 0, 8)
        if ref is not None and rng.random() < 0.2:
            got = " ".join(w for w in ref.split() if rng.random() < 0.7)  # a response with words dropped
        cs = calls(rng)
        expected.append(invocation(rng, user, response(rng, ref), cs, camel_e))
        actual.append(invocation(rng, user, response(rng, got), mutate_calls(rng, cs), camel_a))
    return {"eval_id": eval_id, "conversation": expected}, {"eval_id": eval_id, "conversation": actual}


def scenario_pair(rng: random.Random, eval_id: str) -> tuple[Json, Json]:
    """A conversation scenario (no expected conversation) and the conversation a simulated user had."""
    expected = {"eval_id": eval_id, "conversation_scenario": {
        "starting_prompt": text(rng, 1, 4), "conversation_plan": text(rng, 3, 9)}}
    actual = [invocation(rng, text(rng, 1, 4), response(rng, text(rng, 0, 6)), calls(rng), False)
              for _ in range(rng.randint(1, 4))]
    return expected, {"eval_id": eval_id, "conversation": actual}


def trajectory_criterion(rng: random.Random) -> Json:
    threshold = rng.choice(THRESHOLDS)
    r = rng.random()
    if r < 0.25:
        return threshold
    crit: dict[str, Any] = {"threshold": threshold}
    if rng.random() < 0.8:
        crit["matchType" if rng.random() < 0.2 else "match_type"] = rng.choice(MATCH_TYPES)
    if rng.random() < 0.3:
        crit["ignoreArgs" if rng.random() < 0.2 else "ignore_args"] = rng.choice([True, False])
    return crit


def rouge_criterion(rng: random.Random) -> Json:
    threshold = rng.choice(THRESHOLDS)
    return threshold if rng.random() < 0.5 else {"threshold": threshold}


def config(rng: random.Random) -> Json | None:
    """An eval config with one or both local criteria in a random form (None: the defaults)."""
    r = rng.random()
    if r < 0.1:
        return None
    criteria: dict[str, Any] = {}
    if r < 0.75:
        criteria["tool_trajectory_avg_score"] = trajectory_criterion(rng)
    if r > 0.45:
        criteria["response_match_score"] = rouge_criterion(rng)
    if rng.random() < 0.4:  # ADK's rule for a criterion that cannot be evaluated (ADK ignores the key)
        return {"criteria": criteria, "not_evaluated": "ignore"}
    return {"criteria": criteria}


def scenario(seed: int, n_cases: int) -> tuple[Json, Json, Json | None]:
    """(expected set, actual set, config) for one seed."""
    rng = random.Random(seed)
    pairs = [scenario_pair(rng, f"case_{i}") if rng.random() < 0.15 else case_pair(rng, f"case_{i}")
             for i in range(n_cases)]
    expected = {"eval_set_id": f"set_{seed}", "eval_cases": [e for e, _ in pairs]}
    actual = {"eval_set_id": f"set_{seed}", "eval_cases": [a for _, a in pairs]}
    return expected, actual, config(rng)


def legacy_list(expected: Json) -> Json:
    """ADK's older list format (`name` / `data` / `query` / `expected_tool_use` / `reference`) of
    an eval set whose cases each have one text final response and tool_uses."""
    out = []
    for case in expected["eval_cases"]:
        turns = []
        for inv in case["conversation"]:
            turn: dict[str, Any] = {"query": inv["user_content"]["parts"][0]["text"],
                                    "expected_tool_use": [{"tool_name": c["name"], "tool_input": c["args"]}
                                                          for c in inv["intermediate_data"]["tool_uses"]]}
            if inv.get("final_response") is not None:
                turn["reference"] = inv["final_response"]["parts"][0]["text"]
            turns.append(turn)
        out.append({"name": case["eval_id"], "data": turns,
                    "initial_session": {"app_name": "app", "user_id": "u", "state": {}}})
    return out


def legacy_scenario(seed: int, n_cases: int) -> tuple[Json, Json, Json | None]:
    """A scenario whose expected set is written in the legacy list format (and read back by both
    sides' loaders): snake_case tool_uses and plain text responses only."""
    rng = random.Random(seed)
    expected_cases, actual_cases = [], []
    for i in range(n_cases):
        e_conv, a_conv = [], []
        for _ in range(rng.choice([1, 2, 3])):
            user, ref = text(rng, 1, 5), text(rng, 0, 6)
            cs = calls(rng)
            e_conv.append({"user_content": {"role": "user", "parts": [{"text": user}]},
                           "final_response": {"role": "model", "parts": [{"text": ref}]},
                           "intermediate_data": {"tool_uses": [{"name": n, "args": a} for n, a in cs]}})
            got = ref if rng.random() < 0.4 else text(rng, 0, 6)
            a_conv.append(invocation(rng, user, response(rng, got), mutate_calls(rng, cs), False))
        expected_cases.append({"eval_id": f"leg_{i}", "conversation": e_conv})
        actual_cases.append({"eval_id": f"leg_{i}", "conversation": a_conv})
    expected = {"eval_set_id": f"legacy_{seed}", "eval_cases": expected_cases}
    return legacy_list(expected), {"eval_set_id": f"legacy_{seed}", "eval_cases": actual_cases}, config(rng)


def write(root: Path, expected: Json, actual: Json, cfg: Json | None,
          beside: bool) -> tuple[Path, Path, Path | None]:
    """Writes the scenario; the config as `test_config.json` beside the expected set (found by
    both sides' rule) or as a file given explicitly."""
    root.mkdir(parents=True, exist_ok=True)
    e, a = root / "expected.evalset.json", root / "actual.evalset.json"
    e.write_text(json.dumps(expected, ensure_ascii=False), encoding="utf-8")
    a.write_text(json.dumps(actual, ensure_ascii=False), encoding="utf-8")
    if cfg is None:
        return e, a, None
    c = root / ("test_config.json" if beside else "config.json")
    c.write_text(json.dumps(cfg), encoding="utf-8")
    return e, a, c
