"""The statistics of `verdicts.stats` against SciPy and statsmodels (test-only dependencies) on
fixed data."""

import itertools

import numpy as np
import pytest
from scipy import integrate, stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.descriptivestats import sign_test as sm_sign_test
from statsmodels.stats.multitest import multipletests

from agenteval.verdicts.stats import (
    BOOTSTRAP_CLUSTERS,
    _quantile,
    binom_cdf,
    cluster_bootstrap,
    evidence_above,
    evidence_below,
    fisher_exact,
    holm,
    mcnemar_exact,
    sign_test,
)


@pytest.mark.parametrize(("k", "n", "p"), [(0, 1, 0.5), (3, 10, 0.5), (7, 10, 0.5), (12, 40, 0.3),
                                           (250, 501, 0.5), (5, 8, 0.9), (0, 30, 0.02), (29, 30, 0.98),
                                           (4900, 10000, 0.5), (4500, 10000, 0.5), (12, 5000, 0.5)])
def test_binomial_cdf(k: int, n: int, p: float) -> None:
    assert binom_cdf(k, n, p) == pytest.approx(stats.binom.cdf(k, n, p), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(("a_only", "b_only"), [(0, 0), (1, 0), (0, 6), (3, 12), (10, 3), (25, 25), (40, 61)])
def test_mcnemar_is_statsmodels_exact_mcnemar(a_only: int, b_only: int) -> None:
    table = [[17, a_only], [b_only, 9]]  # concordant cells carry no information
    expected = mcnemar(table, exact=True).pvalue
    assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-9)
    if a_only + b_only:
        assert sign_test(a_only, b_only) == pytest.approx(
            stats.binomtest(a_only, a_only + b_only, 0.5).pvalue, rel=1e-9)


def test_sign_test_on_score_differences_is_statsmodels() -> None:
    diffs = [0.1, -0.2, 0.0, 0.3, 0.05, 0.4, -0.1, 0.2, 0.0, 0.25, 0.15, 0.3]
    up, down = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    assert sign_test(up, down) == pytest.approx(sm_sign_test(diffs, 0.0)[1], rel=1e-9)


@pytest.mark.parametrize("table", [(3, 7, 9, 1), (0, 5, 5, 0), (10, 0, 10, 0), (1, 1, 0, 2), (8, 2, 1, 5),
                                   (20, 30, 35, 15), (2, 0, 0, 2), (5, 5, 5, 5), (1, 0, 0, 1)])
def test_fisher_exact_is_scipy(table: tuple[int, int, int, int]) -> None:
    a, b, c, d = table
    assert fisher_exact(a, b, c, d) == pytest.approx(stats.fisher_exact([[a, b], [c, d]]).pvalue, rel=1e-9)


def test_fisher_exact_on_every_small_table() -> None:
    for a, b, c, d in itertools.product(range(4), repeat=4):
        want = stats.fisher_exact([[a, b], [c, d]]).pvalue
        assert fisher_exact(a, b, c, d) == pytest.approx(want, rel=1e-9), (a, b, c, d)


def test_holm_is_statsmodels() -> None:
    p = [0.01, 0.04, 0.03, 0.5, 0.001, 0.04]
    assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]), rel=1e-12)


def test_quantile_is_numpy_linear() -> None:
    values = sorted([0.3, 0.1, 0.7, 0.2, 0.9, 0.5, 0.55])
    for q in (0.0, 0.025, 0.5, 0.975, 1.0):
        assert _quantile(values, q) == pytest.approx(float(np.quantile(values, q)))


def test_clustered_bootstrap_agrees_with_scipy_bootstrap_over_cases() -> None:
    rng = np.random.default_rng(7)
    # 40 cases of 1 to 4 paired runs each, differences in {-1, 0, 1}.
    diffs = [rng.choice([-1, 0, 0, 1], size=rng.integers(1, 5)) for _ in range(40)]
    sums, counts = np.array([d.sum() for d in diffs], float), np.array([len(d) for d in diffs], float)
    (ours,) = cluster_bootstrap([[(float(s), int(n))] for s, n in zip(sums, counts, strict=True)],
                                resamples=20000, seed=1)
    ref = stats.bootstrap((np.arange(40),), lambda i: sums[i].sum() / counts[i].sum(), vectorized=False,
                          method="percentile", n_resamples=20000, random_state=3).confidence_interval
    assert ours is not None
    assert ours[0] == pytest.approx(ref.low, abs=0.02) and ours[1] == pytest.approx(ref.high, abs=0.02)
    assert ours[0] < sums.sum() / counts.sum() < ours[1]
    # Seeded: the same intervals again; no values: no interval.
    assert cluster_bootstrap([[(float(s), int(n))] for s, n in zip(sums, counts, strict=True)],
                             resamples=20000, seed=1) == [ours]
    assert cluster_bootstrap([[(0.0, 0)]], 10, 0) == [None]


def test_beyond_the_bootstrap_limit_the_normal_interval_matches_scipys_bootstrap() -> None:
    rng = np.random.default_rng(11)
    n = BOOTSTRAP_CLUSTERS + 500
    counts = rng.integers(1, 4, size=n).astype(float)
    sums = np.array([rng.normal(0.1, 0.5, size=int(c)).sum() for c in counts])
    (ours,) = cluster_bootstrap([[(float(s), int(c))] for s, c in zip(sums, counts, strict=True)], 1000, 0)

    def ratio(i: np.ndarray, axis: int = -1) -> np.ndarray:
        return sums[i].sum(axis=axis) / counts[i].sum(axis=axis)  # type: ignore[no-any-return]

    ref = stats.bootstrap((np.arange(n),), ratio, method="percentile", n_resamples=4000,
                          random_state=5).confidence_interval
    assert ours is not None
    width = ref.high - ref.low
    assert ours[0] == pytest.approx(ref.low, abs=0.05 * width)
    assert ours[1] == pytest.approx(ref.high, abs=0.05 * width)


@pytest.mark.parametrize(("k", "n", "rate"),
                         [(5, 8, 0.3), (7, 7, 0.5), (0, 6, 0.5), (9, 12, 0.8), (1, 3, 0.2)])
def test_mixture_evidence_is_the_integral(k: int, n: int, rate: float) -> None:
    null = rate ** k * (1 - rate) ** (n - k)
    above = integrate.quad(lambda q: q ** k * (1 - q) ** (n - k), rate, 1)[0] / (1 - rate) / null
    below = integrate.quad(lambda q: q ** k * (1 - q) ** (n - k), 0, rate)[0] / rate / null
    # half "always passes" (never passes), half the uniform prior on that side of the rate
    point_above = rate ** -n if k == n else 0.0
    point_below = (1 - rate) ** -n if k == 0 else 0.0
    assert evidence_above(k, n, rate) == pytest.approx((point_above + above) / 2, rel=1e-7)
    assert evidence_below(k, n, rate) == pytest.approx((point_below + below) / 2, rel=1e-7)
    with pytest.raises(ValueError):
        evidence_above(k, n, 1.0)
