"""The coverage script's vectorised likelihood-ratio check agrees with fit's profile intervals."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from rrsite.estimate.models import Design
from rrsite.estimate.univariate import Part, fit

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "coverage_estimate.py"


def load_script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("coverage_estimate", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Replay:
    """Hands the script the same simulated counts that the test gives fit."""

    def __init__(self, design: Design, theta: np.ndarray, counts: dict[int, np.ndarray]) -> None:
        self.design, self.theta, self.counts = design, theta, counts

    def multinomial(self, n: int, probabilities: np.ndarray, size: int) -> np.ndarray:
        for group, counts in self.counts.items():
            if np.allclose(probabilities, self.design.report_probabilities(self.theta, group)):
                return counts
        raise AssertionError("unexpected probabilities")


def test_vectorised_coverage_equals_fit_intervals() -> None:
    script = load_script()
    rng = np.random.default_rng(2)
    for design, theta, n in ((Design("SLD", [0.3, 0.7]), np.array([0.05, 0.8]), 100),
                             (Design("CDM", [0.3, 0.7]), np.array([0.2, 0.7]), 60),
                             (Design("Kuk", [0.7, 0.3], 3), np.array([0.2]), 80)):
        reps = 25
        counts = {g: rng.multinomial(n, design.report_probabilities(theta, g), size=reps)
                  for g in design.groups}
        covered = 0
        for i in range(reps):
            parts = [Part(design, g, tuple(int(x) for x in counts[g][i])) for g in design.groups]
            low, high = fit(parts).intervals["pi"]
            covered += low - 1e-7 <= theta[0] <= high + 1e-7
        replay = Replay(design, theta, {g: c.astype(float) for g, c in counts.items()})
        assert script.simulated_coverage(design, theta, n, reps, replay) == covered / reps
