"""What a run uses but does not own: its models (with their limits) and the judge cache.

One `Services` is handed to each run; nothing in the runner looks anything up process-wide, so
two runs in one process (two evals started from a web page, say) keep their limits apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agenteval.criteria.judge.engine.service import JudgeCache
from agenteval.models.base import LLM
from agenteval.models.pool import ModelPool
from agenteval.models.resolve import DEFAULT_HTTP_CONCURRENCY
from agenteval.runner.job import JobOptions
from agenteval.schema import Concurrency, EndpointOptions
from agenteval.store import JudgeCacheDB, judge_cache_path
from agenteval.store.journal import Journal


@dataclass(eq=False, repr=False)  # compared by identity: two fewer methods compiled at import
class Services:
    """The models of a run (`ModelPool`) and where judge verdicts are cached (None: nowhere)."""

    models: ModelPool
    judge_cache: JudgeCache | None = None
    journal: Journal | None = None  # where each finished case run is committed at once
    provided: tuple[str, ...] = ()  # names of the models handed in as objects (`create(models=...)`)

    @classmethod
    def create(cls, env: Mapping[str, str], concurrency: Concurrency | None = None, *,
               store_root: str | Path | None = None, no_cache: bool = False,
               models: Mapping[str, LLM] | None = None,
               endpoints: Mapping[str, EndpointOptions] | None = None,
               journal: bool = False) -> Services:
        """Services for one run: models resolved with `env` (API keys), limited per endpoint as
        `concurrency.model_calls` says (HTTP endpoints not listed get room for every case in
        flight, at least 4), with `endpoints` settings (timeouts, attempts), plus any
        ready-made `models` under their own names; verdicts cached under `store_root` unless
        `no_cache`; with `journal`, each finished case run is committed to the journal under
        `store_root` as soon as it is known."""
        concurrency = concurrency or Concurrency()
        pool = ModelPool(env, concurrency.model_calls,
                         default_http=max(DEFAULT_HTTP_CONCURRENCY, concurrency.cases),
                         provided=models, endpoints=endpoints)
        cache = None if no_cache or store_root is None else JudgeCacheDB(judge_cache_path(store_root))
        return cls(pool, cache, Journal(store_root) if journal and store_root is not None else None,
                   tuple(models or ()))

    @classmethod
    def for_job(cls, job: JobOptions, env: Mapping[str, str], *, store_root: str | Path | None = None,
                no_cache: bool = False, models: Mapping[str, LLM] | None = None,
                journal: bool = False) -> Services:
        """Services as the job asks for them (its concurrency and endpoint settings, the
        config's and the command line's)."""
        concurrency = job.concurrency.model_copy(update={"model_calls": job.model_limits()})
        return cls.create(env, concurrency, store_root=store_root, no_cache=no_cache,
                          models=models, endpoints=job.endpoint_settings(job.metrics()),
                          journal=journal)


__all__ = ["Services"]
