"""How agenteval talks to one model endpoint: timeouts, attempts, and when to give up on it."""


from pydantic import Field

from agenteval.schema.base import WireModel

DEFAULT_TIMEOUT = 60.0
DEFAULT_ATTEMPTS = 3
DEFAULT_GIVE_UP_AFTER = 3


class EndpointOptions(WireModel):
    """Settings of one model endpoint (an HTTP backend; the embedded model has no network).

    `timeout`: seconds to wait for one reply; `attempts`: tries of one call, the first included,
    for transient failures (timeouts, 429, 5xx, dropped connections; `Retry-After` honoured);
    `give_up_after`: after this many calls in a row failed for good, the run stops asking the
    endpoint and every later call fails at once with the last error, so a dead or hanging
    endpoint costs at most a few timeouts, not one per question (None: never give up);
    `requests_per_minute` / `tokens_per_minute`: a rate the run keeps to across everything that
    calls the endpoint (tokens as the replies report them: prompt and completion);
    `deterministic` (the embedded model only): byte-identical reruns on this machine, i.e. one
    call at a time in one slot, no prompt-cache reuse (see `agenteval.models.local`)."""

    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    attempts: int = Field(default=DEFAULT_ATTEMPTS, ge=1)
    give_up_after: int | None = Field(default=DEFAULT_GIVE_UP_AFTER, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    deterministic: bool = False
