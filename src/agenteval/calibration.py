"""Calibrating a judge on labelled cases: how often it is right, and the confidence above which
its verdicts agree with the labels often enough to be trusted. A tool built on the runner, for
`agenteval judge calibrate`.

Each labelled case is scored by its criterion, through the same `score_case` every run uses.
A case's confidence is the lowest confidence of its verdicts (a sentence split in two must be
sure of both). For each criterion: accuracy over all cases; and, for the target agreement, the
lowest confidence threshold at which the verdicts at or above it (the committed ones) agree
with the labels at least that often, with the coverage (the share committed) it leaves. A
threshold is a criterion's `judge_model_options.min_confidence`. A verdict's confidence is its
probability where the judge gives log-probabilities, else the share of its samples agreeing
(see `JudgeRecord.confidence_source`); a threshold applies to the kind it was calibrated on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from agenteval.criteria import default_registry
from agenteval.criteria.judge import rubric_checks
from agenteval.criteria.judge.base import JudgeCriterion
from agenteval.criteria.judge.certificates import (
    Certificate,
    FamilyAgreement,
    judge_identity,
    kappa,
    prompt_fingerprint,
)
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.criteria.judge.labelled import LABELS, METRIC, LabelledCase, criterion_config
from agenteval.criteria.judge.prompting import prompts
from agenteval.criteria.judge.rubrics import FAMILY_FLOOR, rubric_text
from agenteval.datasets.loader import load_eval_set
from agenteval.errors import DataError
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase, EvalCaseResult, EvalStatus, Rubric
from agenteval.store import RunStore
from agenteval.store.reviews import Review, ReviewStore, ReviewTarget


@dataclass
class Outcome:
    """One labelled case judged: right or wrong (None: the judge gave no verdict) and how sure."""

    case: LabelledCase
    correct: bool | None
    confidence: float | None
    source: str | None = None  # the verdicts' confidence source ("logprobs" or "samples")
    error: str | None = None  # why the judge gave no verdict, when it said

    @property
    def predicted(self) -> bool | None:
        """The judge's side (True: positive); None without a verdict."""
        return None if self.correct is None else self.case.positive == self.correct


@dataclass
class Calibration:
    """One criterion's calibration (see the module docstring)."""

    metric: str
    outcomes: list[Outcome] = field(default_factory=list)
    target: float = 0.9
    threshold: float | None = None
    agreement: float | None = None  # on the committed verdicts at `threshold`
    coverage: float | None = None

    @property
    def accuracy(self) -> float:
        return sum(1 for o in self.outcomes if o.correct) / len(self.outcomes) if self.outcomes else 0.0

    def at(self, threshold: float) -> tuple[float | None, float]:
        """(agreement, coverage) when verdicts below `threshold` abstain."""
        committed = [o for o in self.outcomes if o.correct is not None
                     and (o.confidence if o.confidence is not None else 1.0) >= threshold]
        coverage = len(committed) / len(self.outcomes) if self.outcomes else 0.0
        agreement = sum(1 for o in committed if o.correct) / len(committed) if committed else None
        return agreement, coverage

    def kappa_at(self, threshold: float) -> float | None:
        """Cohen's κ of the verdicts committed at `threshold` against their labels."""
        return kappa((o.predicted is True, o.case.positive) for o in self.committed(threshold))

    def committed(self, threshold: float) -> list[Outcome]:
        """The outcomes with a verdict at or above `threshold`."""
        return [o for o in self.outcomes if o.predicted is not None
                and (o.confidence if o.confidence is not None else 1.0) >= threshold]

    def choose(self) -> None:
        """The lowest threshold that reaches the target agreement (None when none does)."""
        candidates = sorted({0.0, *(o.confidence for o in self.outcomes if o.confidence is not None)})
        for t in candidates:
            agreement, coverage = self.at(t)
            if agreement is not None and agreement >= self.target:
                self.threshold, self.agreement, self.coverage = t, agreement, coverage
                return


