"""`agenteval judge calibrate LABELS`: how right the judge is on labelled cases, and the
confidence thresholds that make its committed verdicts agree with the labels often enough."""

from __future__ import annotations

import sys

import click

from agenteval.cli import options as opt


def _labels_digest(labels: str) -> str:
    """sha256 of the labelled file, or of a folder's `*.json` files (names and contents)."""
    import hashlib
    from pathlib import Path

    path = Path(labels)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def _calibrate(labels: str, judge_model: str | None, num_samples: int, target: float,
               write: str | None, limit: int | None, parallelism: int, details: str | None,
               certify: str | None = None, from_reviews: bool = False) -> int:
    import json
    import os
    from pathlib import Path

    from rich.console import Console
    from rich.table import Table

    from agenteval.calibration import calibrate
    from agenteval.criteria import default_registry
    from agenteval.criteria.judge import JudgeService
    from agenteval.criteria.judge.labelled import load_labelled
    from agenteval.datasets.files import read_json, write_text_atomic
    from agenteval.datasets.targets import check_target
    from agenteval.runner.services import Services
    from agenteval.runner.sync import run_sync
    from agenteval.schema.criterion import DEFAULT_JUDGE_MODEL

    skipped_note = ""
    if from_reviews:
        from agenteval.calibration import REVIEWABLE, labels_from_reviews
        from agenteval.errors import DataError

        if certify:
            raise DataError(None, "--certify", "certificates are made from labelled files, not from reviews")
        found = labels_from_reviews(labels)
        cases = found.cases
        # Every review left out is said, with why: a review that silently gives no label reads as lost.
        skipped_note = "".join(f"  {s.review.run_id} {s.review.eval_id} run {s.review.run_index} "
                               f"{s.review.target or 'case verdict'}: {s.reason}\n" for s in found.skipped)
        if skipped_note:
            skipped_note = f"{len(found.skipped)} review(s) gave no label:\n" + skipped_note
        if not cases:
            raise DataError(labels, "", "no reviews to use as labels: review the verdicts of "
                            f"{', '.join(sorted(REVIEWABLE))} in agenteval web"
                            + (f"\n{skipped_note}" if skipped_note else ""))
    else:
        cases = load_labelled(labels)
        if not cases:  # an empty table and exit 0 would read as a calibration
            from agenteval.errors import DataError

            raise DataError(labels, "", "no labelled case to judge (an empty list, or a folder with no "
                            "labelled file)")
    if limit:
        cases = cases[:limit]
    measured_with = judge_model or DEFAULT_JUDGE_MODEL
    if write:
        check_target(write, "--write")
        if Path(write).is_file():  # a config that is not one is named now, not once all is judged
            from agenteval.datasets import load_eval_config

            load_eval_config(write)
        _check_measured_as(write, read_json(write) if Path(write).is_file() else {},
                           sorted({c.metric for c in cases}), measured_with, num_samples)
    if details:
        check_target(details, "--details")
    services = Services.create(dict(os.environ), store_root=".")
    if judge_model:  # a bad name or a missing key fails before any work, naming the flag
        from agenteval.errors import DataError
        from agenteval.models import ModelUnavailable

        try:
            services.models.get(judge_model)
        except ModelUnavailable as e:
            raise DataError(None, "--judge_model", str(e)) from None
    # Every sample is drawn (no early stop): a verdict's confidence is what is calibrated (where it
    # is the share of samples agreeing; a probability from log-probabilities needs none).
    judge = JudgeService(services.models.get, services.judge_cache, early_stop=False)
    console = Console()
    if skipped_note:
        console.print(skipped_note, end="", markup=False, highlight=False)
    console.print(f"Judging {len(cases)} labelled cases with {judge_model or 'the criteria defaults'} "
                  f"({num_samples} samples each)...", markup=False, highlight=False)
    results = run_sync(calibrate(cases, judge, num_samples=num_samples, judge_model=judge_model,
                                 target=target, parallelism=parallelism))
    unjudged = [o for c in results for o in c.outcomes if o.correct is None]
    why = next((o.error for o in unjudged if o.error), "")
    if unjudged and len(unjudged) == len(cases):  # a table of 0% would read as a calibration
        from agenteval.errors import DataError

        raise DataError(None, f"--judge_model {judge_model or DEFAULT_JUDGE_MODEL}", "no labelled case got "
                        f"a verdict ({len(unjudged)} of {len(cases)})" + (f": {why}" if why else ""))
    table = Table(title=f"Judge calibration (target agreement {target:.0%})", title_justify="left")
    for col in ("criterion", "cases", "accuracy", "κ", "min_confidence", "agreement", "coverage"):
        table.add_column(col, justify="left" if col == "criterion" else "right")
    for c in results:
        k = c.kappa_at(0.0)
        table.add_row(c.metric, str(len(c.outcomes)), f"{c.accuracy:.0%}",
                      "-" if k is None else f"{k:.2f}",
                      "-" if c.threshold is None else f"{c.threshold:.2f}",
                      "-" if c.agreement is None else f"{c.agreement:.0%}",
                      "-" if c.coverage is None else f"{c.coverage:.0%}")
    console.print(table)
    if certify:
        import datetime

        from agenteval.calibration import certificate

        folder = Path(certify)
        folder.mkdir(parents=True, exist_ok=True)
        created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        digest = _labels_digest(labels)
        source = Path(labels).name + (f" (first {limit})" if limit else "")
        for c in results:
            # Measured at the threshold --write writes, where it writes one: a certificate
            # applies only at the min_confidence it was measured at (`certificates.measured_as`).
            cert = certificate(c, judge_model=measured_with, num_samples=num_samples, source=source,
                               source_sha256=digest, created=created,
                               min_confidence=round(c.threshold, 4) if write and c.threshold is not None
                               else None)
            target_file = folder / f"{c.metric}.json"
            write_text_atomic(target_file, json.dumps(cert.to_json(), indent=2, ensure_ascii=False) + "\n")
            console.print(f"Certificate {target_file}: {cert.summary()}", markup=False, highlight=False)
    if details:
        write_text_atomic(details, "".join(json.dumps({
            "id": o.case.id, "metric": c.metric, "label": o.case.label, "correct": o.correct,
            "confidence": o.confidence}) + "\n" for c in results for o in c.outcomes))
    if unjudged:
        console.print(f"{len(unjudged)} of {len(cases)} labelled cases got no verdict (counted wrong)"
                      + (f": {why}" if why else ""), style="yellow", markup=False, highlight=False)
    unreachable = [c.metric for c in results if c.threshold is None]
    if unreachable:
        console.print(f"[yellow]No threshold reaches {target:.0%} for: {', '.join(unreachable)}[/]")
    if write:
        config = read_json(write) if Path(write).is_file() else {"criteria": {}}
        criteria = config.setdefault("criteria", {})
        registry = default_registry()
        for c in results:
            if c.threshold is None:
                continue
            entry = criteria.get(c.metric)
            if not isinstance(entry, dict):
                default = registry.configure(c.metric, {}).criterion.threshold if entry is None else entry
                entry = criteria[c.metric] = {"threshold": default}
            # With the judge and samples it was measured with: it holds for those only.
            entry.setdefault("judge_model_options", {}).update({
                "judge_model": measured_with, "num_samples": num_samples,
                "min_confidence": round(c.threshold, 4)})
        write_text_atomic(write, json.dumps(config, indent=2) + "\n")
        console.print(f"Thresholds written to {write} (judge {measured_with}, {num_samples} samples "
                      "a verdict: what they were measured with)", markup=False, highlight=False)
    return 0


