"""The calibration certificate beside a judged score, in words shared by every report.

A result document records, per judged criterion, the certificate that applied in the run or
that none did (`EvalCaseResult.judge_certificates`, see `agenteval.criteria.judge.certificates`).
Tables show a short tag beside the criterion's name (`certified κ 0.62`, `uncalibrated`,
`below floor κ 0.31`, with `advisory` when it did not gate); details show the full text.
"""

from __future__ import annotations

from collections.abc import Iterable

from agenteval.schema import EvalCaseResult, JudgeCertificateNote


def tag(note: JudgeCertificateNote) -> str:
    """The short form of a certificate note, for a table cell."""
    k = "" if note.kappa is None else f" κ {note.kappa:.2f}"
    text = {"certified": f"certified{k}", "below_floor": f"below floor{k}",
            "uncalibrated": "uncalibrated"}[note.status]
    return f"{text}, advisory" if note.advisory else text


# The weaker a note, the earlier it ranks: a summary over cases shows the weakest it met.
_RANK = {"uncalibrated": 0, "below_floor": 1, "certified": 2}


def notes(runs: Iterable[EvalCaseResult]) -> dict[str, JudgeCertificateNote]:
    """Each judged criterion's note, by metric name: the weakest of the runs' (the first of
    those). Most criteria have one note per run; a rubric criterion whose certificate names its
    rubrics is certified only in the cases judged on those rubrics, and a summary must not claim
    for every case what holds for some."""
    out: dict[str, JudgeCertificateNote] = {}
    for run in runs:
        keep_weakest(out, run.judge_certificates)
    return out


def keep_weakest(found: dict[str, JudgeCertificateNote], more: Iterable[JudgeCertificateNote]) -> None:
    """Adds `more` to `found` (by metric name), keeping the weaker note where both have one
    (the first of equals): `notes`, a case at a time, as a streamed summary gathers it."""
    for note in more:
        kept = found.get(note.metric_name)
        if kept is None or _RANK[note.status] < _RANK[kept.status]:
            found[note.metric_name] = note


def named(name: str, found: dict[str, JudgeCertificateNote]) -> str:
    """A criterion's name with its certificate's tag, when it is judged: `m [uncalibrated]`."""
    note = found.get(name)
    return name if note is None else f"{name} [{tag(note)}]"


def untagged(reason: str | None, note: JudgeCertificateNote | None) -> str | None:
    """An advisory criterion's reason without the certificate's text it starts with, for a row
    whose name carries the tag (`advisory, not gating: score 0 < ...`): stated once per
    criterion and case, it took four lines of an 80-column table each time."""
    if reason is None or note is None or not note.advisory:
        return reason
    head = f"advisory, not gating ({note.text})"
    return "advisory, not gating" + reason[len(head):] if reason.startswith(head) else reason


def line(note: JudgeCertificateNote) -> str:
    """`metric: judge certified: κ 0.62, ... (advisory, not gating)`."""
    return (f"{note.metric_name}: judge {note.text}"
            + ("; advisory, not gating (judge_certificates.require)" if note.advisory else ""))


__all__ = ["keep_weakest", "line", "named", "notes", "tag", "untagged"]
