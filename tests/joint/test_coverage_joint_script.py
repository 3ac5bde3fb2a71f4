"""benchmarks/coverage_joint.py's predictor figures agree with the fits it makes.

The script's profile and Wald coverage, bias and spread are recomputed here from the fits it
made (recorded by a wrapper around fit_predictors): the Wald interval from scipy's normal quantile,
the profile interval from the fit's own ends, and the bias in Monte-Carlo standard errors from
the recorded estimates.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "coverage_joint.py"


def load_script() -> Any:
    spec = importlib.util.spec_from_file_location("coverage_joint", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("kind", ["linear", "logistic"])
def test_predictor_figures_are_those_of_the_fits(kind: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    script = load_script()
    fits = []
    real = script.fit_predictors

    def recording(*args: Any, **kwargs: Any) -> Any:
        fit = real(*args, **kwargs)
        fits.append(fit)
        return fit

    monkeypatch.setattr(script, "fit_predictors", recording)
    reps = 12
    # a small sample, so that some intervals miss and the two intervals differ somewhere
    figures = script.predictor_coverage(np.random.default_rng(5), 150, reps, kind)
    assert len(fits) == reps
    assert figures["profile"] < 1  # with this seed, some intervals miss
    z = stats.norm.ppf(0.975)
    estimates = np.array([f.beta[1] for f in fits])
    ses = np.array([f.se[1] for f in fits])
    lows = np.array([f.profile_low[1] for f in fits])
    highs = np.array([f.profile_high[1] for f in fits])
    assert figures["wald"] == np.mean((estimates - z * ses <= 1.0) & (1.0 <= estimates + z * ses))
    assert figures["profile"] == np.mean((lows <= 1.0) & (1.0 <= highs))
    assert figures["sd"] == pytest.approx(np.std(estimates, ddof=1), rel=1e-12)
    assert figures["mean_se"] == pytest.approx(ses.mean(), rel=1e-12)
    assert figures["bias_mc"] == pytest.approx(
        (estimates.mean() - 1.0) / (np.std(estimates, ddof=1) / np.sqrt(reps)), rel=1e-9)
