"""Generate a seeded corpus of recorded agent runs as two ADK eval-set files.

`expected.evalset.json` is the reference; `actual.evalset.json` holds what an agent "did" for the
same eval ids (same number of invocations per case). Both are written in ADK's snake_case layout.

What the corpus contains:

* user prompts and final responses drawn from an English vocabulary whose words come in
  inflection families that the Porter stemmer folds (ship/shipped/shipping), mixed with numbers,
  punctuation, contractions, snake_case identifiers, accented words, CJK, Thai, Lao, Khmer,
  Myanmar, Devanagari and a few NFKC-changing characters (ligatures, circled digits, fullwidth);
* 0–4 tool calls per invocation with nested arguments; the actual calls are the expected ones,
  or reordered, or with `"1"` for `1`, `1.0` for `1`, missing / extra / duplicated calls,
  changed values, shuffled key order, renamed tools, `None` for `{}`...;
* both intermediate-data forms, chosen independently on each side: legacy `tool_uses` /
  `tool_responses` / `intermediate_responses`, and `invocation_events` whose events carry
  `function_call` / `function_response` / text / thought parts and usage metadata.

`--edge-rate` (0 for the benchmark corpus by default; `parity_fuzz.py` raises it) mixes in rarer
inputs: empty conversations and responses, `final_response: null`, thought-only responses, lone
combining marks, zero-width characters, NFKC-only look-alikes, `True` for `1`, big integers,
awkward floats, nameless calls, `intermediate_data: {}` and so on.

Usage:
    python bench/gen_corpus.py [--n 10000] [--seed 0] [--out bench/out] [--edge-rate 0.0]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

JSON = dict[str, Any]
BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_OUT = BENCH_DIR / "out"

from gen_corpus_vocab import (  # noqa: E402
    ACCENTED,
    CJK,
    CONTRACTIONS,
    EDGE_TOKENS,
    EMOJI,
    FAMILIES,
    FUNCTION_WORDS,
    IDENTIFIERS,
    NFKC_CHANGING,
    NON_SPACED,
    NUMBERS,
    ODD_VALUES,
    PUNCT_END,
    PUNCT_MID,
)


class CorpusGenerator:
    """Builds expected / actual eval-case pairs from one random stream."""

    def __init__(self, seed: int, edge_rate: float = 0.0) -> None:
        self.rng = random.Random(seed)
        self.edge_rate = edge_rate
        self.tools: dict[str, Callable[[], JSON | None]] = {
            "lookup_order": self._args_lookup_order,
            "get_weather": self._args_get_weather,
            "roll_die": self._args_roll_die,
            "check_prime": self._args_check_prime,
            "set_device_info": self._args_set_device_info,
            "search_flights": self._args_search_flights,
            "book_hotel": self._args_book_hotel,
            "send_email": self._args_send_email,
            "get_user_profile": self._args_get_user_profile,
            "transfer_to_agent": self._args_transfer,
            "get_current_time": lambda: None,
        }

    # -- helpers -------------------------------------------------------------------------------

    def edge(self, scale: float = 1.0) -> bool:
        return self.edge_rate > 0 and self.rng.random() < self.edge_rate * scale

    def new_id(self, prefix: str = "adk-") -> str:
        return prefix + f"{self.rng.getrandbits(64):016x}"

    # -- text ----------------------------------------------------------------------------------

    def word(self) -> str:
        r = self.rng.random()
        rng = self.rng
        if self.edge(0.5):
            return rng.choice(EDGE_TOKENS)
        if r < 0.42:
            return rng.choice(rng.choice(FAMILIES))
        if r < 0.74:
            return rng.choice(FUNCTION_WORDS)
        if r < 0.80:
            return rng.choice(NUMBERS)
        if r < 0.84:
            return rng.choice(CONTRACTIONS)
        if r < 0.87:
            return rng.choice(IDENTIFIERS)
        if r < 0.91:
            return rng.choice(ACCENTED)
        if r < 0.94:
            return rng.choice(CJK)
        if r < 0.96:
            return rng.choice(NON_SPACED)
        if r < 0.98:
            return rng.choice(NFKC_CHANGING)
        return rng.choice(EMOJI)

    def sentence(self, lo: int = 3, hi: int = 24) -> str:
        rng = self.rng
        words = [self.word() for _ in range(rng.randint(lo, hi))]
        out: list[str] = []
        for i, w in enumerate(words):
            if i == 0 and w[:1].isascii():
                w = w[:1].upper() + w[1:]
            out.append(w)
            if i < len(words) - 1 and rng.random() < 0.08:
                out[-1] += rng.choice(PUNCT_MID)
        text = " ".join(out) + rng.choice(PUNCT_END)
        if rng.random() < 0.05:
            text += " " + self.sentence(lo, max(lo, hi // 2))
        return text

    def mutate_text(self, text: str) -> str:
        """An agent's answer relative to the reference: same, inflected, reworded, or other."""
        rng = self.rng
        r = rng.random()
        if self.edge(0.3):
            return rng.choice(["", " ", "\n", "...", text.upper(), text + "\u0301",
                               "".join(EDGE_TOKENS[:20]), text.replace(" ", "_")])
        if r < 0.15:
            return text
        if r < 0.25:
            return self.sentence()
        words = text.split(" ")
        if r < 0.40:  # inflect: swap words for family members (same stem, mostly)
            fam_of = {w.lower(): f for f in FAMILIES for w in f}
            words = [rng.choice(fam_of[w.lower()]) if w.lower() in fam_of and rng.random() < 0.6
                     else w for w in words]
        elif r < 0.50:
            rng.shuffle(words)
        elif r < 0.62:
            keep = [w for w in words if rng.random() > 0.3]
            words = keep or words[:1]
        elif r < 0.74:
            for _ in range(rng.randint(1, 5)):
                words.insert(rng.randint(0, len(words)), self.word())
        elif r < 0.84:
            words = [self.word() if rng.random() < 0.3 else w for w in words]
        elif r < 0.90:
            words = [w.upper() if rng.random() < 0.3 else w for w in words]
        else:
            return text.replace(".", "!").replace(",", "") + rng.choice(["", " Thanks!", " 🙂"])
        return " ".join(words)

    def content(self, text: str, role: str) -> JSON:
        return {"role": role, "parts": [{"text": text}]}

    def response_content(self, text: str) -> JSON | None:
        """A final response: usually one text part; sometimes split, with thoughts, or empty."""
        rng = self.rng
        if self.edge(0.2):
            return rng.choice([
                None,
                {"role": "model", "parts": []},
                {"role": "model", "parts": None},
                {"role": "model", "parts": [{"text": ""}]},
                {"role": "model", "parts": [{"text": text, "thought": True}]},
                {"role": "model", "parts": [{"function_call": {"name": "get_current_time"}}]},
            ])
        r = rng.random()
        if r < 0.80:
            return self.content(text, "model")
        if r < 0.90:  # split over several text parts
            words = text.split(" ")
            cut = rng.randint(0, len(words))
            return {"role": "model", "parts": [{"text": " ".join(words[:cut])},
                                               {"text": " ".join(words[cut:])}]}
        return {"role": "model", "parts": [  # a thought part first (ROUGE includes it)
            {"text": "Let me think about the " + rng.choice(FUNCTION_WORDS), "thought": True},
            {"text": text}]}

    # -- tool arguments ------------------------------------------------------------------------

    def _args_lookup_order(self) -> JSON:
        return {"order_id": f"ORD-{self.rng.randint(1000, 9999)}",
                "include": {"items": self.rng.random() < 0.5, "history": self.rng.random() < 0.3}}

    def _args_get_weather(self) -> JSON:
        city = self.rng.choice(["Paris", "Zürich", "東京", "São Paulo", "New York", "กรุงเทพ"])
        return {"city": city, "units": self.rng.choice(["metric", "imperial"]),
                "days": self.rng.randint(1, 7)}

    def _args_roll_die(self) -> JSON:
        return {"sides": self.rng.choice([4, 6, 8, 12, 20, 100])}

    def _args_check_prime(self) -> JSON:
        return {"nums": [self.rng.randint(1, 200) for _ in range(self.rng.randint(1, 4))]}

    def _args_set_device_info(self) -> JSON:
        rng = self.rng
        return {"device_id": f"device_{rng.randint(1, 9)}", "status": rng.choice(["ON", "OFF"]),
                "location": rng.choice(["Bedroom", "Kitchen", "Living Room"]),
                "settings": {"brightness": rng.choice([0.25, 0.5, 0.8, 1]),
                             "schedule": {"on": "07:00", "off": rng.choice(["22:00", "23:30"])}}}

    def _args_search_flights(self) -> JSON:
        rng = self.rng
        return {"origin": rng.choice(["SFO", "JFK", "CDG"]), "destination": rng.choice(["NRT", "ZRH"]),
                "date": f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                "passengers": {"adults": rng.randint(1, 3), "children": rng.randint(0, 2)},
                "flexible": rng.random() < 0.5, "max_price": rng.choice([None, 500, 999.99])}

    def _args_book_hotel(self) -> JSON:
        rng = self.rng
        return {"city": rng.choice(["Kraków", "Lisbon", "京都"]), "nights": rng.randint(1, 5),
                "guests": [{"name": rng.choice(["Zoë", "Ana", "Kenji"]), "age": rng.randint(18, 80)}
                           for _ in range(rng.randint(1, 2))]}

    def _args_send_email(self) -> JSON:
        return {"to": ["support@example.com"], "subject": self.sentence(2, 5),
                "body": self.sentence(), "cc": None}

    def _args_get_user_profile(self) -> JSON:
        return self.rng.choice([{}, {"user_id": f"u_{self.rng.randint(1, 999)}"}])

    def _args_transfer(self) -> JSON:
        return {"agent_name": self.rng.choice(["billing_agent", "shipping_agent"])}

    def call(self) -> JSON:
        name = self.rng.choice(list(self.tools))
        args = self.tools[name]()
        if self.edge(0.3):
            args = {"value": self.rng.choice(ODD_VALUES), "nested": {"v": self.rng.choice(ODD_VALUES)}}
        out: JSON = {"id": self.new_id(), "name": name}
        if args is not None or self.rng.random() < 0.5:
            out["args"] = args
        if self.edge(0.05):
            del out["name"]
        return out

    # -- tool-call mutations (actual relative to expected) --------------------------------------

    def _leaf_paths(self, value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if isinstance(value, dict):
            return [p for k, v in value.items() for p in self._leaf_paths(v, (*path, k))]
        if isinstance(value, list):
            return [p for i, v in enumerate(value) for p in self._leaf_paths(v, (*path, i))]
        return [path]

    def _set(self, root: Any, path: tuple[Any, ...], fn: Callable[[Any], Any]) -> None:
        node = root
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = fn(node[path[-1]])

    def _shuffle_keys(self, value: Any) -> Any:
        if isinstance(value, dict):
            items = list(value.items())
            self.rng.shuffle(items)
            return {k: self._shuffle_keys(v) for k, v in items}
        if isinstance(value, list):
            return [self._shuffle_keys(v) for v in value]
        return value

    def _mutate_leaf(self, call: JSON, kind: str) -> None:
        args = call.get("args")
        if not args:
            return
        paths = [p for p in self._leaf_paths(args) if p]
        if not paths:
            return
        path = self.rng.choice(paths)

        def change(v: Any) -> Any:
            if kind == "str":  # "1" vs 1: never equal
                return str(v)
            if kind == "float":  # 1 vs 1.0: equal
                return float(v) if isinstance(v, int) and not isinstance(v, bool) else v
            if kind == "bool":  # True vs 1: equal in Python
                return int(v) if isinstance(v, bool) else v
            if isinstance(v, bool):
                return not v
            if isinstance(v, (int, float)):
                return v + 1
            if isinstance(v, str):
                return v + "x"
            return "changed"

        self._set(args, path, change)

    def mutate_calls(self, calls: list[JSON]) -> list[JSON]:
        rng = self.rng
        out = copy.deepcopy(calls)
        for c in out:
            c["id"] = self.new_id()  # ids differ between runs; they are never compared
        r = rng.random()
        if r < 0.40:
            pass
        elif r < 0.48 and len(out) >= 2:
            i = rng.randrange(len(out) - 1)
            out[i], out[i + 1] = out[i + 1], out[i]
        elif r < 0.53 and out:
            self._mutate_leaf(rng.choice(out), "str")
        elif r < 0.58 and out:
            self._mutate_leaf(rng.choice(out), "float")
        elif r < 0.65:
            out.insert(rng.randint(0, len(out)), self.call())
        elif r < 0.71 and out:
            out.pop(rng.randrange(len(out)))
        elif r < 0.75 and out:
            i = rng.randrange(len(out))
            dup = copy.deepcopy(out[i])
            dup["id"] = self.new_id()
            out.insert(i + rng.randint(0, 1), dup)
        elif r < 0.81 and out:
            self._mutate_leaf(rng.choice(out), "value")
        elif r < 0.87 and out:
            for c in out:
                if c.get("args") is not None:
                    c["args"] = self._shuffle_keys(c["args"])
        elif r < 0.90 and out:
            c = rng.choice(out)
            c["name"] = rng.choice(list(self.tools))
        elif r < 0.93 and out:
            c = rng.choice(out)
            if c.get("args") == {}:
                c["args"] = None
            elif c.get("args") is None:
                c["args"] = {}
            elif c["args"]:
                c["args"].pop(rng.choice(list(c["args"])))
        elif r < 0.96 and len(out) >= 2:
            rng.shuffle(out)
        elif out:
            self._mutate_leaf(rng.choice(out), "bool")
        if self.edge(0.2) and out:
            rng.choice([lambda: out.reverse(), lambda: out.append(copy.deepcopy(out[0])),
                        lambda: out.clear()])()
        return out

    # -- intermediate data ---------------------------------------------------------------------

    def response_for(self, call: JSON) -> JSON:
        resp: JSON = {"id": call.get("id"), "name": call.get("name"),
                      "response": {"result": self.rng.choice(["ok", 42, {"status": "shipped"}])}}
        return resp

    def intermediate(self, calls: list[JSON], author: str) -> JSON | None:
        rng = self.rng
        if not calls and self.edge(0.3):
            return rng.choice([None, {}, {"invocation_events": []},
                               {"tool_uses": [], "tool_responses": [],
                                "intermediate_responses": []}])
        if rng.random() < 0.5:
            data: JSON = {"tool_uses": calls,
                          "tool_responses": [self.response_for(c) for c in calls],
                          "intermediate_responses": []}
            if calls and rng.random() < 0.3:
                data["intermediate_responses"] = [
                    [rng.choice(["shipping_agent", author]), [{"text": self.sentence(2, 8)}]]]
            return data
        events: list[JSON] = []
        i = 0
        while i < len(calls):
            group = calls[i:i + (2 if rng.random() < 0.2 else 1)]  # sometimes parallel calls
            i += len(group)
            parts: list[JSON] = []
            if rng.random() < 0.2:
                parts.append({"text": "Let me check that.", "thought": rng.random() < 0.5})
            parts += [{"function_call": c} for c in group]
            event: JSON = {"author": author, "content": {"role": "model", "parts": parts}}
            if rng.random() < 0.7:
                prompt_tokens, out_tokens = rng.randint(50, 2000), rng.randint(5, 300)
                event["usage_metadata"] = {"prompt_token_count": prompt_tokens,
                                           "candidates_token_count": out_tokens,
                                           "total_token_count": prompt_tokens + out_tokens}
                event["model_version"] = "gemini-2.5-flash"
            events.append(event)
            events.append({"author": author, "content": {
                "role": "user", "parts": [{"function_response": self.response_for(c)}
                                          for c in group]}})
        if rng.random() < 0.3:
            events.append({"author": rng.choice(["shipping_agent", author]),
                           "content": {"role": "model", "parts": [{"text": self.sentence(2, 8)}]}})
        if self.edge(0.2):
            events.insert(rng.randint(0, len(events)), rng.choice([
                {"author": author},
                {"author": author, "content": None},
                {"author": author, "content": {"role": "model", "parts": None}},
                {"author": author, "content": {"role": "model", "parts": []}},
            ]))
        return {"invocation_events": events}

    # -- cases ---------------------------------------------------------------------------------

    def invocation_pair(self, case_no: int, turn: int) -> tuple[JSON, JSON]:
        rng = self.rng
        n_calls = rng.choices([0, 1, 2, 3, 4], weights=[25, 35, 20, 12, 8])[0]
        exp_calls = [self.call() for _ in range(n_calls)]
        act_calls = self.mutate_calls(exp_calls)
        prompt = self.sentence(2, 16)
        reference = self.sentence()
        answer = self.mutate_text(reference)
        author = "root_agent"
        expected: JSON = {
            "invocation_id": f"e-{case_no}-{turn}",
            "user_content": self.content(prompt, "user"),
            "final_response": self.response_content(reference),
            "intermediate_data": self.intermediate(exp_calls, author),
            "creation_timestamp": 0.0,
        }
        actual: JSON = {
            "invocation_id": f"a-{case_no}-{turn}",
            "user_content": self.content(prompt, "user"),
            "final_response": self.response_content(answer),
            "intermediate_data": self.intermediate(act_calls, author),
            "creation_timestamp": 1_700_000_000.0 + case_no,
            "duration": round(rng.uniform(0.5, 9.0), 3),
            "model_duration": round(rng.uniform(0.2, 0.5), 3),
            "tool_duration": round(rng.uniform(0.0, 0.2), 3),
        }
        for inv in (expected, actual):
            if inv["intermediate_data"] is None and rng.random() < 0.5:
                del inv["intermediate_data"]  # absent rather than null
        return expected, actual

    def case_pair(self, case_no: int) -> tuple[JSON, JSON]:
        n = self.rng.choices([1, 2, 3, 4], weights=[40, 30, 20, 10])[0]
        if self.edge(0.05):
            n = 0
        pairs = [self.invocation_pair(case_no, t) for t in range(n)]
        eval_id = f"case_{case_no:05d}"
        session = {"app_name": "bench_app", "user_id": "bench_user", "state": {}}
        expected = {"eval_id": eval_id, "conversation": [p[0] for p in pairs],
                    "session_input": session, "creation_timestamp": 0.0,
                    "final_session_state": {}}
        actual = {"eval_id": eval_id, "conversation": [p[1] for p in pairs],
                  "session_input": session, "creation_timestamp": 0.0,
                  "final_session_state": {}}
        return expected, actual


def generate(n: int, seed: int, edge_rate: float = 0.0,
             eval_set_id: str = "bench") -> tuple[JSON, JSON]:
    """Expected and actual eval sets (as JSON-ready dicts) with `n` cases."""
    gen = CorpusGenerator(seed, edge_rate)
    pairs = [gen.case_pair(i) for i in range(n)]
    expected = {"eval_set_id": eval_set_id, "name": eval_set_id,
                "description": f"agenteval bench corpus: n={n} seed={seed} edge_rate={edge_rate}",
                "eval_cases": [p[0] for p in pairs], "creation_timestamp": 0.0}
    actual = {"eval_set_id": eval_set_id, "name": eval_set_id,
              "description": f"recorded run for {eval_set_id}",
              "eval_cases": [p[1] for p in pairs], "creation_timestamp": 0.0}
    return expected, actual


# `per_agent: false` keeps ADK's flat trajectory matching (ADK accepts and ignores the key):
# by default agenteval matches per agent when the expected events name two authors or more,
# as the corpus's do (text events by `shipping_agent`), and then departs from ADK by design.
_FLAT = {"per_agent": False}
CONFIGS: dict[str, JSON] = {
    "EXACT": {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "EXACT",
                                                         **_FLAT}}},
    "IN_ORDER": {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0,
                                                            "match_type": "IN_ORDER", **_FLAT}}},
    "ANY_ORDER": {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0,
                                                             "match_type": "ANY_ORDER", **_FLAT}}},
    "rouge": {"criteria": {"response_match_score": 0.8}},
    "default": {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, **_FLAT},
                             "response_match_score": 0.8}},
}


