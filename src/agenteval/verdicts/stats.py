"""Exact tests, a clustered bootstrap and anytime-valid evidence, in pure Python.

The building blocks of `verdicts.paired` (two runs compared) and `verdicts.sequential` (runs
added until each case is decided). Each function states what it computes so that it can be
checked against SciPy / statsmodels (the tests do); nothing here imports them.
"""

from __future__ import annotations

import math
import operator
import random
import statistics
from collections.abc import Sequence


def _log_pmf(n: int, k: int, p: float) -> float:
    """log P(X = k) for X ~ Binomial(n, p), 0 < p < 1."""
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p) (scipy.stats.binom.cdf): exact in integers for p = 1/2
    up to 1,000 trials; else summed in log space (relative error ~1e-12, no underflow)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    if p == 0.5 and n <= 1000:
        return float(sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)  # int / int: correctly rounded
    logs = [_log_pmf(n, i, p) for i in range(k + 1)]
    top = max(logs)
    return min(1.0, math.exp(top) * math.fsum(math.exp(v - top) for v in logs))


def sign_test(positive: int, negative: int) -> float:
    """Two-sided exact sign test of equal chances of a positive and a negative difference (ties
    left out before): min(1, 2 · P(X ≤ min(positive, negative))), X ~ Binomial(positive +
    negative, 1/2); 1 when there is no difference at all. The same number as
    statsmodels' `sign_test` and `mcnemar(exact=True)` and SciPy's `binomtest`."""
    n = positive + negative
    return min(1.0, 2.0 * binom_cdf(min(positive, negative), n, 0.5)) if n else 1.0


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact McNemar test of paired pass / fail outcomes: the sign test on the discordant pairs
    (`a_only`: passed in A only; `b_only`: in B only); concordant pairs carry no information."""
    return sign_test(a_only, b_only)


def _hypergeom_log_pmf(x: int, total: int, good: int, drawn: int) -> float:
    def log_comb(n: int, k: int) -> float:
        return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)

    return log_comb(good, x) + log_comb(total - good, drawn - x) - log_comb(total, drawn)


def fisher_exact(passed_a: int, failed_a: int, passed_b: int, failed_b: int) -> float:
    """Two-sided Fisher exact test of equal pass chances in two independent samples (the table
    [[passed_a, failed_a], [passed_b, failed_b]]): the probability, given the margins, of the
    tables no more likely than the one observed (relative tolerance 1e-7, as SciPy's
    `fisher_exact`)."""
    n_a, n_b = passed_a + failed_a, passed_b + failed_b
    passed = passed_a + passed_b
    total = n_a + n_b
    if n_a == 0 or n_b == 0 or passed in (0, total):
        return 1.0
    low, high = max(0, passed - n_b), min(n_a, passed)
    logs = [_hypergeom_log_pmf(x, total, n_a, passed) for x in range(low, high + 1)]
    observed = logs[passed_a - low]
    cut = observed + math.log1p(1e-7)
    return min(1.0, math.fsum(math.exp(v) for v in logs if v <= cut))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (statsmodels' `multipletests(method="holm")`):
    rejecting where adjusted < alpha keeps the chance of any false rejection ≤ alpha."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    out = [0.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        out[i] = running
    return out


BOOTSTRAP_CLUSTERS = 1000  # beyond: the normal approximation (see `cluster_bootstrap`)


def cluster_bootstrap(clusters: Sequence[Sequence[tuple[float, int]]], resamples: int, seed: int,
                      level: float = 0.95) -> list[tuple[float, float] | None]:
    """Percentile bootstrap intervals of ratio statistics, resampling clusters (cases) with
    replacement, the same draw for every statistic. `clusters[i][s]` is cluster i's (sum of
    values, number of values) for statistic s; a statistic's estimate is Σ sums / Σ counts over
    the clusters drawn (a resample where it has no values is skipped). None for a statistic
    with no values. Seeded: the same input and seed give the same intervals. Beyond
    `BOOTSTRAP_CLUSTERS` clusters, where the bootstrap distribution of a ratio of sums is
    normal to well within its own resampling noise and resampling costs seconds, the interval
    is the normal one with the cluster-robust (linearised) standard error instead."""
    if not clusters:
        return []
    stats = len(clusters[0])
    if len(clusters) > BOOTSTRAP_CLUSTERS:
        return [_normal_interval([c[s] for c in clusters], level) for s in range(stats)]
    rng = random.Random(seed)
    n = len(clusters)
    sums = [[c[s][0] for c in clusters] for s in range(stats)]
    counts = [[c[s][1] for c in clusters] for s in range(stats)]
    draws: list[list[float]] = [[] for _ in range(stats)]
    for _ in range(resamples):
        pick = operator.itemgetter(*rng.choices(range(n), k=n))
        for s in range(stats):
            total = sum(pick(counts[s])) if n > 1 else pick(counts[s])
            if total:
                draws[s].append((sum(pick(sums[s])) if n > 1 else pick(sums[s])) / total)
    tail = (1.0 - level) / 2.0
    out: list[tuple[float, float] | None] = []
    for values in draws:
        if not values:
            out.append(None)
            continue
        values.sort()
        out.append((_quantile(values, tail), _quantile(values, 1.0 - tail)))
    return out


def _normal_interval(parts: Sequence[tuple[float, int]], level: float) -> tuple[float, float] | None:
    """R ± z · SE for R = Σ sums / Σ counts, SE² = n/(n−1) · Σ (sum_i − R count_i)² / (Σ counts)²."""
    n = len(parts)
    total = sum(c for _, c in parts)
    if not total:
        return None
    ratio = math.fsum(x for x, _ in parts) / total
    spread = math.fsum((x - ratio * c) ** 2 for x, c in parts)
    se = math.sqrt(n / (n - 1) * spread) / total if n > 1 else 0.0
    z = statistics.NormalDist().inv_cdf(0.5 + level / 2.0)
    return (ratio - z * se, ratio + z * se)


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of sorted values (NumPy's default 'linear' method)."""
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _log_beta(a: int, b: int) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def evidence_above(passes: int, runs: int, rate: float) -> float:
    """Evidence that a pass chance exceeds `rate` after `passes` of `runs`: the likelihood ratio
    against `rate` of a half-and-half mixture of "always passes" (q = 1) and a uniform prior on
    [rate, 1]:
    ½ · [k = n] / rate^n + ½ · (1/(1−rate)) ∫_rate^1 q^k (1−q)^(n−k) dq / (rate^k (1−rate)^(n−k)).
    The point mass lets a case that never fails be decided as soon as an exact binomial test
    would; the uniform part, any other. Under any pass chance ≤ rate both parts are nonnegative
    supermartingales starting at 1, so is their mixture, and (Ville's inequality) the chance that
    it ever reaches 1/α is at most α, however long one goes on."""
    point = 0.5 * math.exp(min(-runs * math.log(rate), 700.0)) if passes == runs else 0.0
    return point + 0.5 * _mixture(passes, runs, rate, above=True)


