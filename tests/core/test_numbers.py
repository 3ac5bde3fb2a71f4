"""Number designs (rrsite.core.numbers): moments, exact samplers and privacy against closed forms,
brute-force enumeration and simulation. Standard library only: this file also runs in Pyodide."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import pytest

from rrsite.core import DesignError, respond
from rrsite.core.numbers import (
    Additive,
    Duchi,
    Laplace,
    Mask,
    Mixture,
    MixtureUnknown,
    Multiplicative,
    Piecewise,
    bernoulli_exp,
    discrete_laplace,
    discrete_laplace_pmf,
    number_design_from_spec,
)

from .stats import chi_square_p_value

DRAWS = 40_000


def _moments(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = math.fsum(values) / n
    return mean, math.fsum((v - mean) ** 2 for v in values) / (n - 1)


def _check_mean_variance(values: list[float], mean: float, variance: float) -> None:
    """Sample mean within 5 standard errors; sample variance within 5% (plenty of draws)."""
    got_mean, got_var = _moments(values)
    se = math.sqrt(variance / len(values))
    assert abs(got_mean - mean) < 5 * se + 1e-12, (got_mean, mean, se)
    assert abs(got_var - variance) <= 0.05 * variance + 1e-12, (got_var, variance)


MASKS = [
    ({"normal": {"mean": 10, "sd": 3}}, False, 10.0, 9.0),
    ({"exponential": {"mean": 4}}, False, 4.0, 16.0),
    ({"uniform": {"min": 2, "max": 8}}, False, 5.0, 3.0),
    # whole numbers 0..30: variance ((n^2 - 1) / 12) with n = 31
    ({"uniform": {"min": 0, "max": 30}}, True, 15.0, (31 ** 2 - 1) / 12),
    ({"values": [0, 1, 5], "probabilities": [0.5, 0.3, 0.2]}, False, 1.3,
     0.5 * 1.3 ** 2 + 0.3 * 0.3 ** 2 + 0.2 * 3.7 ** 2),
]


@pytest.mark.parametrize(("spec", "integer", "mean", "variance"), MASKS)
def test_mask_moments_closed_form_and_simulation(
    spec: dict, integer: bool, mean: float, variance: float
) -> None:
    mask = Mask.from_spec(spec, integer=integer)
    assert mask.mean == pytest.approx(mean)
    assert mask.variance == pytest.approx(variance)
    rng = random.Random(7)
    _check_mean_variance([mask.sample(rng)[0] for _ in range(DRAWS)], mean, variance)


@pytest.mark.parametrize("bad", [
    {}, {"normal": {"mean": 1}}, {"normal": {"mean": 1, "sd": 0}}, {"gamma": {"shape": 1}},
    {"uniform": {"min": 3, "max": 1}}, {"values": [1, 2], "probabilities": [0.5, 0.6]},
    {"values": [1, 1]}, {"normal": {"mean": 1, "sd": 1}, "exponential": {"mean": 1}},
])
def test_mask_refuses_bad_specs(bad: dict) -> None:
    with pytest.raises(DesignError):
        Mask.from_spec(bad)


def test_bernoulli_exp_is_exact_in_distribution() -> None:
    rng = random.Random(3)
    for gamma in (Fraction(1, 3), Fraction(5, 2)):
        hits = sum(bernoulli_exp(gamma, rng) for _ in range(DRAWS))
        expected = math.exp(-float(gamma))
        assert chi_square_p_value([hits, DRAWS - hits], [expected, 1 - expected]) > 1e-4


@pytest.mark.parametrize("scale", [Fraction(5, 2), Fraction(3000) / Fraction(math.log(3))])
def test_discrete_laplace_matches_its_pmf(scale: Fraction) -> None:
    rng = random.Random(11)
    draws = [discrete_laplace(scale, rng) for _ in range(DRAWS)]
    width = int(3 * float(scale)) + 1
    if float(scale) > 100:  # bin wide scales in blocks of equal width
        block = int(float(scale) / 4)
        cells = list(range(-12, 12))
        observed = [0] * (len(cells) + 2)
        for k in draws:
            index = math.floor(k / block)
            observed[min(max(index + 12, -1), len(cells)) + 1] += 1
        probabilities = []
        total = 0.0
        for index in cells:
            mass = math.fsum(discrete_laplace_pmf(k, float(scale))
                             for k in range(index * block, (index + 1) * block))
            probabilities.append(mass)
            total += mass
        tail = (1 - total) / 2
        probabilities = [tail, *probabilities, tail]
    else:
        observed = [0] * (2 * width + 3)
        for k in draws:
            observed[min(max(k, -width - 1), width + 1) + width + 1] += 1
        inner = [discrete_laplace_pmf(k, float(scale)) for k in range(-width, width + 1)]
        tail = (1 - math.fsum(inner)) / 2
        probabilities = [tail, *inner, tail]
    assert chi_square_p_value(observed, probabilities) > 1e-4


def _designs() -> list:
    return [
        Mixture(0.7, {"normal": {"mean": 50, "sd": 20}}),
        Mixture(0.6, {"exponential": {"mean": 30}}, 0, 200),
        Mixture(0.5, {"uniform": {"min": 0, "max": 30}}, 0, 30, True),
        Mixture(0.8, {"values": [0, 10, 20], "probabilities": [0.2, 0.5, 0.3]}),
        Additive({"normal": {"mean": 0, "sd": 25}}),
        Additive({"uniform": {"min": -10, "max": 30}}, 0, 100),
        Multiplicative({"uniform": {"min": 0.5, "max": 1.5}}, 0.0, 0, 1000),
        Multiplicative({"exponential": {"mean": 2}}, 0.3, 1, 1000),
        Laplace(1.0, 0, 30, True),
        Laplace(2.0, -5, 7.5),
        Duchi(1.0, 0, 30, True),
        Duchi(3.0, 10, 20),
        Piecewise(1.0, 0, 30),
        Piecewise(4.0, -1, 1),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("design", _designs(), ids=lambda d: d.name)
def test_report_mean_and_variance_by_simulation(design) -> None:
    low = 0.0 if design.minimum is None else design.minimum
    high = 100.0 if design.maximum is None else design.maximum
    rng = random.Random(5)
    for y in (low, (low + high) / 2 if not design.integer else float(int((low + high) / 2)),
              high * 0.9 if not design.integer else float(int(high * 0.9))):
        reports = [design.randomize(y, rng).report for _ in range(DRAWS)]
        intercept, slope = design.linear()
        _check_mean_variance(reports, intercept + slope * y, design.report_variance(y))
        debiased = [design.debias(z) for z in reports]
        assert abs(_moments(debiased)[0] - y) < 5 * math.sqrt(
            design.report_variance(y) / DRAWS) / slope + 1e-9


@pytest.mark.slow
def test_laplace_report_distribution_is_discrete_laplace_on_the_grid() -> None:
    design = Laplace(1.0, 0, 30, True)
    assert design.step == 0.01 and design.steps_across == 3000
    rng = random.Random(2)
    y = 12.0
    block = 500  # grid steps per histogram cell
    cells = list(range(-10, 10))
    observed = [0] * (len(cells) + 2)
    for _ in range(DRAWS):
        k = round((design.randomize(y, rng).report - y) / design.step)
        observed[min(max(math.floor(k / block) + 10, -1), len(cells)) + 1] += 1
    scale = float(design.scale)
    probabilities = [math.fsum(discrete_laplace_pmf(k, scale)
                               for k in range(i * block, (i + 1) * block)) for i in cells]
    tail = (1 - math.fsum(probabilities)) / 2
    assert chi_square_p_value(observed, [tail, *probabilities, tail]) > 1e-4


def test_laplace_epsilon_by_enumeration() -> None:
    """The largest ratio of report probabilities between any two grid answers is e^epsilon."""
    design = Laplace(2.0, 0, 3, True)  # grid 0.001: 3000 steps
    scale = float(design.scale)
    worst = 0.0
    for k in range(-4000, 7000, 7):  # report positions; answers at 0 and 3000 are the extremes
        worst = max(worst, math.log(discrete_laplace_pmf(k, scale)
                                    / discrete_laplace_pmf(k - 3000, scale)))
    assert worst == pytest.approx(2.0, rel=1e-9)
    assert design.privacy().epsilon == pytest.approx(2.0, rel=1e-12)
    # noise variance: the closed form of the discrete Laplace variance vs the pmf summed
    alpha = math.exp(-1 / scale)
    assert design.noise_variance() == pytest.approx(
        design.step ** 2 * math.fsum(k * k * discrete_laplace_pmf(k, scale)
                                     for k in range(-60_000, 60_001)), rel=1e-9)
    assert design.noise_variance() == pytest.approx(
        design.step ** 2 * 2 * alpha / (1 - alpha) ** 2)
    # about the continuous Laplace mechanism's 2 (b - a)^2 / eps^2
    assert design.noise_variance() == pytest.approx(2 * 9 / 2.0 ** 2, rel=1e-3)


def test_duchi_probabilities_and_epsilon() -> None:
    design = Duchi(1.5, 0, 10)
    e = math.exp(1.5)
    assert design.chance_high(10) / design.chance_high(0) == pytest.approx(e)
    assert design.privacy().epsilon == pytest.approx(1.5)
    low, high = design.values()
    c = (e + 1) / (e - 1)
    assert (low, high) == pytest.approx((5 - 5 * c, 5 + 5 * c))
    rng = random.Random(9)
    reports = [design.randomize(7.0, rng).report for _ in range(DRAWS)]
    hits = sum(1 for z in reports if z == high)
    assert set(reports) <= {low, high}
    chance = design.chance_high(7.0)
    assert chi_square_p_value([hits, DRAWS - hits], [chance, 1 - chance]) > 1e-4
    assert design.impossible(3.0) is not None
    assert design.impossible(high) is None


def test_piecewise_density_epsilon_and_histogram() -> None:
    design = Piecewise(2.0, -1, 1)
    high, low = design.densities()
    assert math.log(high / low) == pytest.approx(2.0)
    # the density integrates to one: centre length C - 1, tails C + 1
    c = design.c
    assert high * (c - 1) + low * (c + 1) == pytest.approx(1.0)
    x = 0.3
    left = (c + 1) / 2 * x - (c - 1) / 2
    right = left + c - 1
    edges = [-c + i * (2 * c) / 40 for i in range(41)]

    def mass(a: float, b: float) -> float:
        inside = max(0.0, min(b, right) - max(a, left))
        return high * inside + low * ((b - a) - inside)

    probabilities = [mass(a, b) for a, b in zip(edges, edges[1:], strict=False)]
    rng = random.Random(4)
    observed = [0] * 40
    for _ in range(DRAWS):
        z = design.randomize(x, rng).report
        observed[min(int((z + c) / (2 * c) * 40), 39)] += 1
    assert chi_square_p_value(observed, probabilities) > 1e-4
    assert design.impossible(c * 1.01) is not None
    assert design.impossible(c * 0.99) is None


def _mixture_rows(design: Mixture) -> dict[float, dict[float, float]]:
    """P(report | truth) by enumeration over the grid (truth atom plus the mask's list)."""
    pmf = design.mask.pmf()
    assert design.minimum is not None and design.maximum is not None
    rows = {}
    for y in range(int(design.minimum), int(design.maximum) + 1):
        row = {z: (1 - design.p) * q for z, q in pmf.items()}
        row[float(y)] = row.get(float(y), 0.0) + design.p
        rows[float(y)] = row
    return rows


def _brute_epsilon(rows: dict[float, dict[float, float]]) -> float:
    reports = set().union(*rows.values())
    worst = 0.0
    for z in reports:
        column = [row.get(z, 0.0) for row in rows.values()]
        if max(column) > 0 and min(column) == 0:
            return math.inf
        worst = max(worst, math.log(max(column) / min(column)))
    return worst


def test_mixture_epsilon_uniform_days_matches_math_md() -> None:
    for p in (0.2, 0.5, 0.75):
        design = Mixture(p, {"uniform": {"min": 0, "max": 30}}, 0, 30, True)
        assert design.privacy().epsilon == pytest.approx(math.log(1 + 31 * p / (1 - p)))
        assert design.privacy().epsilon == pytest.approx(_brute_epsilon(_mixture_rows(design)))


def test_mixture_epsilon_list_by_enumeration() -> None:
    mask = {"values": [0, 1, 2, 3, 4, 5, 9], "probabilities": [0.3, 0.1, 0.1, 0.1, 0.1, 0.2, 0.1]}
    design = Mixture(0.4, mask, 0, 5, True)
    assert design.privacy().epsilon == pytest.approx(_brute_epsilon(_mixture_rows(design)))
    assert design.privacy().epsilon == pytest.approx(math.log(1 + 0.4 / (0.6 * 0.1)))
    # a grid value the mask never draws: no epsilon; delta is p (the truth's atom)
    gap = Mixture(0.4, {"values": [0, 1, 2, 4, 5]}, 0, 5, True)
    assert math.isinf(_brute_epsilon(_mixture_rows(gap)))
    assert math.isinf(gap.privacy().epsilon) and gap.privacy().delta == pytest.approx(0.4)
    assert "never draws 3" in gap.privacy().reasons[0]


def test_continuous_and_unbounded_designs_have_no_epsilon() -> None:
    for design in (Mixture(0.7, {"normal": {"mean": 5, "sd": 1}}, 0, 10, True),
                   Mixture(0.7, {"uniform": {"min": 0, "max": 10}}, 0, 10),
                   Additive({"normal": {"mean": 0, "sd": 5}}, 0, 10),
                   Multiplicative({"uniform": {"min": 0.5, "max": 1.5}}, 0, 0, 10),
                   MixtureUnknown((0.3, 0.7))):
        privacy = design.privacy()
        assert math.isinf(privacy.epsilon)
        assert privacy.reasons


def test_additive_list_delta_by_enumeration() -> None:
    scramble = {"values": [-2, 0, 2, 4], "probabilities": [0.1, 0.4, 0.3, 0.2]}
    design = Additive(scramble, 0, 6, True)
    pmf = design.scramble.pmf()
    rows = {y: {y + s: q for s, q in pmf.items()} for y in range(7)}
    delta = max(math.fsum(q for z, q in rows[y].items() if z not in rows[other])
                for y in rows for other in rows if other != y)
    assert design.privacy().delta == pytest.approx(delta)
    assert math.isinf(design.privacy().epsilon)


@pytest.mark.slow
def test_multiplicative_uniform_delta_closed_form_by_simulation() -> None:
    design = Multiplicative({"uniform": {"min": 0.5, "max": 1.5}}, 0.0, 10, 40)
    rng = random.Random(1)
    # P(report above 40 x 0.5 = the top answer's support start... ) : the top answer's reports
    # outside the bottom answer's range [5, 15]
    outside = sum(1 for _ in range(DRAWS) if design.randomize(40, rng).report > 15) / DRAWS
    bottom = sum(1 for _ in range(DRAWS) if design.randomize(10, rng).report < 20) / DRAWS
    assert design.privacy().delta == pytest.approx(max(outside, bottom), abs=0.01)


def test_impossible_reports() -> None:
    product = Multiplicative({"uniform": {"min": 0.5, "max": 2}}, 0.0, 0, 100)
    assert "negative" in product.impossible(-3.0)
    assert product.impossible(150.0) is None
    assert product.impossible(250.0) is not None
    sums = Additive({"uniform": {"min": -10, "max": 10}}, 0, 100)
    assert sums.impossible(-11.0) is not None and sums.impossible(105.0) is None
    days = Mixture(0.5, {"uniform": {"min": 0, "max": 30}}, 0, 30, True)
    assert days.impossible(12.5) is not None and days.impossible(12.0) is None
    assert days.impossible(float("nan")) is not None
    assert Laplace(1.0, 0, 30, True).impossible(12.005) is not None


@pytest.mark.slow
def test_mixture_unknown_groups_and_reports() -> None:
    design = MixtureUnknown((0.2, 0.8), 0.5)
    rng = random.Random(8)
    outcomes = [design.randomize(10.0, rng, innocuous=3.0) for _ in range(DRAWS)]
    for group, p in ((1, 0.2), (2, 0.8)):
        mine = [o for o in outcomes if o.group == group]
        truths = sum(1 for o in mine if o.report == 10.0)
        assert chi_square_p_value([truths, len(mine) - truths], [p, 1 - p]) > 1e-4
    with pytest.raises(DesignError):
        design.randomize(10.0, rng)
    with pytest.raises(DesignError):
        MixtureUnknown((0.5, 0.5))


def test_spec_round_trip_and_errors() -> None:
    for design in _designs():
        again = number_design_from_spec(json.loads(json.dumps(design.spec())))
        assert again == design
    with pytest.raises(DesignError, match="needs min and max"):
        number_design_from_spec({"name": "duchi", "epsilon": 1})
    with pytest.raises(DesignError, match="unknown parameter 'sd'"):
        number_design_from_spec({"name": "additive", "sd": 1})
    with pytest.raises(DesignError, match="positive"):
        Multiplicative({"normal": {"mean": 1, "sd": 0.2}})


def test_respond_sends_no_truth_and_refuses_bad_answers() -> None:
    design = Mixture(0.5, {"uniform": {"min": 0, "max": 30}}, 0, 30, True)
    question = {"id": "days", "type": "number", "design": design.spec()}
    result = respond(question, "17", rng=random.Random(1))
    assert set(result) == {"report", "drawn", "operation", "steps"}
    assert result["operation"] in ("truth", "mask")
    for bad in ("31", "-1", "2.5", "ten", ""):
        with pytest.raises(DesignError):
            respond(question, bad)
    added = Additive({"values": [100, 200]}, 0, 1000)
    result = respond({"id": "x", "type": "number", "design": added.spec()}, "40",
                     rng=random.Random(3))
    assert result["report"] == 40 + result["drawn"]


def test_gaussian_delta_by_numerical_integration() -> None:
    """delta = integral of max(0, f(z | 0) - e^eps f(z | D)) dz for two normals (midpoint rule)."""
    from rrsite.core.numbers import gaussian_delta

    sensitivity, sd, epsilon = 3.0, 2.0, 0.7

    def pdf(x: float, mean: float) -> float:
        return math.exp(-((x - mean) / sd) ** 2 / 2) / (sd * math.sqrt(2 * math.pi))

    step = 0.001
    total = math.fsum(max(0.0, pdf(x, 0) - math.exp(epsilon) * pdf(x, sensitivity)) * step
                      for x in (-20 + (i + 0.5) * step for i in range(int(43 / step))))
    assert gaussian_delta(sensitivity, sd, epsilon) == pytest.approx(total, rel=1e-5)
    design = Additive({"normal": {"mean": 0, "sd": 2}}, 0, 3)
    assert design.privacy().delta == pytest.approx(gaussian_delta(3, 2, 1.0))


def _as_decimal(value: float) -> Fraction:
    """The decimal a float's shortest form says (what the page shows and the body carries)."""
    return Fraction(repr(value))


@pytest.mark.parametrize("design", [
    Additive({"normal": {"mean": 0, "sd": 2000}}, 0, 100000),
    Additive({"exponential": {"mean": 50}}, 0, 40),
    Additive({"uniform": {"min": -5000, "max": 5000}}, 0, 50000),
    Multiplicative({"uniform": {"min": 0.5, "max": 1.5}}, 0.0, 0, 20000),
    Multiplicative({"exponential": {"mean": 1}}, 0.3, 0, 40),
    Mixture(0.5, {"normal": {"mean": 15, "sd": 5}}, 0, 30),
    Mixture(0.5, {"uniform": {"min": 0, "max": 40}}, 0, 40),
    Laplace(1.0, 0, 40),
], ids=lambda d: f"{d.name}-{d.maximum:g}")
def test_reports_are_short_decimals_whose_arithmetic_is_exact(design) -> None:
    """The page shows "answer + drawn = report" (or x, or "rounded to"): the report is a short
    decimal on the design's grid, the arithmetic holds exactly in decimals, and the collector
    accepts it. Without the grid a normal draw gave 1200 + -2613.3338958086983 =
    -1413.3338958086983 and a product 636.7786158028464, shown rounded to 4 places."""
    rng = random.Random(5)
    step = design.step if isinstance(design, Laplace) else design.report_step
    for answer in (0.0, 3.0, 7.25, 12.0, 1200.0, 1234.56789):
        if answer > design.maximum:
            continue
        for _ in range(300):
            out = design.randomize(answer, rng)
            report = _as_decimal(out.report)
            assert (report / Fraction(repr(step))).denominator == 1, (answer, out)
            sent = answer if out.rounded is None else out.rounded
            assert (out.rounded is None) == ((Fraction(repr(answer)) / Fraction(repr(step))
                                              ).denominator == 1), (answer, out)
            if out.operation == "add":
                assert report == _as_decimal(sent) + _as_decimal(out.drawn), out
            elif out.operation == "noise":
                assert report == _as_decimal(sent) + _as_decimal(out.drawn), out
            elif out.operation == "multiply":
                product = _as_decimal(sent) * _as_decimal(out.drawn)
                assert (out.product is None) == (product == report), out
                if out.product is not None:
                    assert _as_decimal(out.product) == product
                    assert abs(product - report) < Fraction(repr(step)), out
            elif out.operation == "truth":
                assert report == _as_decimal(sent)
            else:
                assert out.operation == "mask" and out.report == out.drawn
            assert design.impossible(out.report) is None, out


@pytest.mark.slow
def test_an_answer_off_the_grid_is_rounded_without_bias() -> None:
    """7.25 on a grid of whole numbers: 7 or 8, 8 a quarter of the time (the mean is kept)."""
    rng = random.Random(2)
    design = Additive({"values": [0]}, 0, 300000)  # a decimal question whose grid is 1
    assert design.report_step == 1.0
    reports = [design.randomize(7.25, rng).report for _ in range(DRAWS)]
    assert set(reports) == {7.0, 8.0}
    assert chi_square_p_value([reports.count(7.0), reports.count(8.0)], [0.75, 0.25]) > 1e-4


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "step"), [
    ({"normal": {"mean": 0.3, "sd": 0.4}}, 1.0),
    ({"normal": {"mean": 0.0, "sd": 2000.0}}, 1.0),
    ({"exponential": {"mean": 0.7}}, 1.0),
    ({"exponential": {"mean": 0.05}}, 1.0),
    ({"uniform": {"min": 0.5, "max": 1.5}}, 0.3),
    ({"uniform": {"min": -3.2, "max": 7.9}}, 1.0),
    ({"values": [0.5, 2.5]}, 1.0),
])
def test_rounding_variance_by_simulation(spec: dict, step: float) -> None:
    """step^2 E[f (1 - f)] of the draw's fractional grid position, against 200,000 draws."""
    mask = Mask.from_spec(spec)
    rng = random.Random(11)
    if mask.discrete:
        assert mask.rounding_variance(step) == 0.0  # a list is sent as it is, not rounded
        return
    terms = []
    for _ in range(200_000):
        value, _step = mask.sample(rng)
        f = value / step - math.floor(value / step)
        terms.append(f * (1 - f))
    mean, variance = _moments(terms)
    expected = mask.rounding_variance(step) / step ** 2
    assert abs(mean - expected) < 5 * math.sqrt(variance / len(terms)), (mean, expected)


