"""Tables fitted to a width: column widths and packed lines."""

from agenteval.reporting.tables import break_long, fit_widths, pack


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


def test_break_long_breaks_at_spaces_and_slashes_then_punctuation_and_keeps_every_character() -> None:
    path = ".agenteval/eval_history/my_agent_demo_1795987802.3619425.evalset_result.json"
    assert break_long(path, 47).split("\n") == [
        ".agenteval/eval_history/", "my_agent_demo_1795987802.3619425.evalset_", "result.json"]
    assert break_long(path, 80) == path  # fits: untouched
    assert break_long("eval 'my agent' 'my agent/demo.evalset.json:simple'", 30).split("\n") == [
        "eval 'my agent' 'my agent/", "demo.evalset.json:simple'"]
    sha = "e990b29401b19d885e629e3f20b91f5770ce99390e87fbe4ede55786cd1c6ccd"
    assert break_long(sha, 47) == sha  # nowhere to break: left to fold
    for text, width in ((path, 10), ("a b  c/d_e", 3), ("x\n" + path, 20)):
        assert break_long(text, width).replace("\n", "").replace(" ", "") == \
            text.replace("\n", "").replace(" ", "")


def test_fit_table_breaks_a_too_wide_id_after_its_underscores_not_mid_word() -> None:
    from io import StringIO

    from rich.console import Console

    from agenteval.reporting.tables import Col, fit_table

    long_id = "customer_support_multi_turn_regression_suite_v2_with_handoffs"
    table = fit_table([Col("eval id", floor=20), Col("status")], [[long_id, "FAILED"], ["x y", "PASSED"]],
                      40, force=True)
    out = StringIO()
    Console(file=out, width=40, color_system=None).print(table)
    cells = [line.split("│")[1].strip() for line in out.getvalue().splitlines() if line.startswith("│")]
    assert "".join(cells[:-1]) == long_id and all(c.endswith("_") for c in cells[:-2]), cells
