from agenteval.reporting.markdown import markdown_summary, md_escape
from agenteval.schema import MetricError
from tests.result_builders import case, result


def test_all_passed_has_totals_only() -> None:
    md = markdown_summary([result([case("a", {"m": 1.0}), case("b", {"m": 0.7})])])
    assert md.startswith("## ✅ agenteval: 2 of 2 case(s) passed")
    assert "| s | 2 | 2 | 0 | 0 | 1 | mean |" in md
    assert "Failing cases" not in md and "<details>" not in md


def test_failing_cases_table_and_collapsed_details() -> None:
    doc = result([
        case("good", {"m": 1.0}),
        case("bad", {"m": 0.25, "n": None},
             metric_errors=[MetricError(metric_name="n", message="boom | <b>x</b>")]),
        case("crash", {}, error="agent exploded"),
    ])
    md = markdown_summary([doc])
    assert md.startswith("## ❌ agenteval: 1 of 3 case(s) passed")
    assert "| s / **bad** | m | 0.25 | 0.5 | failed |" in md
    assert "|  | n | - | 0.5 | not evaluated |" in md
    assert "| s / **crash** | (inference) | - | - | agent error |" in md
    assert "<details><summary>s / bad</summary>" in md
    assert "n: not evaluated: boom | &lt;b&gt;x&lt;/b&gt;" in md  # inside <pre>: HTML-escaped
    assert "<b>x</b>" not in md


def test_repeated_runs_show_mean_and_ci() -> None:
    doc = result([case("c", {"m": s}, run_index=i) for i, s in enumerate([0.0, 0.2, 0.4])])
    md = markdown_summary([doc])
    assert "0.2 \\[" in md and "(mean of 3)" in md
    assert "<details><summary>s / c (3 runs)</summary>" in md


def test_many_failures_are_capped() -> None:
    md = markdown_summary([result([case(f"c{i}", {"m": 0.0}) for i in range(30)])], max_cases=5)
    assert md.count("<details>") == 5 and "… and 25 more failing case(s)" in md


def test_cell_escaping() -> None:
    assert md_escape("a|b") == "a\\|b"
    assert md_escape("<script>") == "&lt;script&gt;"
    assert md_escape("case_0001 _x_ *y*") == "case_0001 \\_x\\_ \\*y\\*"
    assert md_escape("l1\nl2") == "l1<br>l2"


def test_characters_html_may_not_hold_are_written_visibly() -> None:
    # A job summary is rendered as HTML: an agent's NUL or ESC went into it as it was.
    odd = "a\x00b\x1b[31m c\uffff"
    md = markdown_summary([result([case("id\x01", {"m": 0.1}, response=odd),
                                   case("err", {}, error="ValueError: " + odd)])])
    assert not any(c in md for c in "\x00\x01\x1b\uffff")
    assert "id\\u0001" in md and "ValueError: a\\u0000b\\u001b[31m c\\uffff" in md


def test_a_case_runs_warnings_are_listed_passed_or_not_streamed_or_not() -> None:
    # A conversation the simulator's turn limit ended passed with nothing said in the summary.
    from agenteval.reporting.markdown import MarkdownStream
    from agenteval.verdicts.outcome import outcomes

    ok = case("sc", {"m": 1.0})
    ok.warnings = ["the conversation reached the user simulator's turn limit (max_allowed_invocations: 3)"]
    doc = result([ok, case("other", {"m": 1.0})])
    md = markdown_summary([doc])
    assert md.startswith("## ✅")
    assert "### Warnings" in md and ("- s / **sc**: the conversation reached the user simulator's turn "
                                     "limit (max_allowed_invocations: 3)") in md, md
    stream = MarkdownStream()
    for outcome in outcomes(doc):
        stream.add(outcome)
    assert stream.text(doc) == md
