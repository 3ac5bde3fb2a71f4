"""`rrsite simulate --truth QID=FAMILY:PARAMS`: a number question's true values drawn from a
distribution (with extra zeros, clipped to the range), checked against scipy's own quantities;
the randomized ones recovered by `rrsite analyze`; the margin of `--cor`; bad input exits 2."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

from rrsite.analyze import analyze
from rrsite.cli import main
from tests.surveytext import days_question, question, survey_text

SURVEY = survey_text(
    "numbers-truth", question("earned", "number", min=0, max=20000), days_question("drank"),
    days_question(randomize="mixture", p="1/2", mask="{uniform: {min: 0, max: 30}}"),
    title="Numbers with a truth", budget=4, language=None)


@pytest.fixture
def survey(tmp_path: Path) -> Path:
    path = tmp_path / "numbers.md"
    path.write_text(SURVEY, encoding="utf-8")
    return path


def _column(path: Path, name: str) -> np.ndarray:
    with open(path, newline="", encoding="utf-8") as handle:
        return np.array([float(row[name]) for row in csv.DictReader(handle) if row[name] != ""])


def test_a_direct_number_follows_the_clipped_lognormal(tmp_path: Path, survey: Path,
                                                       capsys) -> None:
    out = tmp_path / "sim.csv"
    n = 40_000
    assert main(["simulate", str(survey), "--respondents", str(n), "--seed", "3",
                 "--truth", "earned=lognormal:7.5,1.1", "-o", str(out)]) == 0
    earned = _column(out, "earned")
    # independent: the mean of min(LogNormal(7.5, 1.1), 20000) by numerical integration
    base = stats.lognorm(s=1.1, scale=math.exp(7.5))
    below = integrate.quad(lambda x: x * base.pdf(x), 0, 20000, limit=200)[0]
    mean = below + 20000 * base.sf(20000)
    second = integrate.quad(lambda x: x * x * base.pdf(x), 0, 20000, limit=200)[0] + \
        20000 ** 2 * base.sf(20000)
    sd = math.sqrt(second - mean ** 2)
    assert abs(earned.mean() - mean) < 4 * sd / math.sqrt(len(earned))
    assert earned.max() == 20000 and earned.min() > 0
    share_clipped = float(np.mean(earned == 20000))
    assert share_clipped == pytest.approx(base.sf(20000), abs=4 * math.sqrt(
        base.sf(20000) / len(earned)))
    # the distribution itself, below the clipping point (Kolmogorov-Smirnov)
    inside = earned[earned < 20000]
    cdf = base.cdf(20000)
    result = stats.kstest(inside, lambda x: base.cdf(x) / cdf)
    assert result.pvalue > 0.001
    err = capsys.readouterr().err
    printed = re.search(r"earned: true numbers lognormal\(7\.5, 1\.1\), clipped to 0\.\.20000: "
                        r"mean of the ([\d,]+) drawn ([\d,.]+); ([\d,]+) clipped", err)
    assert printed, err
    assert int(printed.group(1).replace(",", "")) == len(earned)
    assert float(printed.group(2).replace(",", "")) == pytest.approx(earned.mean(), rel=1e-5)
    assert int(printed.group(3).replace(",", "")) == int(np.sum(earned == 20000))


def test_zero_inflated_whole_numbers(tmp_path: Path, survey: Path) -> None:
    out = tmp_path / "sim.csv"
    n = 40_000
    assert main(["simulate", str(survey), "--respondents", str(n), "--seed", "4",
                 "--truth", "drank=poisson:6,zeros:0.6", "-o", str(out)]) == 0
    drank = _column(out, "drank")
    assert np.all(drank == np.round(drank))
    k = np.arange(31)
    pmf = 0.4 * stats.poisson.pmf(k, 6)
    pmf[-1] += 0.4 * stats.poisson.sf(30, 6)
    pmf[0] += 0.6
    observed = np.bincount(drank.astype(int), minlength=31)
    keep = pmf * len(drank) >= 5
    expected = np.append(pmf[keep], pmf[~keep].sum()) * len(drank)
    counts = np.append(observed[keep], observed[~keep].sum())
    assert stats.chisquare(counts, expected).pvalue > 0.001


def test_randomized_number_truth_is_what_analyze_recovers(tmp_path: Path, survey: Path,
                                                           capsys) -> None:
    """Over 40 simulated surveys the 95% interval holds the drawn mean about 95% of the time,
    and the estimates centre on the distribution's mean."""
    k = np.arange(31)
    pmf = 0.3 * stats.poisson.pmf(k, 8)
    pmf[-1] += 0.3 * stats.poisson.sf(30, 8)
    pmf[0] += 0.7
    truth_mean = float(k @ pmf)
    covered, estimates = 0, []
    for seed in range(40):
        out = tmp_path / f"sim{seed}.csv"
        capsys.readouterr()
        assert main(["simulate", str(survey), "--respondents", "1500", "--seed", str(seed),
                     "--truth", "days=poisson:8,zeros:0.7", "-o", str(out)]) == 0
        drawn = float(re.search(r"days: true numbers .*? drawn ([\d.]+)",
                                capsys.readouterr().err).group(1))
        result = next(r for r in analyze([out], survey=survey, progress=False).numbers
                      if r.id == "days").estimate
        assert result is not None
        covered += result.ci_low <= drawn <= result.ci_high
        estimates.append(result.mean)
    assert covered >= 34  # binomial(40, 0.95): P(fewer than 34) < 0.2%
    spread = np.std(estimates, ddof=1)
    assert abs(np.mean(estimates) - truth_mean) < 4 * spread / math.sqrt(len(estimates))


