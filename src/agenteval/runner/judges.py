"""A run's judges: checked up front (`check_judges`), built from the run's services
(`judge_service`), and named in the run header by their canonical model names (`canonical`)."""

from __future__ import annotations

from collections.abc import Sequence

from agenteval.criteria import ConfiguredMetric
from agenteval.criteria.judge import JudgeService
from agenteval.criteria.judge.engine.progress import tagging
from agenteval.errors import DataError
from agenteval.models import ModelUnavailable, parse_model_name
from agenteval.runner.job import JobOptions
from agenteval.runner.services import Services
from agenteval.schema import LlmAsAJudgeCriterion
from agenteval.schema.progress import Listener
from agenteval.simulation import parse_simulator_config
from agenteval.store import JudgeCacheDB


def judge_service(services: Services, listener: Listener | None = None) -> JudgeService:
    """The run's judge: its models from the run's pool, verdicts cached where services say;
    `listener` hears each answered question with the case run it was asked for (see
    `engine.progress`)."""
    return JudgeService(services.models.get, services.judge_cache,
                        listener=None if listener is None else tagging(listener))


def check_judges(metrics: Sequence[ConfiguredMetric], job: JobOptions, services: Services) -> None:
    """Resolves every judge model (and the user simulator's) up front, so a bad name or a
    missing key fails before any work, naming where the name came from (the flag, or the config
    file and key). `run` and `rescore` do it first; a front end may do it even before loading
    the eval sets. A judge named on the command line is checked even when no criterion is
    judged, as the simulator's model is checked whether or not a case needs it: a typo in an
    option is refused, never ignored until the day a judged criterion is added."""
    for name, flag in ((job.judge_model, "--judge_model"), (job.escalate_judge_model,
                                                            "--escalate_judge_model")):
        if name:
            try:
                services.models.get(name)
            except ModelUnavailable as e:
                raise DataError(None, flag, str(e)) from None
    for m in metrics:
        if not isinstance(m.criterion, LlmAsAJudgeCriterion):
            continue
        options = m.criterion.judge_model_options
        for key, name in (("judge_model", options.judge_model), ("escalate_to", options.escalate_to)):
            if name is None:  # an empty name is no model: refused here, naming its key
                continue
            try:
                services.models.get(name)
            except ModelUnavailable as e:  # (a flag's name was checked above)
                raise DataError(job.config_source, f"criteria.{m.name}.judge_model_options.{key}",
                                str(e)) from None
    judged = any(isinstance(m.criterion, LlmAsAJudgeCriterion) for m in metrics)
    if judged and isinstance(services.judge_cache, JudgeCacheDB):
        services.judge_cache.check()  # a corrupt cache fails here, not in every judged case
    if job.config.user_simulator_config is not None:  # checked whether or not a case needs it
        sim_config = parse_simulator_config(job.config.user_simulator_config, job.config_source)
        try:
            services.models.get(sim_config.model)
        except ModelUnavailable as e:
            raise DataError(job.config_source, "user_simulator_config.model", str(e)) from None


def canonical(name: str) -> str:
    """The canonical spelling of a model name; a name the pool was handed a model under (not a
    scheme) stays as it is."""
    try:
        return parse_model_name(name).name
    except ModelUnavailable:
        return name


__all__ = ["canonical", "check_judges", "judge_service"]