async def calibrate(cases: Sequence[LabelledCase], judge: JudgeService, *, num_samples: int = 5,
                    judge_model: str | None = None, target: float = 0.9, parallelism: int = 1,
                    on_case: Callable[[Outcome], None] | None = None) -> list[Calibration]:
    """Judges every case and calibrates each criterion (in first-seen order)."""
    registry = default_registry()
    by_metric: dict[str, Calibration] = {}
    outcomes: list[Outcome | None] = [None] * len(cases)
    limiter = anyio.CapacityLimiter(parallelism)

    async def one(i: int) -> None:
        case = cases[i]
        metric = registry.configure(case.metric, criterion_config(case, num_samples, judge_model))
        run = CaseRun(case=case.case, actual=case.actual, eval_set_id="labelled")
        async with limiter:
            result = await score_case(run, [metric], judge=judge)
        overall = result.overall_eval_metric_results[0]
        verdicts = [r for r in result.judge_records if r.step is None]
        confidences = [r.confidence for r in verdicts if r.confidence is not None]
        predicted = None if overall.score is None else overall.score >= 1.0
        sources = [r.confidence_source for r in verdicts if r.confidence_source]
        error = next((r.error for r in result.judge_records if r.error), None) if predicted is None else None
        outcome = Outcome(case, None if predicted is None else predicted == case.positive,
                          min(confidences) if confidences else None, sources[0] if sources else None, error)
        outcomes[i] = outcome
        if on_case is not None:
            on_case(outcome)

    async with anyio.create_task_group() as tg:
        for i in range(len(cases)):
            tg.start_soon(one, i)
    for outcome in outcomes:
        if outcome is not None:
            by_metric.setdefault(outcome.case.metric, Calibration(outcome.case.metric, target=target)) \
                .outcomes.append(outcome)
    for calibration in by_metric.values():
        calibration.choose()
    return list(by_metric.values())


def certificate(c: Calibration, *, judge_model: str, num_samples: int, source: str,
                source_sha256: str, created: str, min_confidence: float | None = None) -> Certificate:
    """`c` as a certificate (see `criteria.judge.certificates`): agreement, κ and coverage of
    the verdicts committed at `min_confidence`, by default the criterion's shipped confidence
    threshold (for the confidence source its verdicts had), bound to the judge model, the prompt
    and, when every case had the same rubric, that rubric (else none: a general certificate over
    many rubrics)."""
    first = c.outcomes[0].case
    config = criterion_config(first, num_samples, judge_model)
    built = default_registry().configure(c.metric, {**config, "judge_model_options": {
        **config["judge_model_options"], "min_confidence": None}})
    sources = [o.source for o in c.outcomes if o.source]
    criterion = built.build()
    assert isinstance(criterion, JudgeCriterion), f"{c.metric} is not a judged criterion"
    threshold = min_confidence if min_confidence is not None else \
        criterion.min_confidence(max(set(sources), key=sources.count) if sources else None)
    if threshold is None:
        threshold = 0.0
    agreement, coverage = c.at(threshold)
    rubric_set = {o.case.rubric for o in c.outcomes}
    rubrics = None if None in rubric_set or len(rubric_set) != 1 else (str(first.rubric),)
    positives = sum(1 for o in c.outcomes if o.case.positive)
    return Certificate(
        metric=c.metric, judge_model=judge_model, judge_identity=judge_identity(judge_model),
        prompt_version=prompts.PROMPT_VERSION,
        prompt_sha256=prompt_fingerprint(c.metric, built.criterion.model_dump(mode="json")),
        labels=len(c.outcomes), positives=positives, negatives=len(c.outcomes) - positives,
        agreement=None if agreement is None else round(agreement, 4),
        kappa=None if (k := c.kappa_at(threshold)) is None else round(k, 4),
        coverage=round(coverage, 4), accuracy=round(c.accuracy, 4),
        min_confidence=threshold or None, source=source, source_sha256=source_sha256,
        created=created, num_samples=num_samples, rubrics=rubrics,
        families=family_agreement(c, getattr(criterion, "rubric_type", ""), threshold))


def family_agreement(c: Calibration, rubric_type: str, threshold: float) -> tuple[FamilyAgreement, ...]:
    """Per rubric family (`rubric_checks.family_of`; `two_step` for a rubric of none), the
    agreement and κ of the verdicts committed at `threshold`; below the floor when the agreement
    is under `rubrics.FAMILY_FLOOR` or nothing was committed. Empty for a criterion without
    rubric families."""
    if rubric_type not in rubric_checks.FAMILIES:
        return ()
    by: dict[str, list[Outcome]] = {}
    for o in c.outcomes:
        family = rubric_checks.family_of(o.case.rubric or "", rubric_type) or "two_step"
        by.setdefault(family, []).append(o)
    out = []
    for family, outcomes in sorted(by.items()):
        part = Calibration(c.metric, outcomes, c.target)
        agreement, _ = part.at(threshold)
        k = part.kappa_at(threshold)
        out.append(FamilyAgreement(family, len(outcomes), None if agreement is None else round(agreement, 4),
                                   None if k is None else round(k, 4),
                                   agreement is None or agreement < FAMILY_FLOOR))
    return tuple(out)


