"""The solved examples' size: every example is a whole question and its reply, evaluated before
each material token the criterion judges, so each one costs time on every question
(bench/README.md "Session 22: a shorter hallucination prefix")."""

from __future__ import annotations

import json

from agenteval.criteria.judge.prompting import examples, prompts


def test_hallucinations_shows_five_examples_with_every_label_in_the_question_s_own_form() -> None:
    # Seven made a 1,868-token prefix; these five keep each label (not_applicable too, which no
    # labelled set measures) and both kinds of support (a format, the instructions).
    verdicts = [json.loads(reply)["verdict"] for _, reply in examples.HALLUCINATIONS]
    assert sorted(verdicts) == ["contradictory", "not_applicable", "supported", "supported",
                                "unsupported"]
    assert [p for p, _ in examples.HALLUCINATIONS][-1] == prompts.hallucination(
        prompts.hallucination_context("Orders ship within 2 business days.",
                                      "How fast do you ship?", "none"),
        "We ship within two business days.")