def dump(obj: Any) -> str:
    # allow_nan=False: the files must be standard JSON that both loaders accept.
    return json.dumps(obj, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def write_corpus(out: Path, n: int, seed: int, edge_rate: float = 0.0) -> tuple[Path, Path]:
    """Writes expected/actual eval sets and the configs into `out`; returns the two set paths."""
    out.mkdir(parents=True, exist_ok=True)
    expected, actual = generate(n, seed, edge_rate)
    exp_path, act_path = out / "expected.evalset.json", out / "actual.evalset.json"
    exp_path.write_text(dump(expected), encoding="utf-8")
    act_path.write_text(dump(actual), encoding="utf-8")
    for name, cfg in CONFIGS.items():
        (out / f"config_{name}.json").write_text(json.dumps(cfg) + "\n", encoding="utf-8")
    (out / "corpus.json").write_text(json.dumps({"n": n, "seed": seed, "edge_rate": edge_rate}),
                                     encoding="utf-8")
    return exp_path, act_path


def ensure_corpus(out: Path, n: int, seed: int, edge_rate: float = 0.0) -> tuple[Path, Path]:
    """The corpus in `out`, regenerated only if it is missing or was made with other settings."""
    meta = out / "corpus.json"
    want = {"n": n, "seed": seed, "edge_rate": edge_rate}
    if meta.is_file() and json.loads(meta.read_text()) == want:
        return out / "expected.evalset.json", out / "actual.evalset.json"
    return write_corpus(out, n, seed, edge_rate)


def source_state(repo: Path = BENCH_DIR.parent) -> dict[str, Any]:
    """Which agenteval the numbers belong to: HEAD, uncommitted src/ files, a hash of src/."""
    import hashlib
    import subprocess

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                                  text=True, check=False).stdout.rstrip("\n")
        except OSError:
            return ""

    digest = hashlib.sha1()
    for f in sorted((repo / "src").rglob("*.py")):
        digest.update(str(f.relative_to(repo)).encode() + b"\0" + f.read_bytes())
    dirty = [line[3:] for line in git("status", "--porcelain", "--", "src").splitlines()]
    return {"head": git("rev-parse", "--short", "HEAD").strip(), "src_sha1": digest.hexdigest()[:12],
            "src_uncommitted": dirty}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="number of cases (default 10000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--edge-rate", type=float, default=0.0,
                    help="probability scale for rare edge inputs (0 = realistic only)")
    args = ap.parse_args()
    exp, act = write_corpus(args.out, args.n, args.seed, args.edge_rate)
    data = json.loads(exp.read_text(encoding="utf-8"))
    invs = sum(len(c["conversation"]) for c in data["eval_cases"])
    print(f"wrote {args.n} cases, {invs} invocations: {exp} ({exp.stat().st_size / 1e6:.1f} MB), "
          f"{act} ({act.stat().st_size / 1e6:.1f} MB), configs in {args.out}")


if __name__ == "__main__":
    main()