# Reviews as labels. Each judged criterion here asks the judge one question per turn (or per
# rubric of a turn), as ADK judges them; a review labels the questions it covers. The label
# pairs are the labelled format's (positive, negative).
_REVIEW_LABELS = {kind: (LABELS[kind][0], LABELS[kind][1]) for kind in (
    "final_response_match", "safety", "hallucinations", "rubric_final_response", "rubric_tool_use",
    "rubric_multi_turn_trajectory", "multi_turn_task_success", "multi_turn_trajectory_quality",
    "multi_turn_tool_use_quality")}
# The multi-turn criteria ask their question (or each rubric) once over the whole conversation,
# reported on its last turn: re-askable from the run's turns, so a review labels them (as the
# labelled file format's conversation kinds do).
_CONVERSATION_KINDS = {"rubric_multi_turn_trajectory": "rubric_based_multi_turn_trajectory_quality_v1",
                       "multi_turn_task_success": "multi_turn_task_success_v1",
                       "multi_turn_trajectory_quality": "multi_turn_trajectory_quality_v1",
                       "multi_turn_tool_use_quality": "multi_turn_tool_use_quality_v1"}
_METRICS = {**METRIC, **_CONVERSATION_KINDS}
REVIEWABLE = {_METRICS[kind]: kind for kind in _REVIEW_LABELS}
_RUBRIC_KINDS = {"rubric_final_response", "rubric_tool_use", "rubric_multi_turn_trajectory"}


def reviewable(run: EvalCaseResult) -> list[str]:
    """The criteria of a case run whose verdicts a review may label: the judged ones
    (`REVIEWABLE`) that the run evaluated (one not evaluated, e.g. for want of a judge model,
    has no verdict to agree or disagree with), in the run's order."""
    return [m.metric_name for m in run.overall_eval_metric_results
            if m.metric_name in REVIEWABLE and m.eval_status != EvalStatus.NOT_EVALUATED]


def unreviewable(criterion: str, run: EvalCaseResult) -> str | None:
    """Why a review of `criterion` (one of the run's) cannot be a label, or None when it can
    (`reviewable`)."""
    if criterion not in REVIEWABLE:
        return f"{criterion} is not a judged criterion: no judge decides it, so no review of it is a label"
    if criterion not in reviewable(run):
        return f"{criterion} was not evaluated in this case run: there is no judge's verdict to review"
    return None


@dataclass(frozen=True)
class SkippedReview:
    """A review that gave no label, and why (said by `agenteval judge calibrate`)."""

    review: Review
    reason: str


@dataclass
class ReviewLabels:
    """The labelled cases made from a history's reviews, and the reviews left out."""

    cases: list[LabelledCase] = field(default_factory=list)
    skipped: list[SkippedReview] = field(default_factory=list)


@dataclass(frozen=True)
class _Verdict:
    """One judged question of a case run: turn `index`, rubric `item`, the judge's side."""

    index: int
    item: str | None
    positive: bool | None  # None: the judge gave no verdict
    why: str = ""  # why `positive` is None


def _turn_verdict(run: EvalCaseResult, metric: str, index: int) -> _Verdict:
    per = run.eval_metric_result_per_invocation[index]
    result = next((m for m in per.eval_metric_results if m.metric_name == metric), None)
    if result is None and len(run.eval_metric_result_per_invocation) == 1:
        result = next((m for m in run.overall_eval_metric_results if m.metric_name == metric), None)
    if result is None or result.eval_status not in (EvalStatus.PASSED, EvalStatus.FAILED):
        return _Verdict(index, None, None, f"turn {index + 1} has no {metric} verdict")
    passed = result.eval_status == EvalStatus.PASSED
    if passed and result.score is not None and result.score < 1.0:
        # passed below 1: some sentences unsupported, yet the verdict passed at its threshold;
        # the re-asked question (is every sentence supported?) has the other answer
        return _Verdict(index, None, None, f"turn {index + 1} passed with score {result.score:g}, below "
                        "1: the question asked again (is all of it right?) has the other answer")
    return _Verdict(index, None, passed)


