"""Scoring collected conversations and recording them in the run history.

A done conversation (`collector.assembler`) is read into turns (`tracing.ingest.turns`), then:

1. **Sampling.** Kept when a hash of its key falls below `sample_rate` (deterministic: the same
   session is always kept or always dropped, whichever receiver sees it).
2. **Its eval case.** The first eval set (in the order given) one of whose cases it matches, by
   `tracing.ingest.TraceConversations.match` (the session id is an eval id, or the first user
   message is that of exactly one case), scores it with that set's criteria (its config file,
   or `test_config.json` beside it). A match with another number of turns is scored as
   unmatched (the reason is in the outcome).
3. **Otherwise, reference-free criteria** (`free_config`): the conversation is recorded as a case
   with a `conversation_scenario` (its first user message; no expected turns), so a criterion
   that needs expected turns could not be scored: `free_config` may hold none.
4. **The judge budget.** A judged criterion costs one judge call per turn (an estimate: one
   verdict per turn). With `max_judge_calls_per_minute` set, a conversation whose judged
   criteria do not fit in the last minute's allowance is scored with its other criteria only
   (and skipped when it has none).

Each scored conversation is one run in the history under `root` (`store.record_run`): listed by
`agenteval runs`, shown by `agenteval web`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agenteval.collector.assembler import Conversation
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.errors import DataError
from agenteval.runner import RunPlan, ScoreJob, Selection, Services, prepare, rescore
from agenteval.schema import EvalCase, EvalConfig, EvalSet, LlmAsAJudgeCriterion
from agenteval.schema.evalset import ConversationScenario
from agenteval.store import record_run
from agenteval.tracing.ingest import TraceConversations, turns
from agenteval.verdicts import all_passed

COLLECTED_SET = "collected"  # the eval set id of conversations that match no eval case
_PLAN = ("Collected live by agenteval collect from an agent's traces: no expected turns; scored "
         "with reference-free criteria.")


def sampled(key: str, rate: float) -> bool:
    """Whether the conversation `key` is in a `rate` sample (0..1), decided by its hash."""
    if rate >= 1.0:
        return True
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64 < rate


class JudgeBudget:
    """At most `per_minute` judge calls in any minute, as a token bucket holding one minute's
    allowance; `take(n)` takes n calls when they fit (never waits), else takes none."""

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute <= 0:
            raise ValueError(f"max_judge_calls_per_minute must be positive, got {per_minute}")
        self.per_minute = per_minute
        self.level = per_minute
        self.clock = clock
        self._at = clock()

    def take(self, n: int) -> bool:
        """Takes `n` calls' allowance if it is there."""
        now = self.clock()
        self.level = min(self.per_minute, self.level + (now - self._at) * self.per_minute / 60.0)
        self._at = now
        if n > self.level:
            return False
        self.level -= n
        return True


@dataclass(frozen=True)
class Target:
    """An eval set the collector matches conversations against, with its criteria."""

    path: Path
    eval_set: EvalSet
    config: EvalConfig
    config_source: str | None


@dataclass(frozen=True)
class Outcome:
    """What became of one conversation: `scored` (recorded as the run `run_id`, whose document
    `result_id` is what `agenteval runs` lists), `sampled_out` or `skipped` (`reason` says why)."""

    key: str
    status: str
    eval_set_id: str | None = None
    eval_id: str | None = None
    passed: bool | None = None
    run_id: str | None = None
    result_id: str | None = None
    reason: str | None = None
    turns: int = 0
    judged: bool = False


