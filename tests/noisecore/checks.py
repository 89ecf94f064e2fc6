"""Checks every noise distribution must pass, shared by the per-module tests.

Each helper compares two of a distribution's own methods that must agree by definition
(pdf = d/dx cdf, ppf = cdf^-1, sf = 1 - cdf, logpdf = log pdf, samples ~ cdf). They catch
inconsistencies between the code paths, not a wrong law: the per-module tests compare values
with independent oracles (``oracles.py``) for that.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

# Significance level of every Kolmogorov-Smirnov test: with a fixed seed the outcome is
# deterministic; a correct sampler fails a given seed with probability KS_ALPHA.
KS_ALPHA = 1e-3


def assert_pdf_is_cdf_derivative(dist, x, *, step, rtol=1e-6):
    """pdf(x) = d/dx cdf(x) by central differences of width ``2 step``.

    Uses -d/dx sf for x > 0 so the tails keep their relative precision. ``x`` must stay more
    than ``step`` away from kinks and jumps of the density (0 for Laplace-like densities, the
    step edges of the Staircase).
    """
    x = np.asarray(x, dtype=float)
    lower = np.where(x > 0, -dist.sf(x - step), dist.cdf(x - step))
    upper = np.where(x > 0, -dist.sf(x + step), dist.cdf(x + step))
    numeric = (upper - lower) / (2 * step)
    np.testing.assert_allclose(numeric, dist.pdf(x), rtol=rtol, err_msg=f"pdf vs d/dx cdf of {dist!r}")


def assert_cdf_ppf_round_trip(dist, q, *, rtol=1e-9):
    """cdf(ppf(q)) = q (relative to min(q, 1 - q), through sf in the upper half) and ppf(cdf(x)) = x."""
    q = np.asarray(q, dtype=float)
    x = np.asarray(dist.ppf(q), dtype=float)
    upper = q > 0.5
    back = np.where(upper, dist.sf(x), dist.cdf(x))
    np.testing.assert_allclose(back, np.where(upper, 1 - q, q), rtol=rtol, err_msg=f"cdf(ppf(q)) of {dist!r}")
    again = np.asarray(dist.ppf(dist.cdf(x)), dtype=float)
    np.testing.assert_allclose(again, x, rtol=1e3 * rtol, atol=1e-12, err_msg=f"ppf(cdf(x)) of {dist!r}")


def assert_sf_is_one_minus_cdf(dist, x, *, atol=1e-14, rtol=1e-12):
    """sf = 1 - cdf, and symmetry about 0: sf(x) = cdf(-x), pdf(x) = pdf(-x), cdf(0) = 1/2."""
    x = np.asarray(x, dtype=float)
    np.testing.assert_allclose(dist.sf(x) + dist.cdf(x), 1.0, rtol=0, atol=atol, err_msg=f"sf + cdf of {dist!r}")
    np.testing.assert_allclose(dist.sf(x), dist.cdf(-x), rtol=rtol, atol=0, err_msg=f"sf(x) vs cdf(-x) of {dist!r}")
    np.testing.assert_allclose(dist.pdf(x), dist.pdf(-x), rtol=rtol, atol=0, err_msg=f"pdf(x) vs pdf(-x) of {dist!r}")
    assert abs(float(dist.cdf(0.0)) - 0.5) <= atol, f"cdf(0) = {float(dist.cdf(0.0))!r} for {dist!r}"


def assert_logpdf_is_log_pdf(dist, x, *, rtol=1e-12, atol=1e-12):
    """logpdf(x) = log(pdf(x)) wherever the pdf is a normal float."""
    x = np.asarray(x, dtype=float)
    pdf = np.asarray(dist.pdf(x), dtype=float)
    assert np.all(pdf > np.finfo(float).tiny), f"choose x where the pdf of {dist!r} does not underflow"
    np.testing.assert_allclose(dist.logpdf(x), np.log(pdf), rtol=rtol, atol=atol, err_msg=f"logpdf of {dist!r}")


def assert_follows(samples, cdf, *, alpha=KS_ALPHA, args=(), what="samples"):
    """One-sample Kolmogorov-Smirnov test of ``samples`` against ``cdf`` (a callable or a scipy
    distribution name with ``args``), failing when the p-value is below ``alpha``."""
    pvalue = stats.kstest(np.asarray(samples, dtype=float).ravel(), cdf, args=args).pvalue
    assert pvalue > alpha, f"KS test of {what}: p = {pvalue:.3g} <= alpha = {alpha:g}"
    return pvalue


def assert_samples_follow_cdf(dist, size, *, seed, alpha=KS_ALPHA):
    """``dist.sample(size, rng=seed)`` passes the KS test against ``dist.cdf``; returns the samples."""
    samples = np.asarray(dist.sample(size, rng=seed), dtype=float)
    assert samples.shape == (size,)
    assert_follows(samples, dist.cdf, alpha=alpha, what=f"{size} samples of {dist!r} (seed {seed})")
    return samples


def assert_consistent(dist, x, q, *, step, derivative_rtol=1e-6, ppf_rtol=1e-9, log_rtol=1e-12):
    """All the deterministic checks above on points ``x`` (away from kinks, see
    :func:`assert_pdf_is_cdf_derivative`) and probabilities ``q``."""
    x = np.asarray(x, dtype=float)
    assert_pdf_is_cdf_derivative(dist, x, step=step, rtol=derivative_rtol)
    assert_cdf_ppf_round_trip(dist, q, rtol=ppf_rtol)
    assert_sf_is_one_minus_cdf(dist, np.concatenate([x, [0.0]]))
    assert_logpdf_is_log_pdf(dist, x, rtol=log_rtol)


def stop_counts(stops, rounds):
    """How many runs stopped in round 0 (never), 1, ..., rounds."""
    return np.array([(np.asarray(stops) == n).sum() for n in range(rounds + 1)])


def assert_same_stopping_law(code_stops, paper_stops, rounds):
    """Chi-square test of homogeneity of two samples of stopping rounds (cells with any count)."""
    table = np.array([stop_counts(code_stops, rounds), stop_counts(paper_stops, rounds)])
    table = table[:, table.sum(axis=0) > 0]
    pvalue = stats.chi2_contingency(table).pvalue
    assert pvalue > 1e-3, f"stopping rounds differ: p = {pvalue:.3g}, counts {table.tolist()}"
    return table


def assert_follows_at(samples, dist, points, *, alpha=KS_ALPHA, what="samples"):
    """Kolmogorov-Smirnov test with the statistic taken over ``points`` only, for distributions
    whose cdf is too expensive for every sample in the fast tier (ShareSum: 5-40 ms a point).

    max_j |F_n(x_j) - F(x_j)| <= sup_x |F_n(x) - F(x)| for any points, so the KS null law gives a
    conservative p-value: a correct sampler still fails with probability <= alpha.
    """
    samples = np.sort(np.asarray(samples, dtype=float).ravel())
    points = np.asarray(points, dtype=float)
    empirical = np.searchsorted(samples, points, side="right") / samples.size
    statistic = float(np.max(np.abs(empirical - dist.cdf(points))))
    pvalue = float(stats.kstwo.sf(statistic, samples.size))
    assert pvalue > alpha, f"KS test of {what} at {points.size} points: p = {pvalue:.3g} <= alpha = {alpha:g}"
    return pvalue


def grid_privacy_loss(dist, d):
    """Dense-grid maximum of dist.logpdf(t) - dist.logpdf(t + d) and its argmax.

    Uses the code's own density: it checks the supremum search of ``privacy_loss`` against the
    same logpdf, not the density itself (``oracles.arete_privacy_loss`` does that).
    """
    # the density's sharp peak at 0 puts the maximum of the ratio within ~1e-6 of t = 0
    t = np.union1d(np.linspace(-d / 2, 4 + 2 * d, 20001), np.linspace(-1e-4, 1e-4, 20001))
    lp = dist.logpdf(np.concatenate([t, t + d]))
    ratio = lp[: len(t)] - lp[len(t) :]
    return float(ratio.max()), float(t[np.argmax(ratio)])
