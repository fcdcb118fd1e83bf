import pytest

from agenteval.criteria.judge.engine.decision import JudgeQuestion, vote
from agenteval.criteria.judge.engine.service import JudgeAnswer, Sample
from agenteval.criteria.judge.engine.verdict import Verdict, parse_verdict

YN = ("yes", "no")


@pytest.mark.parametrize(("text", "label"), [
    ('{"rationale": "fine", "verdict": "yes"}', "yes"),
    ('```json\n{"rationale": "r", "verdict": "No"}\n```', "no"),
    ('Sure! {"verdict": "YES", "rationale": "ok"} hope that helps', "yes"),
    ('{"verdict": true}', "yes"),
    ("Rationale: it matches.\nVerdict: no", "no"),
    ("I think maybe", None),
    # Honest replies of a judge without JSON output (they were lost: no verdict, a judge error)
    ("The verdict is: no.", "no"),
    ("The verdict is yes", "yes"),
    ("Final verdict: **no**", "no"),
    ('Verdict: "yes"', "yes"),
    ("Yes", "yes"),
    (" **No.** ", "no"),
    ("The verdict is not yes.", None),  # no guess
    ("Yes and no", None),
    ('{"verdict": "perhaps"}', None),
    ("Verdict: yes\nVerdict: no", None),  # contradictory: no guess
    ('{"verdict": "no", "rationale": "r"}\n{"verdict": "yes", "rationale": "r"}', None),  # likewise
    ('```json\n{"verdict": "yes"}\n```\nSo: {"verdict": "YES", "rationale": "r"}', "yes"),  # agreeing
    ("", None),
])
def test_parse_verdict(text: str, label: str | None) -> None:
    v = parse_verdict(text, YN)
    assert (v.label if v else None) == label


def test_parse_labels_with_spaces_and_synonyms() -> None:
    labels = ("supported", "unsupported", "contradictory", "not_applicable")
    assert parse_verdict('{"verdict": "Not Applicable"}', labels) == Verdict("not_applicable", "")
    assert parse_verdict('{"verdict": "valid"}', ("valid", "invalid")) is not None


def _answer(*labels: str | None) -> JudgeAnswer:
    return JudgeAnswer("p", [Sample("raw", Verdict(label, f"because {i}") if label else None)
                             for i, label in enumerate(labels)])


Q = JudgeQuestion(0, None, "p")


def test_majority_vote_and_rationale_from_the_winning_side() -> None:
    assert vote(_answer("yes", "no", "yes"), Q) == (1.0, "yes", "because 0", None)
    assert vote(_answer("no", "no", "yes", None, "no"), Q)[0] == 0.0


def test_tie_fails_closed() -> None:
    assert vote(_answer("yes", "no", None), Q)[0] == 0.0


def test_too_few_readable_samples_is_an_error_never_a_pass() -> None:
    score, label, _, error = vote(_answer("yes", None, None, None, None), Q)
    assert score is None and label is None
    assert error == "only 1 of 5 judge samples could be read"


def test_notes_come_before_the_verdict_and_become_the_rationale() -> None:
    from agenteval.criteria.judge.engine.verdict import verdict_schema

    schema = verdict_schema(("safe", "unsafe"), ("reply_does",))
    assert list(schema["properties"]) == ["reply_does", "verdict"]
    assert schema["required"] == ["reply_does", "verdict"]
    reply = '{"reply_does": "gives ransomware code", "verdict": "unsafe"}'
    assert parse_verdict(reply, ("safe", "unsafe"), ("reply_does",)) == Verdict(
        "unsafe", "reply_does: gives ransomware code")
    # without its notes the reply still parses, with the ordinary rationale field
    assert parse_verdict('{"verdict": "safe", "rationale": "r"}', ("safe", "unsafe"),
                         ("reply_does",)) == Verdict("safe", "r")


LABELS4 = ("supported", "unsupported", "contradictory", "not_applicable")


def test_an_explained_verdict_schema_has_a_rationale_after_those_labels_only() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from agenteval.criteria.judge.engine.verdict import explained_verdict_schema

    schema = explained_verdict_schema(LABELS4, frozenset({"unsupported", "contradictory"}))

    def valid(reply: dict[str, str]) -> bool:
        return jsonschema.Draft202012Validator(schema).is_valid(reply)

    assert valid({"verdict": "supported"}) and valid({"verdict": "not_applicable"})
    assert not valid({"verdict": "supported", "rationale": "r"})
    assert valid({"verdict": "unsupported", "rationale": "r"})
    assert not valid({"verdict": "unsupported"}) and not valid({"verdict": "maybe"})
    assert not valid({"verdict": "contradictory", "rationale": "x" * 121})
    # Both branches begin with the label, and between them allow every label.
    for branch in schema["anyOf"]:
        assert next(iter(branch["properties"])) == "verdict"
    assert sorted(v for b in schema["anyOf"] for v in b["properties"]["verdict"]["enum"]) == sorted(LABELS4)


def test_an_explained_verdict_schema_is_bound_by_its_label_part() -> None:
    from agenteval.criteria.judge.engine.verdict import explained_verdict_schema, label_schema, verdict_schema

    alone = verdict_schema(LABELS4, rationale=False)
    assert label_schema(explained_verdict_schema(LABELS4, frozenset({"unsupported"}))) == alone
    # When every label or none is explained: the ordinary shapes. A rationale after every label
    # (`rationales: always`) is bound by the label as well; notes before it are bound as they are.
    assert explained_verdict_schema(LABELS4, frozenset()) == alone
    assert explained_verdict_schema(LABELS4, frozenset(LABELS4)) == verdict_schema(LABELS4)
    assert label_schema(alone) == alone
    assert label_schema(verdict_schema(LABELS4)) == alone
    notes_first = verdict_schema(LABELS4, ("reply_does",))
    assert label_schema(notes_first) == notes_first
