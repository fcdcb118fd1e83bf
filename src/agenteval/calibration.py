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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from agenteval.criteria import default_registry
from agenteval.criteria.judge.base import JudgeCriterion
from agenteval.criteria.judge.certificates import (
    Certificate,
    judge_identity,
    kappa,
    prompt_fingerprint,
)
from agenteval.criteria.judge.engine.service import JudgeService
from agenteval.criteria.judge.labelled import METRIC, LabelledCase, criterion_config
from agenteval.criteria.judge.prompting import prompts
from agenteval.errors import DataError
from agenteval.runner import CaseRun, score_case
from agenteval.schema import EvalCase, EvalStatus
from agenteval.store import RunStore
from agenteval.store.reviews import Review, ReviewStore


@dataclass
class Outcome:
    """One labelled case judged: right or wrong (None: the judge gave no verdict) and how sure."""

    case: LabelledCase
    correct: bool | None
    confidence: float | None
    source: str | None = None  # the verdicts' confidence source ("logprobs" or "samples")

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
        outcome = Outcome(case, None if predicted is None else predicted == case.positive,
                          min(confidences) if confidences else None, sources[0] if sources else None)
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
                source_sha256: str, created: str) -> Certificate:
    """`c` as a certificate (see `criteria.judge.certificates`): agreement, κ and coverage of
    the verdicts committed at the criterion's shipped confidence threshold (for the confidence
    source its verdicts had), bound to the judge model, the prompt and, when every case had the
    same rubric, that rubric (else none: a general certificate over many rubrics)."""
    first = c.outcomes[0].case
    config = criterion_config(first, num_samples, judge_model)
    built = default_registry().configure(c.metric, {**config, "judge_model_options": {
        **config["judge_model_options"], "min_confidence": None}})
    sources = [o.source for o in c.outcomes if o.source]
    criterion = built.build()
    assert isinstance(criterion, JudgeCriterion), f"{c.metric} is not a judged criterion"
    threshold = criterion.min_confidence(max(set(sources), key=sources.count) if sources else None)
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
        created=created, num_samples=num_samples, rubrics=rubrics)


# Criteria whose review labels a case run: one question per turn, so agreeing or disagreeing
# with the criterion's verdict on a one-turn case run is a label of that question (positive,
# negative). Rubric and hallucination verdicts ask several questions a turn; a review of the
# criterion names none of them.
_REVIEW_LABELS = {"final_response_match": ("valid", "invalid"), "safety": ("safe", "unsafe")}
REVIEWABLE = {METRIC[kind]: kind for kind in _REVIEW_LABELS}


def labelled_from_reviews(root: str | Path) -> list[LabelledCase]:
    """Labelled cases from people's reviews in the run history at `root` (`store.reviews`, made
    in `agenteval web`): a review of a `final_response_match_v2` or `safety_v1` verdict on a
    one-turn case run labels that turn the judge's way when the reviewer agreed, the other way
    when not. Reviews of other criteria, of whole cases, of several-turn runs and of runs no
    longer stored are left out. Case ids are `<run id>/<eval id>/<run index>`."""
    by_run: dict[str, list[Review]] = {}
    for review in ReviewStore(root).reviews():
        if review.target in REVIEWABLE:
            by_run.setdefault(review.run_id, []).append(review)
    store = RunStore(root)
    out: list[LabelledCase] = []
    for run_id, reviews in by_run.items():
        try:
            document = store.get(run_id)
        except DataError:
            continue
        runs = {(r.eval_id, r.run_index): r for r in document.eval_case_results}
        for review in reviews:
            run = runs.get((review.eval_id, review.run_index))
            if run is None or len(run.eval_metric_result_per_invocation) != 1:
                continue
            metric = next((m for m in run.overall_eval_metric_results if m.metric_name == review.target),
                          None)
            if metric is None or metric.eval_status not in (EvalStatus.PASSED, EvalStatus.FAILED):
                continue
            kind = REVIEWABLE[review.target]
            per = run.eval_metric_result_per_invocation[0]
            if kind == "final_response_match" and per.expected_invocation is None:
                continue
            judged_positive = metric.eval_status == EvalStatus.PASSED
            positive, negative = _REVIEW_LABELS[kind]
            label = positive if judged_positive == (review.agreement == "agree") else negative
            case_id = f"{run_id}/{review.eval_id}/{review.run_index}"
            conversation = [per.expected_invocation or per.actual_invocation]
            out.append(LabelledCase(case_id, kind, label, review.target,
                                    EvalCase(eval_id=case_id, conversation=conversation),
                                    [per.actual_invocation]))
    return out


__all__ = ["REVIEWABLE", "Calibration", "Outcome", "calibrate", "certificate", "labelled_from_reviews"]
