"""Tables fitted to a width: column widths and packed lines."""

from agenteval.reporting.tables import fit_widths, pack


def test_fit_widths_narrows_the_widest_first_and_never_below_a_floor() -> None:
    assert fit_widths([50, 50, 10], [5, 5, 10], 80) == [35, 35, 10]  # ties narrow evenly
    assert fit_widths([100, 8, 30], [20, 8, 10], 70) == [32, 8, 30]  # one long message gives way
    assert fit_widths([100, 8, 30], [20, 8, 10], 40) == [20, 8, 12]
    assert fit_widths([10, 10], [10, 10], 15) is None
    assert fit_widths([4, 6], [9, 9], 10) == [4, 6]  # a floor above the natural width is moot


def test_pack_breaks_only_between_pieces() -> None:
    assert pack(["run.", "config.", "criteria.", "tool_trajectory_avg_score.", "threshold"], 20) == (
        "run.config.criteria.\ntool_trajectory_avg_score.\nthreshold")
    assert pack(["mean 0.5", "std 0.1", "pass@k 1"], 18, "  ") == "mean 0.5  std 0.1\npass@k 1"
