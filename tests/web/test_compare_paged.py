"""`/api/compare` and `/api/compare/paired` on many cases: the counts and the decision are
`agenteval compare`'s, and the cases come a page at a time, filtered by the server."""

from __future__ import annotations

from agenteval.reporting.compare import compare
from agenteval.store import RunStore, record_run
from tests.result_builders import case, result
from tests.web.api_support import Live

# c0..c29: c0-c4 regress (one newly failing), c5-c7 improve, c8 is only in the baseline, the rest
# unchanged; "extra" only in the candidate.
_BASE = {f"c{i}": 0.9 if i < 5 else 0.4 if i < 8 else 1.0 for i in range(30)}
_CAND = {**{f"c{i}": 0.6 if i < 4 else 0.1 if i == 4 else 0.95 if i < 8 else 1.0 for i in range(30)},
         "extra": 1.0}
del _CAND["c8"]


def _record(live: Live, app: str, result_id: str, scores: dict[str, float], created: float) -> None:
    doc = result([case(i, {"m": s}) for i, s in scores.items()], result_id=result_id, created=created)
    record_run(live.agents_dir / app, [doc])


def test_the_comparison_is_the_clis_and_its_cases_come_a_page_at_a_time(live: Live) -> None:
    _record(live, "echo", "base", _BASE, 1.0)
    _record(live, "echo", "cand", _CAND, 2.0)
    store = RunStore(live.agents_dir / "echo")
    cli = compare(store.summary("base"), store.summary("cand"), 0.1)
    ask = {"a": "base", "b": "cand", "margin": 0.1}
    whole = live.get("/api/compare", params=ask).json()
    assert whole["counts"] == {k.value: v for k, v in cli.counts().items()}
    assert whole["counts"]["regressed"] == 4 and whole["counts"]["newly failed"] == 1
    assert whole["has_regressions"] is True and whole["show"] == "all"
    assert whole["total"] == 31 == len(whole["cases"]) and whole["offset"] == 0
    assert [c["eval_id"] for c in whole["cases"]][:3] == ["c0", "c1", "c2"]
    assert [c["eval_id"] for c in whole["cases"]][-2:] == ["extra", "c8"]  # (then the baseline's own)

    def ids(**params: object) -> tuple[int, list[str]]:
        got = live.get("/api/compare", params={**ask, **params}).json()
        assert got["counts"] == whole["counts"]  # (every page counts every case)
        return got["total"], [c["eval_id"] for c in got["cases"]]

    assert ids(show="changed", limit=3) == (10, ["c0", "c1", "c2"])
    assert ids(show="changed", offset=9, limit=3) == (10, ["c8"])
    assert ids(show="regressed") == (5, ["c0", "c1", "c2", "c3", "c4"])
    assert ids(show="improved") == (3, ["c5", "c6", "c7"])
    assert ids(show="unchanged", limit=2) == (21, ["c9", "c10"])
    assert ids(show="added") == (1, ["extra"]) and ids(show="removed") == (1, ["c8"])
    first = live.get("/api/compare", params={**ask, "show": "regressed", "limit": 1}).json()["cases"][0]
    assert first == whole["cases"][0] and first["criteria"][0]["delta"] == -0.30000000000000004
    assert live.get("/api/compare", params={**ask, "show": "nope"}).status_code == 400
    assert live.get("/api/compare", params={**ask, "limit": 10_000}).status_code == 400

    paired = live.get("/api/compare/paired", params={"a": "base", "b": "cand"}).json()
    assert paired["total"] == 31 == len(paired["cases"])
    some = live.get("/api/compare/paired", params={"a": "base", "b": "cand",
                                                   "eval_id": ["c4", "nope", "c8", "c4"]}).json()
    assert [c["eval_id"] for c in some["cases"]] == ["c4", "c8"] and some["total"] == 2
    assert some["measures"] == paired["measures"] and some["decision"] == paired["decision"]
    removed = live.get("/api/compare/paired", params={"a": "base", "b": "cand", "limit": 1, "offset": 1,
                                                      "change": ["REMOVED", "ADDED"]}).json()
    assert removed["total"] == 2 and [c["eval_id"] for c in removed["cases"]] == ["c8"]


def test_runs_of_two_agents_histories_compare_as_runs_of_one(live: Live) -> None:
    _record(live, "echo", "base", _BASE, 1.0)
    _record(live, "echo", "cand", _CAND, 2.0)
    _record(live, "slow", "cand2", _CAND, 3.0)
    one = live.get("/api/compare", params={"a": "base", "b": "cand", "show": "changed"}).json()
    two = live.get("/api/compare", params={"a": "base", "b": "cand2", "show": "changed"}).json()
    assert two["candidate_id"] == "cand2"
    assert {**two, "candidate_id": "cand"} == one
