"""Calibration certificates: how well one judge, with one prompt (and rubric), agreed with
labelled cases, written by `agenteval judge calibrate --certify` and looked up for every judged
score.

A certificate (`Certificate`, one JSON file per criterion) records the labels it was measured on
(how many, positive / negative, the file and its sha256), the agreement and Cohen's κ of the
verdicts committed at the criterion's confidence threshold with the coverage that threshold
leaves, the agreement of all verdicts, and what it is bound to:

* the judge model: `sha256:<hash>` of the embedded model's file (verified when it is assembled,
  `models.local_assets.MODEL_SHA256`), else the canonical endpoint name (`openai:gpt-4o`,
  `openai-compat:m@http://host/v1`);
* the prompt: a sha256 over every request the criterion makes on a fixed probe case (system
  prompt, solved examples, question templates and reply schemas; `prompt_fingerprint`), so any
  change to what the judge is asked makes older certificates stop applying;
* the rubrics: the rubric texts it was measured on, or None when it was measured over many
  different rubrics (a general certificate, applying to any rubric of that criterion);
* how the judge was asked: `num_samples` and `min_confidence` (`measured_as`), which its
  agreement and coverage depend on.

A rubric criterion's certificate also gives the agreement per rubric family (`families`,
`rubric_checks`), saying which families stay below the family floor; a metric with a stronger
judge (`escalate_to`) shows that judge's certificate too (one per judge model).

`CertificateBook.find` picks the certificate that applies to a configured metric (bound to the
same model and prompt; its rubrics, when it names them, covering the config's; a case that adds
rubrics of its own is looked up again when it is scored, `rubric_certifications` / `case_note`);
`certify` turns that into the note every report shows beside the judged score
(`JudgeCertificateNote`): certified,
below the configured floor, or uncalibrated, and whether the metric is then advisory instead of
gating (`judge_certificates` in the eval config: `require`, `min_kappa`, `min_agreement`, per
criterion under `criteria`).
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from agenteval.criteria.base import EvalContext
from agenteval.criteria.spec import ConfiguredMetric
from agenteval.errors import DataError
from agenteval.schema import (
    ConversationScenario,
    JudgeCertificateNote,
    JudgeModelOptions,
    LlmAsAJudgeCriterion,
    LlmBackedUserSimulatorCriterion,
)
from agenteval.schema.judge_certificates import (
    DEFAULT_MIN_KAPPA,
    DEFAULT_MIN_LABELS,
    CertificateFloor,
    JudgeCertificatesConfig,
)

FORMAT = "agenteval-judge-certificate/1"
# Certificates shipped with agenteval, for the built-in criteria on the embedded judge.
SHIPPED = Path(__file__).resolve().parent / "shipped_certificates"
# Where a project keeps its own, beside its agent or config (and in the working directory).
PROJECT_DIR = Path(".agenteval") / "certificates"


def kappa(pairs: Iterable[tuple[bool, bool]]) -> float | None:
    """Cohen's κ of (predicted, label) pairs of a yes / no judgement; None when it is undefined
    (no pairs, or both sides always gave the same answer)."""
    pairs = list(pairs)
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(1 for p, y in pairs if p == y) / n
    p_pred = sum(1 for p, _ in pairs if p) / n
    p_label = sum(1 for _, y in pairs if y) / n
    expected = p_pred * p_label + (1 - p_pred) * (1 - p_label)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1 - expected)


@dataclass(frozen=True)
class FamilyAgreement:
    """A rubric criterion's agreement on the labelled cases of one rubric family
    (`rubric_checks.family_of`; `two_step` for rubrics of no family), of the verdicts committed
    at the certificate's threshold, and whether it stays below the family floor
    (`rubrics.FAMILY_FLOOR`)."""

    family: str
    labels: int
    agreement: float | None
    kappa: float | None
    below_floor: bool

    @classmethod
    def from_json(cls, data: Any, file: str | Path, where: str) -> FamilyAgreement:
        """One entry of a certificate's `families`; a DataError names the file and the entry."""
        if not isinstance(data, dict) or not isinstance(data.get("family"), str):
            raise DataError(file, where, "a family entry is an object with a \"family\" name")
        labels, below = data.get("labels"), data.get("below_floor")
        if not isinstance(labels, int) or labels < 0:
            raise DataError(file, f"{where}.labels", "must be a whole number ≥ 0")
        if not isinstance(below, bool):
            raise DataError(file, f"{where}.below_floor", "must be true or false")
        rates = {}
        for name in ("agreement", "kappa"):
            v = data.get(name)
            low = -1.0 if name == "kappa" else 0.0
            if v is not None and (not isinstance(v, (int, float)) or not low <= v <= 1.0):
                raise DataError(file, f"{where}.{name}", f"must be a number in [{low:g}, 1] or null")
            rates[name] = None if v is None else float(v)
        return cls(data["family"], labels, rates["agreement"], rates["kappa"], below)