def _rubric_verdicts(run: EvalCaseResult, metric: str, index: int, item: str | None) -> list[_Verdict]:
    out = []
    for r in run.judge_records:
        if r.metric_name == metric and r.step is None and r.invocation_index == index and r.item \
                and (item is None or r.item == item):
            positive = None if r.score is None else r.score >= 1.0
            out.append(_Verdict(index, r.item, positive,
                                f"the judge gave rubric {r.item} no verdict" if positive is None else ""))
    return out


def _rubric_texts(root: Path, run: EvalCaseResult, metric: str, index: int) -> dict[str, str]:
    """The rubric texts a case run's criterion judged on turn `index`: the criterion's own, the
    turn's expected rubrics (every turn's so far, for the multi-turn one) and the case's (from
    `<root>/<eval set>.evalset.json`, if there)."""
    rubrics: list[Rubric] = []
    overall = next((m for m in run.overall_eval_metric_results if m.metric_name == metric), None)
    for raw in ((overall.criterion or {}).get("rubrics") or []) if overall else []:
        try:
            rubrics.append(Rubric.model_validate(raw))
        except ValueError:
            continue
    # the multi-turn criterion reads the rubrics of every expected turn, the others their turn's
    per = run.eval_metric_result_per_invocation
    first = 0 if REVIEWABLE.get(metric) in _CONVERSATION_KINDS else index
    for p in per[first:index + 1]:
        rubrics += (p.expected_invocation.rubrics or []) if p.expected_invocation else []
    eval_set = root / f"{run.eval_set_id}.evalset.json"
    if eval_set.is_file():
        try:
            case = load_eval_set(eval_set).case(run.eval_id)
        except DataError:
            case = None
        rubrics += (case.rubrics or []) if case else []
    return {r.rubric_id: rubric_text(r) for r in rubrics}


def _targets(review: Review, run: EvalCaseResult) -> list[ReviewTarget] | str:
    """The judged verdicts a review covers, or why none: a criterion's (its turn, its rubric);
    for a review of the case's verdict, those of the judged criteria its comment names."""
    if review.target:
        try:
            target = ReviewTarget.parse(review.target)
        except DataError as e:
            return str(e)
        if target.criterion not in REVIEWABLE:
            return f"{target.criterion} is not a judged criterion whose verdict can be asked again"
        return [target]
    judged = [m.metric_name for m in run.overall_eval_metric_results if m.metric_name in REVIEWABLE]
    named = [m for m in judged if re.search(rf"\b{re.escape(m)}\b", review.comment)]
    if named:
        return [ReviewTarget(m) for m in named]
    return ("a review of the case's verdict names no judged criterion of it in its comment"
            + (f" ({', '.join(judged)})" if judged else " (it has none)"))


