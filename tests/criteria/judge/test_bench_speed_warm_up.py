"""bench/bench_judge_speed.py's warm-up case: it must not hand a timed case its material
(session 22's timed hal-002 reused the warm-up hal-001's context: 1 token processed)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from bench_judge import load_cases
from bench_judge_speed import _material, warm_up_case


def _by_kind() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for kind, injection, case in load_cases():
        if not injection:
            out.setdefault(kind, []).append(case)
    return out


def test_the_warm_up_shares_no_material_with_the_timed_cases() -> None:
    for kind, cases in _by_kind().items():
        timed = cases[1:5]
        warm = warm_up_case(cases[:1] + cases[5:], timed)
        assert warm not in timed
        assert not any(_material(warm) & _material(c) for c in timed), kind


def test_a_first_case_sharing_a_context_is_passed_over_and_an_unshared_one_kept() -> None:
    cases = _by_kind()
    hal = cases["hallucinations"]
    assert hal[0]["context"] == hal[1]["context"]  # hal-001 and hal-002: the case of session 22
    assert warm_up_case(hal[:1] + hal[5:], hal[1:5])["id"] != hal[0]["id"]
    frm = cases["final_response_match"]
    assert warm_up_case(frm[:1] + frm[5:], frm[1:5]) is frm[0]


def test_no_candidate_left_is_an_error() -> None:
    hal = _by_kind()["hallucinations"]
    with pytest.raises(SystemExit):
        warm_up_case(hal[:1], hal[1:5])