@dataclass(frozen=True)
class Certificate:
    """One criterion's measured agreement with labels, bound to a judge, a prompt and rubrics
    (see the module docstring). Rates are 0..1; `agreement`, `kappa` and `coverage` are of the
    verdicts committed at `min_confidence` (all verdicts when it is None)."""

    metric: str
    judge_model: str
    judge_identity: str
    prompt_version: str
    prompt_sha256: str
    labels: int
    positives: int
    negatives: int
    agreement: float | None
    kappa: float | None
    coverage: float
    accuracy: float  # every verdict committed (no threshold); a judge error counts as wrong
    min_confidence: float | None
    source: str  # the labelled file(s) measured on
    source_sha256: str
    created: str
    num_samples: int = 5
    rubrics: tuple[str, ...] | None = None
    note: str = ""
    families: tuple[FamilyAgreement, ...] = ()  # rubric criteria: agreement per rubric family
    path: str | None = field(default=None, compare=False)  # where it was read from

    def to_json(self) -> dict[str, Any]:
        """The certificate as written to its file."""
        data = {"format": FORMAT, **asdict(self)}
        data.pop("path")
        data["rubrics"] = None if self.rubrics is None else list(self.rubrics)
        data["families"] = [asdict(f) for f in self.families]
        return data

    @classmethod
    def from_json(cls, data: Any, file: str | Path) -> Certificate:
        """A certificate from its file's JSON; a DataError names the file and the field."""
        if not isinstance(data, dict):
            raise DataError(file, "", "a certificate is a JSON object")
        if data.get("format") != FORMAT:
            raise DataError(file, "format", f"expected {FORMAT!r}, got {data.get('format')!r}")
        known = {f for f in cls.__dataclass_fields__ if f != "path"}
        values: dict[str, Any] = {}
        for name in known:
            if name in data:
                values[name] = data[name]
        required = ("metric", "judge_model", "judge_identity", "prompt_version", "prompt_sha256",
                    "labels", "positives", "negatives", "agreement", "kappa", "coverage",
                    "accuracy", "min_confidence", "source", "source_sha256", "created")
        for name in required:
            if name not in data:
                raise DataError(file, name, "field required")
        for name in ("labels", "positives", "negatives", "num_samples"):
            if name in values and (not isinstance(values[name], int) or values[name] < 0):
                raise DataError(file, name, "must be a whole number ≥ 0")
        for name in ("agreement", "kappa", "coverage", "accuracy", "min_confidence"):
            v = values.get(name)
            low = -1.0 if name == "kappa" else 0.0
            if v is not None and (not isinstance(v, (int, float)) or not low <= v <= 1.0):
                raise DataError(file, name, f"must be a number in [{low:g}, 1] or null")
        rubrics = values.get("rubrics")
        if rubrics is not None and (not isinstance(rubrics, list)
                                    or not all(isinstance(r, str) for r in rubrics)):
            raise DataError(file, "rubrics", "must be a list of rubric texts or null")
        values["rubrics"] = None if rubrics is None else tuple(rubrics)
        families = values.get("families", [])
        if not isinstance(families, list):
            raise DataError(file, "families", "must be a list of family entries")
        values["families"] = tuple(FamilyAgreement.from_json(f, file, f"families[{i}]")
                                   for i, f in enumerate(families))
        return cls(**values, path=str(file))

    @property
    def weak_families(self) -> list[str]:
        """The rubric families whose agreement stays below the family floor."""
        return [f.family for f in self.families if f.below_floor]

    def summary(self) -> str:
        """`κ 0.44, agreement 81% at coverage 76% (min_confidence 0.55), 76 labels (file)`."""
        k = "κ n/a" if self.kappa is None else f"κ {self.kappa:.2f}"
        agreement = "no verdict committed" if self.agreement is None else f"agreement {self.agreement:.0%}"
        at = "" if self.min_confidence is None else f" (min_confidence {self.min_confidence:g})"
        weak = (f"; rubric families below the floor: {', '.join(self.weak_families)}"
                if self.weak_families else "")
        return (f"{k}, {agreement} at coverage {self.coverage:.0%}{at}, {self.labels} labels "
                f"({self.source}){weak}")