def test_cor_takes_the_truth_as_the_margin(tmp_path: Path, survey: Path) -> None:
    out = tmp_path / "sim.csv"
    assert main(["simulate", str(survey), "--respondents", "30000", "--seed", "5",
                 "--truth", "earned=exponential:3000", "--cor", "earned,drank=0.6",
                 "-o", str(out)]) == 0
    earned = _column(out, "earned")
    base = stats.expon(scale=3000)
    inside = earned[earned < 20000]
    assert stats.kstest(inside, lambda x: base.cdf(x) / base.cdf(20000)).pvalue > 0.001
    drank = _column(out, "drank")  # no truth: uniform over 0..30 as before
    assert stats.chisquare(np.bincount(drank.astype(int), minlength=31)).pvalue > 0.001


@pytest.mark.parametrize(("truth", "message"), [
    ("days=3", "days is a number question: give its true values' distribution"),
    ("days=gamma:2,3", "one of normal:MEAN,SD"),
    ("days=poisson:8,3", "poisson takes 1 number: poisson:MEAN"),
    ("days=normal:8", "normal takes 2 numbers: normal:MEAN,SD"),
    ("days=normal:8,x", "sd must be a number, got 'x'"),
    ("days=lognormal:1,0", "sigma must be above 0, got 0"),
    ("days=exponential:-1", "the mean must be above 0, got -1"),
    ("days=uniform:5,2", "uniform max (2) must be above min (5)"),
    ("days=poisson:3,zeros:1", "the share of zeros must be in [0, 1), got 1"),
    ("days=poisson:3,zeros:inf", "the share of zeros must be a finite number"),
])
def test_bad_number_truths_exit_2(tmp_path: Path, survey: Path, capsys, truth: str,
                                  message: str) -> None:
    assert main(["simulate", str(survey), "--respondents", "10", "--truth", truth,
                 "-o", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert message in err and f"--truth {truth!r}" in err
    assert not (tmp_path / "x.csv").exists()


def test_a_number_truth_given_twice(tmp_path: Path, survey: Path, capsys) -> None:
    assert main(["simulate", str(survey), "--respondents", "10", "--truth", "days=poisson:3",
                 "--truth", "days=poisson:4", "-o", str(tmp_path / "x.csv")]) == 2
    assert "days is given twice" in capsys.readouterr().err


def test_a_number_truth_and_a_predictor_for_one_question(tmp_path: Path, survey: Path,
                                                         capsys) -> None:
    text = survey.read_text(encoding="utf-8") + """
## Did you drive after drinking?

```question
id: drove
type: yes-no
randomize: forced-response
```
"""
    survey.write_text(text.replace("budget: 4", "budget: 6"), encoding="utf-8")
    assert main(["simulate", str(survey), "--respondents", "10", "--truth",
                 "earned=normal:3000,500", "--predictor", "earned ~ 2000 + 800*drove[yes]; sd=300",
                 "-o", str(tmp_path / "x.csv")]) == 2
    assert "'earned' is already simulated by another option" in capsys.readouterr().err