@pytest.mark.slow
@pytest.mark.parametrize("design", [
    Additive({"normal": {"mean": 0.3, "sd": 0.8}}, 0, 30, True),
    Additive({"exponential": {"mean": 0.6}}, 0, 30, True),
    Mixture(0.5, {"normal": {"mean": 10, "sd": 0.7}}, 0, 30, True),
], ids=lambda d: f"{d.name}-{d.params()}")
def test_report_variance_counts_the_rounding_to_whole_numbers(design) -> None:
    """A continuous draw on a question of whole numbers is sent rounded to one: Var(report | y)
    includes what the rounding adds (a quarter to a third of the draw's own variance here),
    checked within 3% against 40,000 reports at each answer."""
    rng = random.Random(8)
    for y in (0.0, 7.0, 30.0):
        reports = [design.randomize(y, rng).report for _ in range(DRAWS)]
        assert all(r == int(r) for r in reports)
        got_mean, got_var = _moments(reports)
        intercept, slope = design.linear()
        assert abs(got_mean - intercept - slope * y) < 5 * math.sqrt(got_var / DRAWS)
        assert abs(got_var - design.report_variance(y)) <= 0.03 * design.report_variance(y), (
            y, got_var, design.report_variance(y))


@pytest.mark.slow
def test_multiplicative_rounding_adds_at_most_a_quarter_step_squared() -> None:
    """The product's rounding to the report grid is left out of Var(report | y): the variance
    of the reports lies between the formula and the formula plus (1 - p) step^2 / 4."""
    design = Multiplicative({"uniform": {"min": 0.5, "max": 1.5}}, 0.2, 0, 30, True)
    rng = random.Random(9)
    for y in (1.0, 3.0, 12.0):
        reports = [design.randomize(y, rng).report for _ in range(DRAWS)]
        _, got_var = _moments(reports)
        formula = design.report_variance(y)
        slack = 4 * got_var * math.sqrt(2 / DRAWS)
        assert formula - slack <= got_var <= formula + 0.8 * 0.25 + slack, (y, got_var, formula)