def read_certificate(file: str | Path) -> Certificate:
    """One certificate file; a DataError names the file and the field."""
    try:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise DataError(file, "", f"cannot read a certificate: {e}") from None
    return Certificate.from_json(data, file)


@dataclass(frozen=True)
class CertificateBook:
    """The certificates known to a run: project ones first, then the shipped ones."""

    certificates: tuple[Certificate, ...] = ()

    @classmethod
    def load(cls, folders: Sequence[str | Path], *, shipped: bool = True) -> CertificateBook:
        """Every `*.json` in the existing `folders` (in order, each once), then the shipped ones."""
        seen: set[Path] = set()
        certs: list[Certificate] = []
        for folder in [*folders, *([SHIPPED] if shipped else [])]:
            path = Path(folder).resolve()
            if path in seen or not path.is_dir():
                continue
            seen.add(path)
            certs += [read_certificate(f) for f in sorted(path.glob("*.json"))]
        return cls(tuple(certs))

    def find(self, metric: str, identity: str, prompt_sha256: str,
             rubrics: Sequence[str] = (), options: JudgeModelOptions | None = None) -> Certificate | None:
        """The certificate that applies: same criterion, judge and prompt, rubrics that cover
        `rubrics` (or none named), and measured as `options` judge (`measured_as`; None: any);
        one naming rubrics is preferred, then the first found."""
        fits = [c for c in self.certificates if c.metric == metric and c.judge_identity == identity
                and c.prompt_sha256 == prompt_sha256
                and (c.rubrics is None or set(rubrics) <= set(c.rubrics))
                and (options is None or measured_as(c, options))]
        fits.sort(key=lambda c: c.rubrics is None)  # stable: project certificates stay first
        return fits[0] if fits else None


def measured_as(cert: Certificate, options: JudgeModelOptions) -> bool:
    """Whether `cert` was measured as `options` judge: the same number of samples, and the
    confidence threshold it was measured at (the criterion's shipped one, which a config's
    unset `min_confidence` also means; 0 and none alike). Its agreement and coverage are those
    of the verdicts committed so: at another threshold or sample count they are not known."""
    if cert.num_samples != options.num_samples:
        return False
    wanted = options.min_confidence
    return wanted is None or round(wanted or 0.0, 4) == round(cert.min_confidence or 0.0, 4)


def _settings(cert: Certificate) -> str:
    at = "no min_confidence" if not cert.min_confidence else f"min_confidence {cert.min_confidence:g}"
    return f"num_samples {cert.num_samples} and {at}"


# ----------------------------------------------------------------------------------------------
# What a certificate is bound to


def judge_identity(model: str) -> str:
    """`sha256:<file hash>` for the embedded model, else the canonical model name."""
    from agenteval.models.base import ModelUnavailable
    from agenteval.models.local_assets import MODEL_SHA256
    from agenteval.models.resolve import parse_model_name

    try:
        spec = parse_model_name(model)
    except ModelUnavailable:
        return model.strip()
    return f"sha256:{MODEL_SHA256}" if spec.backend == "local" else spec.name


def _probe_rubrics() -> list[dict[str, Any]]:
    """A rubric of no family (asked in two steps) and one selecting each rubric family
    (`rubric_checks.PROBES`), so the fingerprint covers every question a rubric may get."""
    from agenteval.criteria.judge.rubric_checks import PROBES

    texts = ["<rubric>", *(f"The agent {text}." for text in PROBES.values())]
    return [{"rubric_id": f"probe{i}", "rubric_content": {"text_property": text}}
            for i, text in enumerate(texts)]


def rubric_texts(criterion: Any) -> tuple[str, ...]:
    """The rubric texts a criterion config names, as the judge is asked them
    (`rubrics.rubric_text`: a rubric without a text property asks its description, else its id;
    empty when it has none)."""
    from agenteval.criteria.judge.rubrics import rubric_text

    return tuple(rubric_text(r) for r in getattr(criterion, "rubrics", None) or ())