def _labels(root: Path, review: Review, run: EvalCaseResult, target: ReviewTarget,
            ) -> tuple[list[tuple[int, LabelledCase]], list[str]]:
    """The labelled cases one review gives for one target (each with how specific its review
    was), and why each question it covers but could not label was left out."""
    metric, kind = target.criterion, REVIEWABLE[target.criterion]
    turns = len(run.eval_metric_result_per_invocation)
    if not any(m.metric_name == metric for m in run.overall_eval_metric_results):
        return [], [f"the case run has no {metric} verdict"]
    if target.invocation is not None and target.invocation >= turns:
        return [], [f"the case run has no turn {target.invocation + 1}"]
    indices = [target.invocation] if target.invocation is not None else list(range(turns))
    if kind in _CONVERSATION_KINDS and target.invocation is None:
        indices = [turns - 1]  # the one verdict over the conversation is on its last turn
    if kind in _RUBRIC_KINDS:
        verdicts = [v for i in indices for v in _rubric_verdicts(run, metric, i, target.item)]
    else:
        verdicts = [_turn_verdict(run, metric, i) for i in indices]
    if not verdicts:
        return [], [f"no judged {metric} verdict recorded for it"]
    agree = review.agreement == "agree"
    if not agree and len(verdicts) > 1:
        return [], [f"disagrees with {len(verdicts)} {metric} verdicts (turns or rubrics) without "
                    "naming the wrong one: review that turn or rubric"]
    specific = (target.invocation is not None) + (target.item is not None) + bool(review.target)
    out, why = [], []
    for v in verdicts:
        if v.positive is None:
            why.append(v.why)
            continue
        per = run.eval_metric_result_per_invocation[v.index]
        if kind == "final_response_match" and (per.expected_invocation is None
                                                or per.expected_invocation.final_response is None):
            why.append(f"turn {v.index + 1} has no expected response to match")
            continue
        rubric = None
        if v.item is not None:
            rubric = _rubric_texts(root, run, metric, v.index).get(v.item)
            if rubric is None:
                why.append(f"the text of rubric {v.item} is neither in the run nor in its eval set file")
                continue
        positive, negative = _REVIEW_LABELS[kind]
        label = positive if v.positive == agree else negative
        case_id = f"{review.run_id}/{review.eval_id}/{review.run_index}" \
            + (f"#{v.index}" if turns > 1 else "") + (f"/{v.item}" if v.item else "")
        # the conversation as the judge saw it: the one turn, or every turn up to the one the
        # multi-turn criterion reports on (rubrics left out: the label's one rubric is asked)
        actuals = [p.actual_invocation.model_copy(update={"rubrics": None})
                   for p in run.eval_metric_result_per_invocation[:v.index + 1]]
        if kind not in _CONVERSATION_KINDS:
            actuals = actuals[-1:]
        shown = actuals
        if kind == "final_response_match":
            assert per.expected_invocation is not None  # checked above
            shown = [per.expected_invocation]
        out.append((specific, LabelledCase(case_id, kind, label, metric,
                                           EvalCase(eval_id=case_id, conversation=shown), actuals,
                                           rubric)))
    return out, why


def labels_from_reviews(root: str | Path) -> ReviewLabels:
    """Labelled cases from people's reviews in the run history at `root` (`store.reviews`, made
    in `agenteval web`), for every criterion of `REVIEWABLE`, one per judged question as the
    criterion asks it (per turn; per rubric of a turn): agreeing labels each question the
    reviewed verdict covers the judge's way; disagreeing labels the one question it covers the
    other way (a disagreement covering several, e.g. a criterion over three turns, names no wrong
    one and is skipped). A review of the case's verdict covers the judged criteria its comment
    names. Where reviews overlap, the most specific one (rubric, turn, criterion, case) labels.
    Case ids are `<run id>/<eval id>/<run index>[#<turn index>][/<rubric id>]`."""
    root = Path(root)
    store = RunStore(root)
    documents: dict[str, dict[tuple[str, int], EvalCaseResult] | None] = {}
    chosen: dict[tuple[str, str], tuple[int, LabelledCase]] = {}
    out = ReviewLabels()
    for review in ReviewStore(root).reviews():
        if review.run_id not in documents:
            try:
                doc = store.get(review.run_id)
                documents[review.run_id] = {(r.eval_id, r.run_index): r for r in doc.eval_case_results}
            except DataError:
                documents[review.run_id] = None
        runs = documents[review.run_id]
        run = runs.get((review.eval_id, review.run_index)) if runs is not None else None
        if run is None:
            out.skipped.append(SkippedReview(review, "the run is no longer stored" if runs is None
                                             else "the run has no such case run"))
            continue
        targets = _targets(review, run)
        if isinstance(targets, str):
            out.skipped.append(SkippedReview(review, targets))
            continue
        for target in targets:
            labels, reasons = _labels(root, review, run, target)
            out.skipped += [SkippedReview(review, why) for why in reasons]
            for rank, case in labels:
                key = (case.id, case.metric)
                if key not in chosen or chosen[key][0] <= rank:  # later reviews replace equal ones
                    chosen[key] = (rank, case)
    out.cases = [case for _, case in chosen.values()]
    return out


def labelled_from_reviews(root: str | Path) -> list[LabelledCase]:
    """The labelled cases of `labels_from_reviews` alone."""
    return labels_from_reviews(root).cases


__all__ = [
    "REVIEWABLE",
    "Calibration",
    "Outcome",
    "ReviewLabels",
    "SkippedReview",
    "calibrate",
    "certificate",
    "family_agreement",
    "labelled_from_reviews",
    "labels_from_reviews",
    "reviewable",
    "unreviewable",
]
