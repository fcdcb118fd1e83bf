"""Eval configuration (`test_config.json` / `--config_file_path`) as written on disk.

A user writes these files by hand, so the models here are strict about types where ADK coerces:
a quoted `"0.8"` or a `true` where a number belongs, or `"no"` where a boolean belongs, is an
error naming its key instead of a silently different value. Integers are numbers (`1` for 1.0).
"""


import json
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError, core_schema

from agenteval.schema.base import WireModel
from agenteval.schema.judge_certificates import JudgeCertificatesConfig

DEFAULT_CRITERIA: dict[str, float | dict[str, Any]] = {
    "tool_trajectory_avg_score": 1.0,
    "response_match_score": 0.8,
}


class _ConfigModel(WireModel):
    """A config model: unknown keys and wrong types are errors."""

    model_config = ConfigDict(strict=True)


def _threshold_or_object(value: Any) -> Any:
    # A bare threshold or a criterion object, nothing that merely converts to one.
    if isinstance(value, dict) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    raise PydanticCustomError("criterion_type", "expected a threshold (a number) or a criterion "
                              "object, got {got}", {"got": _describe(value)})


def _describe(value: Any) -> str:
    """A JSON value as a user wrote it: `the string '0.8'`, `true`, `null`, `a list`."""
    if isinstance(value, str):
        return f"the string {value!r}"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return {"list": "a list", "dict": "an object"}.get(type(value).__name__, type(value).__name__)


CriterionValue = Annotated[float | dict[str, Any], BeforeValidator(_threshold_or_object)]
"""A `criteria` entry; the object form is validated later by its metric's criterion model."""


