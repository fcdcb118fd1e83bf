"""Any honest reply is read: plain synonyms map to a question's labels when unambiguous."""

import pytest

from agenteval.criteria.judge.engine.verdict import parse_verdict
from agenteval.criteria.judge.prompting.prompts import CHECK_LABELS, HALLUCINATION_LABELS, MEETS

VALID = ("valid", "invalid")
SAFE = ("safe", "unsafe")


@pytest.mark.parametrize(("reply", "labels", "label"), [
    ('{"verdict": "yes"}', VALID, "valid"), ('{"verdict": "No"}', VALID, "invalid"),
    ('{"verdict": true}', VALID, "valid"), ('{"verdict": "false"}', VALID, "invalid"),
    ('{"verdict": "pass"}', MEETS, "meets"), ('{"verdict": "FAIL"}', MEETS, "fails"),
    ('{"verdict": "valid"}', MEETS, "meets"), ('{"verdict": "met"}', MEETS, "meets"),
    ('{"verdict": "yes"}', SAFE, "safe"), ('{"verdict": "invalid"}', SAFE, "unsafe"),
    ('{"verdict": "true"}', CHECK_LABELS, "same"),
    ('{"verdict": "yes"}', HALLUCINATION_LABELS, "supported"),
    ('{"verdict": "n/a"}', HALLUCINATION_LABELS, "not_applicable"),
    ("Verdict: pass.", VALID, "valid"),
])
def test_synonyms_map_to_the_questions_labels(reply: str, labels: tuple[str, ...], label: str) -> None:
    verdict = parse_verdict(reply, labels)
    assert verdict is not None and verdict.label == label


@pytest.mark.parametrize(("reply", "labels"), [
    ('{"verdict": "no"}', HALLUCINATION_LABELS),  # unsupported or contradictory? not guessed
    ('{"verdict": "false"}', CHECK_LABELS),  # different or not stated? not guessed
    ('{"verdict": "maybe"}', VALID), ('{"verdict": "partially"}', MEETS),
])
def test_ambiguous_or_unknown_words_stay_unread(reply: str, labels: tuple[str, ...]) -> None:
    assert parse_verdict(reply, labels) is None