def _check_measured_as(write: str, config: object, metrics: list[str], judge_model: str,
                       num_samples: int) -> None:
    """Refuses (a DataError naming CONFIG and the field, before anything is judged) a --write into
    a config whose judge model or sample count for a calibrated criterion is not what the
    thresholds are to be measured with: a min_confidence holds only for the judge and number of
    samples it was measured with, and writing them over the config's would change its runs."""
    from agenteval.errors import DataError

    criteria = config.get("criteria") if isinstance(config, dict) else None
    for metric in metrics:
        entry = criteria.get(metric) if isinstance(criteria, dict) else None
        options = entry.get("judge_model_options") if isinstance(entry, dict) else None
        if not isinstance(options, dict):
            continue
        key = f"criteria.{metric}.judge_model_options"
        written = options.get("judge_model")
        if written is not None and written != judge_model:
            raise DataError(write, f"{key}.judge_model", f"{written!r} here, but the thresholds would "
                            f"be measured with {judge_model!r}: a min_confidence holds for the judge it "
                            f"was measured with only; give --judge_model {written}, or another CONFIG")
        written = options.get("num_samples")
        if written is not None and written != num_samples:
            raise DataError(write, f"{key}.num_samples", f"{written!r} here, but the thresholds would "
                            f"be measured at --num_samples {num_samples}: a min_confidence holds at the "
                            f"number of samples it was measured at only; give --num_samples {written}, "
                            "or another CONFIG")


@click.group()
def judge() -> None:
    """The LLM judge: calibrate it on labelled cases."""


@judge.command()
@click.argument("labels", type=click.Path(exists=True))
@opt.judge_model
@click.option("--num_samples", "--num-samples", type=click.IntRange(min=1), default=5, show_default=True,
              help="Samples per verdict. A verdict's confidence is its probability where the judge gives "
              "log-probabilities (the embedded judge does), else the share of samples agreeing with it "
              "(which needs 2 or more).")
@click.option("--target", type=opt.FloatRange(0, 1), default=0.9, show_default=True,
              help="Agreement the committed verdicts must reach.")
@click.option("--write", type=click.Path(dir_okay=False), metavar="CONFIG",
              help="Store each reachable threshold as judge_model_options.min_confidence in this "
              "eval config, with the judge_model and num_samples it was measured with (a config that "
              "names others for the criterion is refused).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N cases.")
@click.option("--details", type=click.Path(dir_okay=False), metavar="FILE",
              help="Also write each case's outcome (id, criterion, label, right or wrong, confidence) "
              "as JSON lines.")
@click.option("--certify", type=click.Path(file_okay=False), metavar="DIR",
              help="Also write a calibration certificate per criterion into DIR (e.g. "
              ".agenteval/certificates): agreement, Cohen's κ and coverage at the criterion's "
              "shipped min_confidence (with --write, at the one written), the number of "
              "labels, bound to the judge model, the prompt's hash and the rubric (README "
              "\"Calibration certificates\").")
@click.option("--from_reviews", "--from-reviews", is_flag=True,
              help="LABELS is an agent or project folder: label with the reviews people made of judged "
              "verdicts in its run history (agenteval web: agree / disagree), README \"Human review\".")
@opt.parallelism
def calibrate(labels: str, judge_model: str | None, num_samples: int, target: float, write: str | None,
              limit: int | None, parallelism: int, details: str | None, certify: str | None,
              from_reviews: bool) -> None:
    """Judge the labelled cases in LABELS (a file or a folder of them; format in README
    "Calibrating the judge") and print per criterion: accuracy, and the min_confidence at which
    the committed verdicts agree with the labels at --target, with the coverage it leaves."""
    sys.exit(opt.guard(_calibrate, labels, judge_model, num_samples, target, write, limit, parallelism,
                       details, certify, from_reviews))
