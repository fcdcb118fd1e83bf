"""`judge_certificates` in an eval config: when a judged criterion without a good enough
calibration certificate stops gating (see `agenteval.criteria.judge.certificates`).

```json
"judge_certificates": {"require": true, "min_kappa": 0.4,
                       "criteria": {"safety_v1": {"min_agreement": 0.9}}}
```

With `require`, a judged criterion gates only when a certificate applies to its judge model,
prompt and rubric and meets the floors (`min_kappa`: Cohen's κ,
0.4 unless set, since under 0.4 is less than moderate agreement and a judge near chance would
otherwise show as certified; `min_agreement`: agreement of the committed verdicts;
`min_labels`: how many labels it was measured on, 30 unless set, since a κ from a handful of
labels says little); otherwise it is advisory: scored and reported, its
reason saying why, but it does not decide the case. `criteria` overrides these per criterion
(fields it leaves out are the top level's). Without `require` nothing changes but what reports show.
"""


from pydantic import ConfigDict, Field

from agenteval.schema.base import WireModel

DEFAULT_MIN_KAPPA = 0.4
DEFAULT_MIN_LABELS = 30


class CertificateFloor(WireModel):
    """Whether a judged criterion needs a certificate to gate, and the floors it must meet."""

    model_config = ConfigDict(defer_build=True, strict=True)

    require: bool | None = None
    min_kappa: float | None = Field(default=None, ge=-1.0, le=1.0)
    min_agreement: float | None = Field(default=None, ge=0.0, le=1.0)
    min_labels: int | None = Field(default=None, ge=1)


class JudgeCertificatesConfig(CertificateFloor):
    """The top-level floor and per-criterion overrides (see the module docstring)."""

    model_config = ConfigDict(defer_build=True)

    criteria: dict[str, CertificateFloor] = Field(default_factory=dict)

    def floor(self, metric: str) -> CertificateFloor:
        """The floor in force for `metric`: its override's fields, else the top level's."""
        own = self.criteria.get(metric)
        fields = ("require", "min_kappa", "min_agreement", "min_labels")
        return CertificateFloor(**{f: getattr(own, f) if own is not None and getattr(own, f) is not None
                                   else getattr(self, f) for f in fields})


__all__ = ["DEFAULT_MIN_KAPPA", "DEFAULT_MIN_LABELS", "CertificateFloor", "JudgeCertificatesConfig"]
