"""The normal, Student t, chi-square and beta quantiles and tails the estimators use.

Each is the scipy.special function that scipy.stats itself evaluates for that distribution
(``norm.ppf`` is ``ndtri``, ``t.ppf`` is ``stdtrit``, ``chi2.ppf`` is ``2 gammaincinv(df/2, p)``,
``chi2.sf`` is ``chdtrc``, ``beta.ppf`` is ``betaincinv``), called directly: importing
scipy.stats costs about a second at every start of `rrsite analyze` or `rrsite simulate`, which
need only these. tests/estimate/test_quantiles.py checks each against scipy.stats.
"""

from __future__ import annotations

from typing import Any

from scipy import special


def norm_ppf(q: Any) -> Any:
    """The standard normal's quantile (``scipy.stats.norm.ppf``)."""
    return special.ndtri(q)


def norm_cdf(x: Any) -> Any:
    """The standard normal's distribution function (``scipy.stats.norm.cdf``)."""
    return special.ndtr(x)


def norm_sf(x: Any) -> Any:
    """The standard normal's upper tail (``scipy.stats.norm.sf``)."""
    return special.ndtr(-x)


def t_ppf(q: Any, df: Any) -> Any:
    """Student's t quantile with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    return special.stdtrit(df, q)


def t_sf(x: Any, df: Any) -> Any:
    """Student's t upper tail (``scipy.stats.t.sf``)."""
    return special.stdtr(df, -x)


def chi2_ppf(p: Any, df: Any) -> Any:
    """The chi-square quantile (``scipy.stats.chi2.ppf``)."""
    return 2 * special.gammaincinv(df / 2, p)


def chi2_sf(x: Any, df: Any) -> Any:
    """The chi-square upper tail (``scipy.stats.chi2.sf``)."""
    return special.chdtrc(df, x)


def beta_ppf(q: Any, a: Any, b: Any) -> Any:
    """The beta distribution's quantile (``scipy.stats.beta.ppf``)."""
    return special.betaincinv(a, b, q)