class _DictValidatedAs:
    """Validates a dict against `model` (errors located by its keys) and keeps the dict, with
    the keys that were written in their snake_case names: for a section whose consumer takes
    a plain dict but that should be refused when the file is loaded."""

    def __init__(self, model: type[WireModel]) -> None:
        self.model = model

    def __get_pydantic_core_schema__(self, source: Any,
                                     handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        def to_dict(value: WireModel) -> dict[str, Any]:
            return value.model_dump(exclude_unset=True)

        return core_schema.no_info_after_validator_function(
            to_dict, handler.generate_schema(self.model),
            serialization=core_schema.plain_serializer_function_ser_schema(lambda value: value))


class CodeConfig(_ConfigModel):
    """Where a custom metric's function lives: a dotted `module.function` path."""

    model_config = ConfigDict(defer_build=True)

    name: str
    args: list[Any] | None = None


class Interval(_ConfigModel):
    """The values a metric's scores take, e.g. [0, 1] (ADK's Interval; an open end excludes
    the bound itself)."""

    model_config = ConfigDict(defer_build=True)

    min_value: float = 0.0
    max_value: float = 1.0
    open_at_min: bool = False
    open_at_max: bool = False

    @model_validator(mode="after")
    def _ordered(self) -> "Interval":
        if not self.min_value <= self.max_value:  # also refuses NaN
            raise PydanticCustomError("interval", "min_value {low} is not at most max_value "
                                      "{high}", {"low": self.min_value, "high": self.max_value})
        return self

    def contains(self, value: float) -> bool:
        """Whether `value` lies in the interval (NaN never does)."""
        above = value > self.min_value if self.open_at_min else value >= self.min_value
        below = value < self.max_value if self.open_at_max else value <= self.max_value
        return above and below

    def __str__(self) -> str:
        return (f"{'(' if self.open_at_min else '['}{self.min_value}, "
                f"{self.max_value}{')' if self.open_at_max else ']'}")


class MetricValueInfo(_ConfigModel):
    """What a metric's values are: an interval."""

    model_config = ConfigDict(defer_build=True)

    interval: Interval | None = None


class MetricInfo(_ConfigModel):
    """ADK's MetricInfo for a custom metric; every key is optional here (the name is the
    metric's key in `custom_metrics`, the interval defaults to [0, 1])."""

    model_config = ConfigDict(defer_build=True)

    metric_name: str | None = None
    description: str | None = None
    metric_value_info: MetricValueInfo | None = None
    requires_threshold: bool | None = None

    def interval(self) -> Interval:
        """The declared interval, [0, 1] if none."""
        info = self.metric_value_info
        return info.interval if info is not None and info.interval is not None else Interval()


class CustomMetricConfig(_ConfigModel):
    """A custom metric declared in the config; `criteria` must name it too (a config file
    declaring one that `criteria` does not name is refused: it would never run)."""

    model_config = ConfigDict(defer_build=True)

    code_config: CodeConfig
    metric_info: MetricInfo | None = None
    description: str = ""


class SimulatorModelConfiguration(_ConfigModel):
    """`user_simulator_config.model_configuration`: ADK's generation config for the simulator's
    model, as far as agenteval's models take it. `temperature` and `max_output_tokens` (the
    longest reply, default 200 tokens) are used; `thinking_config` (ADK's default sets it) is
    accepted and not used: the simulator asks for the user's message only. Any other key is
    refused, where it used to be accepted and ignored."""

    model_config = ConfigDict(defer_build=True)

    temperature: float | None = Field(default=None, ge=0.0)
    max_output_tokens: int | None = Field(default=None, ge=1)
    thinking_config: dict[str, Any] | None = None


SIMULATOR_MAX_TOKENS = 200  # the longest simulated user message, in tokens, unless configured


class UserSimulatorConfig(_ConfigModel):
    """`user_simulator_config` as written: the LLM-backed simulator's settings (see
    `agenteval.simulation.config`, which reads the dict this leaves); a missing or null `type`
    means `llm_backed`, as in ADK. The temperature is `temperature` or ADK's
    `model_configuration.temperature` (not both)."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["llm_backed"] | None = None
    model: str = "local"
    model_configuration: SimulatorModelConfiguration | None = None
    max_allowed_invocations: int = Field(default=20, ge=-1)
    custom_instructions: str | None = None
    include_function_calls: bool = False
    stop_signal: str = "</finished>"
    temperature: float = 0.7

    @model_validator(mode="after")
    def _one_temperature(self) -> "UserSimulatorConfig":
        given = self.model_configuration
        if given is not None and given.temperature is not None and "temperature" in self.model_fields_set:
            raise PydanticCustomError("two_temperatures", "set the simulator's temperature once: "
                                      "`temperature` or `model_configuration.temperature`")
        return self

    def sampling(self) -> tuple[float, int]:
        """The temperature and the longest reply (tokens) the simulator asks its model for."""
        given = self.model_configuration or SimulatorModelConfiguration()
        temperature = given.temperature if given.temperature is not None else self.temperature
        return temperature, given.max_output_tokens or SIMULATOR_MAX_TOKENS

    @field_validator("max_allowed_invocations")
    @classmethod
    def _some_turn(cls, value: int) -> int:
        # 0 turns: no conversation at all, every scenario's case scored on nothing.
        if value == 0:
            raise PydanticCustomError("no_turn", "must be at least 1 (the starting prompt is a turn), "
                                      "or -1 for no limit")
        return value

    @field_validator("stop_signal")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        # A reply holding the signal ends the conversation: a blank one is in nearly every reply.
        if not value.strip():
            raise PydanticCustomError("blank_stop_signal", "must not be blank: every simulated turn "
                                      "would end the conversation")
        return value

    @field_validator("custom_instructions")
    @classmethod
    def _fillable(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                check_simulator_template(value)
            except ValueError as e:  # as a custom error: its message without "Value error, "
                raise PydanticCustomError("simulator_template", "{message}", {"message": str(e)}) from None
        return value


# What a simulator template (`custom_instructions`) may name, `{{ name }}` (ADK's) or `{name}`:
# the simulator fills these and leaves any other `{...}` as written.
SIMULATOR_PLACEHOLDERS = frozenset({"conversation_plan", "conversation_history", "stop_signal",
                                    "persona", "plan", "history"})
# Those a template must name, each by either of its names (ADK refuses a template without
# them): without the history the simulated user never reads the agent's answers; without the
# stop signal it cannot end the conversation before the turn limit.
_REQUIRED_PLACEHOLDERS = (("conversation_plan", "plan"), ("conversation_history", "history"),
                          ("stop_signal",))
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}|\{(\w+)\}")
_TEMPLATE_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)


def check_simulator_template(template: str) -> None:
    """Refuses (ValueError) a `custom_instructions` template the simulator could not fill as
    written: one that lacks a required placeholder, or holds a Jinja expression or tag other than
    `{{ name }}` (`{{ persona.description }}`, `{% for %}`), which would reach the model as is."""
    for tag in _TEMPLATE_TAG.findall(template):
        m = _PLACEHOLDER.fullmatch(tag)
        if m is None or (m.group(1) or m.group(2)) not in SIMULATOR_PLACEHOLDERS:
            raise ValueError(f"{tag} cannot be filled in: agenteval fills {{{{ name }}}} for the names "
                             f"{', '.join(sorted(SIMULATOR_PLACEHOLDERS))}, no other Jinja")
    named = {m.group(1) or m.group(2) for m in _PLACEHOLDER.finditer(template)}
    for names in _REQUIRED_PLACEHOLDERS:
        if not named & set(names):
            raise ValueError(f"no {{{{ {names[0]} }}}}: the template must hold {{{{ conversation_plan }}}}, "
                             "{{ conversation_history }} and {{ stop_signal }}")


def names_persona(template: str) -> bool:
    """Whether a `custom_instructions` template shows the simulated user its persona."""
    return any((m.group(1) or m.group(2)) == "persona" for m in _PLACEHOLDER.finditer(template))


def persona_unseen(case: str) -> str:
    """Why a `custom_instructions` template without `{{ persona }}` cannot simulate `case` (a
    scenario naming a persona): the persona would be dropped unseen (ADK refuses the pair too)."""
    return (f"no {{{{ persona }}}}: {case} names a user_persona, which the simulated user would "
            "never see; add {{ persona }} to the template")


class LiveModelConfig(_ConfigModel):
    """`live_model_config` as written (ADK's, for Live API models, which agenteval does not
    run): validated as ADK validates it, then kept as a dict and otherwise ignored."""

    timeout_seconds: int = Field(default=300, gt=0)


class EndpointConfig(_ConfigModel):
    """`endpoints.<model name>` in an eval config (agenteval extension): how to talk to that
    model endpoint, for the agent, the judges and the user simulator alike. Unset fields keep
    their defaults (`agenteval.schema.endpoint.EndpointOptions`); `max_concurrency` is calls in
    flight (the command line's `--model_parallelism` wins over it); `deterministic` (the
    embedded model, `local`, only): byte-identical reruns on this machine, one call at a time
    (see `agenteval.models.local`)."""

    model_config = ConfigDict(defer_build=True)

    timeout: float | None = Field(default=None, gt=0)
    attempts: int | None = Field(default=None, ge=1)
    give_up_after: int | None = Field(default=None, ge=1)
    max_concurrency: int | None = Field(default=None, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    deterministic: bool | None = None


MockMode = Literal["expected", "live"]
"""How a tool call is answered under `mock_tools`: from the eval set, or by the tool."""


class EvalConfig(_ConfigModel):
    """The criteria to score with and their thresholds.

    `criteria` maps a metric name to a threshold or to a criterion object; each value is
    validated against its metric's criterion model by the registry. Extensions:
    `not_evaluated` — by default a criterion that could not be evaluated fails its case;
    `repeat_gating` — with repeated runs, a criterion passes when the mean of its per-run
    scores meets the threshold (`mean`), when every run passes (`all_runs`), or when any run
    passes (`any_run`); `case_timeout` — seconds after which a case run is stopped and recorded
    with a timeout error; `isolation` — where the agent's turns run: in the evaluating process
    (`none`), or in worker processes killed when a case run passes its timeout (`process`);
    `inner_tool_calls` — whether the tool calls made inside a Google ADK `AgentTool`'s agent run
    are added to the invocation's recorded events, authored by the inner agent (`include`), or
    left out as `adk eval` records them (`exclude`); `mock_tools` — tool calls answered from
    the eval set's expected calls instead of running the tool: `expected` or `live` for every
    tool, or a mode per tool name (`*`: the others; unnamed tools run live), see
    `agenteval.agents.mock_tools`; `mock_tools_strict` — an `expected`-mode call matching no
    expected call fails the case instead of running the tool.
    """

    criteria: dict[str, CriterionValue] = Field(default_factory=lambda: dict(DEFAULT_CRITERIA))
    custom_metrics: dict[str, CustomMetricConfig] | None = None
    user_simulator_config: Annotated[dict[str, Any], _DictValidatedAs(UserSimulatorConfig)] | None = None
    live_model_config: Annotated[dict[str, Any], _DictValidatedAs(LiveModelConfig)] | None = None
    not_evaluated: Literal["fail", "ignore"] = "fail"
    repeat_gating: Literal["mean", "all_runs", "any_run"] = "mean"
    endpoints: dict[str, EndpointConfig] | None = None
    case_timeout: float | None = Field(default=None, gt=0)  # seconds per case run
    # Where the agent's turns run: in this process ("none"), or in worker processes that are
    # killed when a case run passes case_timeout ("process"; see runner.executors.process).
    isolation: Literal["none", "process"] = "none"
    # Calls inside an ADK AgentTool's agent run: in the recorded events ("include"), or left
    # out as `adk eval` records them ("exclude"); the trace has them either way.
    inner_tool_calls: Literal["include", "exclude"] = "include"
    # Tool responses from the eval set (agenteval.agents.mock_tools): a mode for every tool, or
    # per tool name ("*": the others); None: every tool runs live.
    mock_tools: MockMode | dict[str, MockMode] | None = None
    mock_tools_strict: bool = False
    # When judged criteria without a good enough calibration certificate stop gating
    # (schema.judge_certificates); None: they gate as before, reports still show certificates.
    judge_certificates: JudgeCertificatesConfig | None = None


class SessionFile(WireModel):
    """An initial-session file (`initial_session_file`, or a legacy session list's
    `initial_session`): app, user and starting state.

    The other keys of a session ADK saved (today's and older ones) are accepted and ignored, as
    ADK ignores them; any other key is refused: a mistyped `stat` silently started every case
    with an empty state.
    """

    model_config = ConfigDict(defer_build=True)

    app_name: str = ""
    user_id: str = ""
    state: dict[str, Any] = Field(default_factory=dict)
    # ADK's session keys, not used: a saved session's history is not replayed.
    id: Any = None
    events: Any = None
    last_update_time: Any = None
    context: Any = None
    past_events: Any = None
    pending_events: Any = None
    current_agent_name: Any = None
    artifacts: Any = None
    event_logs: Any = None