class ConversationScorer:
    """Scores done conversations (see the module docstring) and records them under `root`."""

    def __init__(self, root: str | Path, services: Services, targets: Sequence[Target],
                 free_config: EvalConfig, *, free_source: str | None = None,
                 judge_model: str | None = None, sample_rate: float = 1.0,
                 budget: JudgeBudget | None = None, argv: list[str] | None = None) -> None:
        if not 0.0 <= sample_rate <= 1.0:
            raise DataError(None, "--sample_rate", f"must be between 0 and 1, got {sample_rate}")
        self.root, self.services, self.sample_rate, self.budget = Path(root), services, sample_rate, budget
        self.argv = argv
        self._jobs = [(t, self._job(t.config, t.config_source, judge_model)) for t in targets]
        self._free = self._job(free_config, free_source, judge_model)
        needs = [m.name for m in self._free.metrics() if m.spec.requires_expected]
        if needs:
            raise DataError(free_source, "criteria", f"{', '.join(needs)} need expected turns, which a "
                            "conversation that matches no eval case does not have; use reference-free "
                            "criteria (e.g. safety_v1, hallucinations_v1, trajectory_judge_v1)")
        # metrics resolved and judges checked once, before any traffic
        self._plans = [prepare(job, services) for _, job in self._jobs]
        self._free_plan = prepare(self._free, services)

    def free_metrics(self) -> list[ConfiguredMetric]:
        """The reference-free criteria of conversations that match no eval case."""
        return list(self._free_plan.metrics)

    def _job(self, config: EvalConfig, source: str | None, judge_model: str | None) -> ScoreJob:
        return ScoreJob(config=config, config_source=source, judge_model=judge_model, command="score",
                        argv=self.argv)

    async def score(self, conversation: Conversation) -> Outcome:
        """Scores and records one conversation; a conversation that cannot be read is `skipped`
        with the reason (the receiver goes on)."""
        key = conversation.key
        if not sampled(key, self.sample_rate):
            return Outcome(key, "sampled_out")
        source = f"collected conversation {key!r}"
        try:
            conv = turns(conversation.spans, source)
        except DataError as e:
            return Outcome(key, "skipped", reason=str(e))
        if not conv:
            return Outcome(key, "skipped", reason="no turns")
        if not all(t.has_content for t in conv):
            return Outcome(key, "skipped", turns=len(conv), reason=(
                "the spans carry no messages: the exporter did not capture content (for Google ADK set "
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY)"))
        traces = TraceConversations(source, {key: conv})
        note = None
        for (target, job), plan in zip(self._jobs, self._plans, strict=True):
            try:
                actual, _ = traces.match(target.eval_set)
            except DataError:
                continue
            case = next(c for c in target.eval_set.eval_cases if c.eval_id == actual.eval_cases[0].eval_id)
            if case.conversation is not None and len(case.conversation) != len(conv):
                note = (f"matches case {case.eval_id!r} of {target.eval_set.eval_set_id!r}, which has "
                        f"{len(case.conversation)} turns, not {len(conv)}: scored reference-free")
                break
            expected = target.eval_set.model_copy(update={"eval_cases": [case]})
            # the conversation under its case's id, so the pairing finds it
            return await self._run(key, job, plan, Selection(target.path, expected), len(conv),
                                   TraceConversations(source, {case.eval_id: conv}))
        free = EvalSet(eval_set_id=COLLECTED_SET, eval_cases=[EvalCase(
            eval_id=key, conversation_scenario=ConversationScenario(
                starting_prompt=conv[0].user_text, conversation_plan=_PLAN))])
        outcome = await self._run(key, self._free, self._free_plan, Selection(None, free), len(conv), traces)
        return replace(outcome, reason=note) if note and outcome.reason is None else outcome

    async def _run(self, key: str, job: ScoreJob, plan: RunPlan, expected: Selection, n: int,
                   actual: TraceConversations) -> Outcome:
        judged = [m for m in plan.metrics if isinstance(m.criterion, LlmAsAJudgeCriterion)]
        reason = None
        if judged and self.budget is not None and not self.budget.take(len(judged) * n):
            plan = replace(plan, metrics=tuple(m for m in plan.metrics if m not in judged))
            reason = f"judge budget spent: {', '.join(m.name for m in judged)} not scored"
            if not plan.metrics:
                return Outcome(key, "skipped", expected.eval_set.eval_set_id, turns=n, reason=reason)
            judged = []
        scored = replace(job, expected=expected, actual=actual, actual_source=f"collect:{key}")
        run = await rescore(scored, self.services, None, plan)
        # not `store.record`: its tidying reads the whole history, once per conversation here
        record_run(self.root, run.results)
        case = expected.eval_set.eval_cases[0]
        # a criterion not evaluated says why where the outcome is told (as the result holds it)
        errors = [f"{e.metric_name} not evaluated: {e.message}" for r in run.results
                  for c in r.eval_case_results for e in c.metric_errors if e.invocation_index is None]
        reason = "; ".join(x for x in (reason, *errors) if x) or None
        return Outcome(key, "scored", expected.eval_set.eval_set_id, case.eval_id, all_passed(run.results),
                       run.run_id, run.results[0].eval_set_result_id, reason, n, bool(judged))


__all__ = ["COLLECTED_SET", "ConversationScorer", "JudgeBudget", "Outcome", "Target", "sampled"]
