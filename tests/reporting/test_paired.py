"""What `compare` says of INCONCLUSIVE cases: why they are, and what would decide them."""

from io import StringIO

from rich.console import Console

from agenteval.reporting.paired import inconclusive_line, paired_console, paired_markdown
from agenteval.schema import EvalSetResult
from agenteval.verdicts.paired import RunOutcome, Runs, compare_paired, fewest_runs_to_tell
from agenteval.verdicts.stats import fisher_exact


def _runs(verdicts: dict[str, list[bool]]) -> Runs:
    return {eid: {j: RunOutcome(p) for j, p in enumerate(v)} for eid, v in verdicts.items()}


def _compare(a: dict[str, list[bool]], b: dict[str, list[bool]], alpha: float = 0.05):  # type: ignore[no-untyped-def]
    docs = [EvalSetResult(eval_set_result_id=i, eval_set_id="s") for i in "AB"]
    return compare_paired(*docs, runs_a=_runs(a), runs_b=_runs(b), resamples=0, alpha=alpha)


def test_the_fewest_runs_that_can_tell_are_those_of_fishers_test() -> None:
    for alpha in (0.2, 0.1, 0.05, 0.01, 0.001):
        n = fewest_runs_to_tell(alpha)
        assert fisher_exact(n, 0, 0, n) < alpha <= fisher_exact(n - 1, 0, 0, n - 1)
    assert fewest_runs_to_tell(0.05) == 4


def test_inconclusive_cases_say_why_and_how_many_runs_could_tell() -> None:
    c = _compare({"x": [True] * 3, "y": [True]}, {"x": [False] * 3, "y": [False]})
    line = inconclusive_line(c)
    assert line is not None
    assert "2 INCONCLUSIVE" in line and "too few" in line and "--num_runs 4" in line
    assert "4/4 against 0/4" in line and "--until_decided" in line
    out = StringIO()
    Console(file=out, width=80).print(paired_console(c))
    assert "--num_runs 4" in " ".join(out.getvalue().split())
    assert "--num_runs 4" in paired_markdown(c)
    # enough runs a side already: more runs, not a number
    many = inconclusive_line(_compare({"x": [True] * 6}, {"x": [True] * 4 + [False] * 2}))
    assert many is not None and "--num_runs" in many and "4/4" not in many
    assert inconclusive_line(_compare({"x": [True]}, {"x": [True]})) is None


def test_criteria_that_differ_between_the_runs_are_named() -> None:
    """A threshold lowered in B made the same scores "a significant improvement", and would
    have hidden a regression as well, without a word."""
    from agenteval.reporting.paired import config_differences

    a = {"criteria": {"response_match_score": 0.8, "tool_trajectory_avg_score": {"threshold": 1.0},
                      "gone": 0.5}, "repeat_gating": "mean", "not_evaluated": "fail"}
    b = {"criteria": {"response_match_score": {"threshold": 0.0},
                      "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "ANY_ORDER"},
                      "new": 1.0}, "repeat_gating": "all_runs", "not_evaluated": "fail"}
    assert config_differences(a, b) == [
        "gone: only in A", "new: only in B", "response_match_score: threshold 0.8 → 0",
        "tool_trajectory_avg_score: match_type unset → ANY_ORDER", "repeat_gating: mean → all_runs"]
    assert config_differences(a, a) == []
    assert config_differences({}, b) == []  # a side without its config (an older document): nothing said


def test_the_settings_that_differ_are_named_with_both_values() -> None:
    """compare said `NAME: settings differ` without saying which setting: a user could not tell a
    judge sampled once from one sampled five times. Each differing setting is named, A → B,
    nested ones dotted; a default written out on one side is no difference."""
    from agenteval.criteria import default_registry
    from agenteval.reporting.paired import config_differences

    a = {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "EXACT"},
                      "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {
                          "num_samples": 5, "min_confidence": 0.6}}}}
    b = {"criteria": {"tool_trajectory_avg_score": 1.0,
                      "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {
                          "num_samples": 1, "judge_model": "local"}}}}
    settings = default_registry().settings
    assert config_differences(a, b, settings) == [
        "final_response_match_v2: judge_model_options.min_confidence 0.6 → unset, "
        "judge_model_options.num_samples 5 → 1"]
    # without the registry's defaults, what is written is compared
    assert config_differences(a, b) == [
        "final_response_match_v2: judge_model_options.judge_model unset → local, "
        "judge_model_options.min_confidence 0.6 → unset, judge_model_options.num_samples 5 → 1",
        "tool_trajectory_avg_score: match_type EXACT → unset"]
    # a criterion this registry does not know is compared as written
    assert config_differences({"criteria": {"mine": {"threshold": 1, "k": [1, 2]}}},
                              {"criteria": {"mine": {"threshold": 1, "k": [1, 3]}}}, settings) == [
        "mine: k [1, 2] → [1, 3]"]