def prompt_fingerprint(metric: str, criterion: dict[str, Any]) -> str:
    """The sha256 of every request `metric`'s criterion makes on a fixed probe case (see the
    module docstring): messages and reply schemas, sorted. Rubric texts, judge model, samples
    and thresholds are left out (the rubric is bound on its own). A criterion that cannot be
    probed is fingerprinted by its name, the prompt version and the system prompt.

    A reply schema is bound by what decides the label (`verdict.label_schema`): a schema that
    writes the label first and a rationale after it (after some labels, `explained_verdict_schema`,
    or after every label) is bound as the label-only schema it extends. Up to and including the
    label they allow the same text, and a reply is written left to right, so the label and its
    probabilities (a verdict's vote and confidence) are those of the label-only reply; what
    follows the label is the rationale that reports show, which no score, vote or confidence
    reads. A certificate thus applies whichever `rationales` setting a run uses. A schema with
    notes before the label is bound as it is."""
    probe = {k: v for k, v in criterion.items() if k not in ("rubrics", "threshold")}
    return _fingerprint(metric, json.dumps(probe, sort_keys=True, default=str))


@functools.lru_cache(maxsize=128)
def _fingerprint(metric: str, probe_json: str) -> str:
    # In a thread of its own: the probe runs an event loop, and the caller may be inside one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        requests = pool.submit(_probe, metric, json.loads(probe_json)).result()
    return hashlib.sha256(json.dumps(requests, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _probe(metric: str, criterion: dict[str, Any]) -> list[Any]:
    import anyio

    from agenteval.criteria import default_registry
    from agenteval.criteria.base import EvalContext
    from agenteval.criteria.judge.engine.service import JudgeService
    from agenteval.criteria.judge.engine.verdict import label_schema
    from agenteval.criteria.judge.labelled import invocation
    from agenteval.criteria.judge.prompting import prompts
    from agenteval.models.base import ModelRequest
    from agenteval.models.scripted import ScriptedModel

    def reply(request: ModelRequest) -> str:
        # A reply of the requested shape, so that every step of the criterion is asked.
        props = (request.json_schema or {}).get("properties", {})
        return json.dumps({k: (v.get("enum") or ["x"])[0] for k, v in props.items()}
                          or {"verdict": "x"})

    model = ScriptedModel(reply, name="probe")
    options = {**criterion.get("judge_model_options", {}), "judge_model": "probe", "num_samples": 1,
               "min_confidence": 0.0, "escalate_to": None}
    config: dict[str, Any] = {**criterion, "threshold": 0.5, "judge_model_options": options}
    calls = [{"name": "lookup", "args": {"id": "<arg>"}, "response": {"result": "<tool result>"}}]
    declarations = [{"name": "lookup", "description": "<tool description>",
                     "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}]
    actual = [invocation("<user>", "<response>", calls, "<instructions>", declarations)]
    expected = [invocation("<user>", "<reference>", calls, "<instructions>", declarations)]
    registry = default_registry()
    scenario = None
    if isinstance(registry.configure(metric, config).criterion, LlmBackedUserSimulatorCriterion):
        # A simulated conversation of two turns: the later turn's question and the stop one.
        # (Other criteria keep the one-turn probe their shipped certificates are bound to.)
        scenario = ConversationScenario(starting_prompt="<user>", conversation_plan="<plan>")
        actual = [actual[0], invocation("<user 2>", "<response 2>")]
    try:
        try:
            built = registry.configure(metric, {**config, "rubrics": _probe_rubrics()})
        except DataError:
            built = registry.configure(metric, config)
        ctx = EvalContext(actual=actual, expected=expected, judge=JudgeService(lambda _: model),
                          case_rubrics=(), scenario=scenario)
        anyio.run(built.build().ascore, ctx)
    except Exception:  # a criterion the probe cannot drive: bound to what is known of its prompt
        return [metric, prompts.PROMPT_VERSION, prompts.SYSTEM]
    asked = [[[m.role, m.content] for m in r.messages]
             + [None if r.json_schema is None else label_schema(r.json_schema)] for r in model.requests]
    return sorted(asked, key=lambda a: json.dumps(a, sort_keys=True))




# ----------------------------------------------------------------------------------------------
# Applying certificates to a run's metrics


def certify(metric: ConfiguredMetric, book: CertificateBook,
            policy: JudgeCertificatesConfig | None = None) -> JudgeCertificateNote | None:
    """The certificate note of a judged metric as configured (None for a metric not judged):
    which certificate applies to its judge model, prompt and rubrics, whether it meets the
    policy's floors, and whether the metric is therefore advisory (see the module docstring).
    A rubric criterion's cases may add rubrics of their own: see `rubric_certifications`."""
    criterion = metric.criterion
    if not isinstance(criterion, LlmAsAJudgeCriterion):
        return None
    fingerprint = prompt_fingerprint(metric.name, criterion.model_dump(mode="json"))
    options = criterion.judge_model_options
    cert = book.find(metric.name, judge_identity(options.judge_model), fingerprint, rubric_texts(criterion),
                     options)
    return _note(metric, criterion, cert, book, fingerprint, policy)


def rubric_certifications(metric: ConfiguredMetric, book: CertificateBook,
                          policy: JudgeCertificatesConfig | None = None,
                          ) -> tuple[tuple[frozenset[str] | None, JudgeCertificateNote], ...]:
    """For a rubric criterion whose certificate names its rubrics: the notes a case may get, by
    the rubric texts it is judged on (the config's plus its case's and turns' rubrics of the
    criterion's type, known only when it is scored). Each rubric-bound certificate covering the
    config's rubrics, in `find`'s order, with its rubric texts, then (None) the note of a case
    judged on rubrics none of them was measured on: a general certificate's, or uncalibrated.
    A case takes the first entry whose texts cover its own (`for_rubrics`). Empty when the
    certificate in force applies to any rubric, or none applies."""
    criterion = metric.criterion
    if not isinstance(criterion, LlmAsAJudgeCriterion) or not _has_rubrics(criterion):
        return ()
    fingerprint = prompt_fingerprint(metric.name, criterion.model_dump(mode="json"))
    options = criterion.judge_model_options
    identity = judge_identity(options.judge_model)
    own = set(rubric_texts(criterion))
    bound = [c for c in book.certificates if c.metric == metric.name and c.judge_identity == identity
             and c.prompt_sha256 == fingerprint and c.rubrics is not None and own <= set(c.rubrics)
             and measured_as(c, options)]
    if not bound:
        return ()
    general = next((c for c in book.certificates if c.metric == metric.name and c.rubrics is None
                    and c.judge_identity == identity and c.prompt_sha256 == fingerprint
                    and measured_as(c, options)), None)
    names = ", ".join(Path(c.path or "").name or c.metric for c in bound)
    why = f"; {names} was measured on other rubrics than this case's"
    otherwise = _note(metric, criterion, general, book, fingerprint, policy, why)
    return (*((frozenset(c.rubrics or ()), _note(metric, criterion, c, book, fingerprint, policy))
              for c in bound), (None, otherwise))


def _has_rubrics(criterion: LlmAsAJudgeCriterion) -> bool:
    """Whether the config is a rubric criterion's (it has a `rubrics` field)."""
    return "rubrics" in type(criterion).model_fields


def for_rubrics(metric: ConfiguredMetric, rubrics: Iterable[str] | None) -> JudgeCertificateNote | None:
    """The note of `metric` for a case judged on the rubric texts `rubrics` (None: not known,
    e.g. the case's rubrics were refused): the first of `metric.rubric_certifications` covering
    them, else its certification."""
    texts = None if rubrics is None else set(rubrics)
    for bound, note in metric.rubric_certifications:
        if bound is None or (texts is not None and texts <= bound):
            return note
    return metric.certification


def case_note(metric: ConfiguredMetric, ctx: EvalContext) -> JudgeCertificateNote | None:
    """The note of `metric` for one case (`for_rubrics`): a rubric criterion's rubric texts are
    those it judges the case on, every turn's (None when they are refused, e.g. a repeated id)."""
    from agenteval.criteria.judge.rubrics import RubricCriterion, rubric_text

    criterion = metric.build()
    texts = None
    if isinstance(criterion, RubricCriterion):
        try:
            texts = {rubric_text(r) for i in range(len(ctx.actual)) for r in criterion.rubrics_for(ctx, i)}
        except ValueError:
            texts = None
    return for_rubrics(metric, texts)


def _note(metric: ConfiguredMetric, criterion: LlmAsAJudgeCriterion, cert: Certificate | None,
          book: CertificateBook, fingerprint: str, policy: JudgeCertificatesConfig | None,
          why: str = "") -> JudgeCertificateNote:
    """The note saying whether `cert` (None: none applies) meets the policy's floors."""
    model = criterion.judge_model_options.judge_model
    floor = policy.floor(metric.name) if policy is not None else CertificateFloor()
    if cert is None:
        # Why none applies, when one of this criterion and judge exists: its rubrics, or its prompt.
        mine = [c for c in book.certificates
                if c.metric == metric.name and c.judge_identity == judge_identity(model)]
        options = criterion.judge_model_options
        same = [c for c in mine if c.prompt_sha256 == fingerprint]
        rubrics = next((c for c in same if measured_as(c, options)), None)
        other = next((c for c in same if not measured_as(c, options)), None)
        stale = next((c for c in mine if c.prompt_sha256 != fingerprint), None)
        if why:
            pass
        elif other is not None:
            given = "its shipped min_confidence" if options.min_confidence is None else \
                f"min_confidence {options.min_confidence:g}"
            why = (f"; {Path(other.path or '').name} was measured at {_settings(other)}, this config "
                   f"judges with num_samples {options.num_samples} and {given}")
        elif rubrics is not None:
            why = f"; {Path(rubrics.path or '').name} was measured on other rubrics"
        elif stale is not None:
            why = (f"; {Path(stale.path or '').name} was measured with another prompt "
                   f"(version {stale.prompt_version})")
        status: Literal["certified", "below_floor", "uncalibrated"] = "uncalibrated"
        text = f"uncalibrated: no certificate for judge {model}, this prompt and rubric{why}"
    else:
        short = []
        min_kappa = DEFAULT_MIN_KAPPA if floor.min_kappa is None else floor.min_kappa
        if cert.kappa is None or cert.kappa < min_kappa:
            k = "n/a" if cert.kappa is None else f"{cert.kappa:.2f}"
            short.append(f"κ {k} < min_kappa {min_kappa:g}")
        if floor.min_agreement is not None and (cert.agreement is None
                                                or cert.agreement < floor.min_agreement):
            a = "n/a" if cert.agreement is None else f"{cert.agreement:.0%}"
            short.append(f"agreement {a} < min_agreement {floor.min_agreement:.0%}")
        min_labels = DEFAULT_MIN_LABELS if floor.min_labels is None else floor.min_labels
        if cert.labels < min_labels:
            short.append(f"{cert.labels} labels < min_labels {min_labels}")
        status = "below_floor" if short else "certified"
        text = (f"below floor ({'; '.join(short)}): " if short else "certified: ") + cert.summary()
    escalate_to = criterion.judge_model_options.escalate_to
    if escalate_to:
        strong = book.find(metric.name, judge_identity(escalate_to), fingerprint, rubric_texts(criterion),
                           criterion.judge_model_options)
        text += (f"; escalation judge {escalate_to}: " + (strong.summary() if strong is not None
                                                          else "uncalibrated"))
    advisory = bool(floor.require) and status != "certified"
    return JudgeCertificateNote(
        metric_name=metric.name, status=status, text=text, advisory=advisory,
        certificate=None if cert is None else Path(cert.path or "").name or None,
        kappa=None if cert is None else cert.kappa, agreement=None if cert is None else cert.agreement,
        coverage=None if cert is None else cert.coverage, labels=None if cert is None else cert.labels)


def certificate_folders(*places: str | Path | None) -> list[Path]:
    """`.agenteval/certificates` beside each of `places` (an agent's or config's file or folder),
    then in the working directory."""
    out = []
    for place in places:
        if place:
            p = Path(place)
            out.append((p if p.is_dir() else p.parent) / PROJECT_DIR)
    return [*out, Path.cwd() / PROJECT_DIR]


__all__ = ["FORMAT", "PROJECT_DIR", "SHIPPED", "Certificate", "CertificateBook", "FamilyAgreement",
           "case_note", "certificate_folders", "certify", "for_rubrics", "judge_identity", "kappa",
           "prompt_fingerprint", "read_certificate", "rubric_certifications", "rubric_texts"]