def evidence_below(passes: int, runs: int, rate: float) -> float:
    """Evidence that a pass chance is below `rate`: as `evidence_above`, mixing "never passes"
    (q = 0) and a uniform prior on [0, rate]; at most α chance of ever reaching 1/α under any
    pass chance ≥ rate."""
    point = 0.5 * math.exp(min(-runs * math.log1p(-rate), 700.0)) if passes == 0 else 0.0
    return point + 0.5 * _mixture(passes, runs, rate, above=False)


def _mixture(k: int, n: int, rate: float, above: bool) -> float:
    """The uniform-prior likelihood ratio of `evidence_above` / `evidence_below`."""
    if not 0.0 < rate < 1.0:
        raise ValueError("rate must be strictly between 0 and 1")
    m = n - k
    # ∫_rate^1 q^k (1-q)^m dq = B(k+1, m+1) · P(Binomial(n+1, rate) ≤ k); the rest below rate.
    upper = binom_cdf(k, n + 1, rate)
    mass = upper if above else 1.0 - upper
    if mass <= 0.0:
        return 0.0
    width = 1.0 - rate if above else rate
    log_value = (_log_beta(k + 1, m + 1) + math.log(mass) - math.log(width)
                 - k * math.log(rate) - m * math.log1p(-rate))
    return math.exp(min(log_value, 700.0))


__all__ = ["BOOTSTRAP_CLUSTERS", "binom_cdf", "cluster_bootstrap", "evidence_above", "evidence_below",
           "fisher_exact", "holm", "mcnemar_exact", "sign_test"]
