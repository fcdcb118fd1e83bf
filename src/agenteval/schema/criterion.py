"""Criterion configurations: what each metric reads from `criteria` in an eval config.

Every model here forbids unknown keys, so a misspelled option is an error rather than a
silently ignored default (ADK ignores it), and is strict about types: a user writes these by
hand, and a quoted `"0.8"` or a `true` threshold, or `"ignore_args": "no"` (which lax parsing
reads as False), is a mistake to report, not to guess at (ADK coerces them). An integer is
still a number (`"threshold": 1`).
"""


from enum import Enum
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agenteval.schema.base import WireModel
from agenteval.schema.rubric import Rubric, unique_rubric_ids

DEFAULT_JUDGE_MODEL = "local"


class BaseCriterion(WireModel):
    """The fields every criterion has."""

    model_config = ConfigDict(strict=True)

    threshold: float
    include_intermediate_responses_in_final: bool = False


class MatchType(str, Enum):
    """How expected and actual tool-call lists are compared.

    EXACT, IN_ORDER, ANY_ORDER are ADK's. agenteval adds, as LangChain agentevals names them:
    SUBSET, the actual calls are contained in the expected ones (every call made was expected,
    with multiplicity; expected calls may be left out; order-free); SUPERSET, the actual calls
    contain the expected ones (every expected call was made, extras allowed; order-free: the
    same test as ANY_ORDER).
    """

    EXACT = "EXACT"
    IN_ORDER = "IN_ORDER"
    ANY_ORDER = "ANY_ORDER"
    SUBSET = "SUBSET"
    SUPERSET = "SUPERSET"


_MATCH_TYPE_BY_INDEX = {0: MatchType.EXACT, 1: MatchType.IN_ORDER, 2: MatchType.ANY_ORDER}


class ToolTrajectoryCriterion(BaseCriterion):
    """`tool_trajectory_avg_score` (and the precision/recall measures): match type and args."""

    # Not strict: the validator below turns ADK's spellings into names, which strict mode would
    # refuse (it takes only MatchType members from Python).
    match_type: MatchType = Field(default=MatchType.EXACT, strict=False)
    ignore_args: bool = False
    # agenteval extension: per tool and argument matchers (agenteval.criteria.args_match)
    args_match: dict[str, dict[str, Any]] | None = None
    # agenteval extensions (agenteval.criteria.trajectory_agents): calls to these tools are
    # dropped from both sides before matching; and whether each agent's calls are matched on
    # their own (None: when the expected case's events name two agents or more).
    ignore_tools: list[str] = Field(default_factory=list)
    per_agent: bool | None = None

    @field_validator("match_type", mode="before")
    @classmethod
    def _normalise_match_type(cls, value: Any) -> Any:
        # ADK accepts "in-order", "In Order" and the enum's integer values 0/1/2.
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return _MATCH_TYPE_BY_INDEX.get(value, value)
        if isinstance(value, str):
            return value.strip().upper().replace("-", "_").replace(" ", "_")
        return value


class SingleToolUseCriterion(BaseCriterion):
    """`tool_trajectory_single_tool_use`: the tool whose use is checked."""

    model_config = ConfigDict(defer_build=True)

    tool_name: str


# Which judge verdicts get a written rationale (`judge_model_options.rationales`).
Rationales = Literal["negative", "always", "never"]


class JudgeModelConfig(WireModel):
    """ADK's `judge_model_options.judge_model_config` (a generation config), as far as
    agenteval's judge takes it: `thinking_config` is accepted and not used (the judge writes
    its label, and a rationale where asked). Any other key is refused, where it used to be
    accepted and ignored: the judge samples at its own temperature (greedy for one sample, 0.7
    to vote over `num_samples`; certificates are measured so) and sets its reply's schema and
    length."""

    model_config = ConfigDict(defer_build=True)

    thinking_config: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _used_keys(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for key in value:
                if key not in ("thinking_config", "thinkingConfig"):
                    raise PydanticCustomError(
                        "judge_config_key", "{key}: not used by agenteval's judge, which samples at its "
                        "own temperature (greedy for one sample, 0.7 to vote over num_samples) and sets "
                        "its reply's schema and length; only thinking_config is accepted",
                        {"key": str(key)})
        return value


class JudgeModelOptions(WireModel):
    """Which judge model to ask, how many samples to vote over, and how many at once.

    agenteval extensions: `min_confidence` — a verdict whose confidence (the share of samples
    that agree with it) is below this is *uncertain*, never a pass: the item is asked again of
    `escalate_to` when one is set, else the criterion is not evaluated, with the reason.
    `on_injection` — "fail": a question whose quoted material holds text addressed to the judge
    (cut from the answer, or found in the user's turns, tool results or reference) scores 0;
    "judge" (the default): the verdict on the screened, quoted material stands.
    `rationales` — which verdicts of a one-pass judge get a rationale (see the field).
    """

    model_config = ConfigDict(defer_build=True, strict=True)

    judge_model: str = DEFAULT_JUDGE_MODEL
    judge_model_config: JudgeModelConfig | None = None
    num_samples: int = Field(default=5, ge=1)
    parallelism_limit: int = Field(default=1, ge=1)
    min_confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    escalate_to: str | None = None
    # What a question whose material addresses the judge becomes: judged on the screened,
    # quoted material ("judge"), or failed ("fail"); see criteria.judge.prompting.injection.
    on_injection: Literal["judge", "fail"] = "judge"
    # Which verdicts get a written rationale (reports show a failing verdict's): "negative"
    # (failing verdicts only), "always", or "never" (the verdict alone, the cheapest); None:
    # the judge's default, "negative". Never changes a verdict: the rationale follows the label.
    rationales: Rationales | None = None


class LlmAsAJudgeCriterion(BaseCriterion):
    """A criterion scored by an LLM judge."""

    model_config = ConfigDict(defer_build=True)

    judge_model_options: JudgeModelOptions = Field(default_factory=JudgeModelOptions)


class RubricsBasedCriterion(LlmAsAJudgeCriterion):
    """A judge criterion that checks a list of rubrics."""

    model_config = ConfigDict(defer_build=True)

    rubrics: list[Rubric] = Field(default_factory=list)

    @field_validator("rubrics")
    @classmethod
    def _unique_ids(cls, rubrics: list[Rubric]) -> list[Rubric]:
        # Refused when the config is read (as ADK refuses them when it scores): found later,
        # each case failed on it with NOT_EVALUATED.
        unique_rubric_ids(rubrics)
        return rubrics


class HallucinationsCriterion(LlmAsAJudgeCriterion):
    """`hallucinations_v1`: optionally also check intermediate natural-language responses."""

    model_config = ConfigDict(defer_build=True)

    evaluate_intermediate_nl_responses: bool = False


class LlmBackedUserSimulatorCriterion(LlmAsAJudgeCriterion):
    """`per_turn_user_simulator_quality_v1`: the stop signal the simulator uses."""

    model_config = ConfigDict(defer_build=True)

    stop_signal: str = "</finished>"
