"""Coverage of the uncertainty shown with the estimated distribution of a randomized number.

For every design but mixture-unknown, surveys of skewed truths are drawn afresh each time and put
through rrsite.estimate.deconvolution. Printed per design: how often the 95% band of the
cumulative shares holds every one of them at once (simultaneous coverage) and its mean width at
the cells' upper ends; for a mixture also the exact intervals of the single shares, their
pointwise coverage averaged over the cells and the lowest cell's. With --bootstrap (slow), the
baseline: the pointwise coverage of the percentile-bootstrap band of the single shares that
rrsite drew before (EM on the same cells, 200 multinomial resamples of the respondents).

Truths: incomes with 30% zeros, else log-normal (mu 8, sigma 1.2), clipped to [0, 100000] (cells:
exactly 0, 30 equal cells, exactly 100000), and days of use in the last 30 with 70% zeros, else
Poisson(8), clipped to 0..30 (a cell per day). A cell's true share is computed exactly from these
laws.

    .venv/bin/python benchmarks/coverage_deconvolution.py [--reps 400] [--n 2000] [--bootstrap]
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ProcessPoolExecutor

import coverage_numbers  # benchmarks/, beside this script
import numpy as np
from coverage_numbers import DAYS, INCOME
from scipy import stats
from study import study_parser  # benchmarks/, beside this script

from rrsite.core.numbers import number_design_from_spec
from rrsite.estimate.deconvolution import cells, deconvolve, design_matrix, report_bins
from rrsite.estimate.numbers import simulate_reports

# the designs of the mean's coverage benchmark, but mixture-unknown (its innocuous answers have
# no known law, so it has no distribution estimate)
DESIGNS: dict[str, list[dict]] = {
    kind: [spec for spec in specs if spec["name"] != "mixture-unknown"]
    for kind, specs in coverage_numbers.DESIGNS.items()
}
INCOME_ZEROS, DAY_ZEROS = 0.3, 0.7
LOGNORMAL = stats.lognorm(s=1.2, scale=float(np.exp(8.0)))


def draw(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    """True numbers of ``n`` respondents."""
    if kind == "income":
        values = np.minimum(rng.lognormal(8.0, 1.2, n), 100000.0)
        return np.where(rng.random(n) < INCOME_ZEROS, 0.0, values)
    values = np.minimum(rng.poisson(8.0, n), 30)
    return np.where(rng.random(n) < DAY_ZEROS, 0, values).astype(np.float64)


def true_shares(kind: str, lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """Each cell's share under the truth's law (an edge counts in the first cell holding it)."""
    if kind == "days":
        pmf = (1 - DAY_ZEROS) * stats.poisson.pmf(lows, 8.0)
        pmf[-1] += (1 - DAY_ZEROS) * stats.poisson.sf(30, 8.0)
        pmf[0] += DAY_ZEROS
        return np.asarray(pmf)
    shares = []
    for low, high in zip(lows, highs, strict=True):
        if low == high == 0:
            shares.append(INCOME_ZEROS)
        elif low == high:  # exactly 100000: every income at or above it
            shares.append((1 - INCOME_ZEROS) * LOGNORMAL.sf(high))
        else:  # (low, high]: the log-normal has no atoms
            shares.append((1 - INCOME_ZEROS) * (LOGNORMAL.cdf(high) - LOGNORMAL.cdf(low)))
    return np.array(shares)


def bootstrap_band(design: object, reports: np.ndarray, replicates: int = 200) -> np.ndarray:
    """The baseline: EM on the same cells and bins, 2.5% and 97.5% percentiles of each share
    over ``replicates`` multinomial resamples of the respondents (warm-started EM)."""
    lows, highs = cells(design, reports)
    edges, counts = report_bins(reports, design, lows, highs)
    matrix = design_matrix(design, lows, highs, edges)

    def em(weights: np.ndarray, counts: np.ndarray, iterations: int) -> np.ndarray:
        for _ in range(iterations):
            mix = np.maximum(weights @ matrix, 1e-300)
            weights = weights * (matrix @ (counts / mix)) / counts.sum()
        return weights

    k = len(lows)
    fitted = em(np.full(k, 1.0 / k), counts, 500)
    rng = np.random.default_rng(0)
    total = int(counts.sum())
    samples = [em(fitted, rng.multinomial(total, counts / total).astype(float), 200)
               for _ in range(replicates)]
    return np.percentile(np.array(samples), [2.5, 97.5], axis=0)


def run(job: tuple[str, dict, int, int, int, bool]) -> dict:
    """Coverage figures of one design over ``reps`` surveys."""
    kind, spec, n, reps, seed, baseline = job
    design = number_design_from_spec({**spec, **(INCOME if kind == "income" else DAYS)})
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    truth = cumulative = hits = boot = None
    together, width, booted = 0, 0.0, 0
    for _ in range(reps):
        reports, _groups = simulate_reports(rng, design, draw(rng, kind, n))
        found = deconvolve([(design, reports)])
        if truth is None:
            truth = true_shares(kind, np.array(found.lows), np.array(found.highs))
            cumulative = np.cumsum(truth)
            hits = np.zeros(len(truth))
            boot = np.zeros(len(truth))
        low, high = np.array(found.cumulative_low), np.array(found.cumulative_high)
        together += bool(np.all((low <= cumulative + 1e-9) & (cumulative <= high + 1e-9)))
        width += float(np.mean(high - low))
        if found.ci_low is not None and found.ci_high is not None:
            hits += (np.array(found.ci_low) <= truth + 1e-12) & (
                truth <= np.array(found.ci_high) + 1e-12)
        if baseline and found.probabilities is not None:
            band = bootstrap_band(design, reports)
            boot += (band[0] <= truth + 1e-12) & (truth <= band[1] + 1e-12)
            booted += 1
    assert truth is not None and hits is not None and boot is not None
    return {"kind": kind, "name": spec["name"], "truth": truth, "together": together / reps,
            "width": width / reps, "exact": hits / reps if hits.any() else None,
            "bootstrap": boot / booted if booted else None,
            "seconds": (time.perf_counter() - started) / reps}


def main(argv: list[str] | None = None) -> int:
    parser = study_parser(__doc__, reps=400, seed=5)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--bootstrap", action="store_true",
                        help="also the baseline: percentile-bootstrap bands (slow)")
    args = parser.parse_args(argv)
    jobs = [(kind, spec, args.n, args.reps, args.seed + 100 * i + j, args.bootstrap)
            for i, kind in enumerate(DESIGNS) for j, spec in enumerate(DESIGNS[kind])]
    print(f"95% intervals over {args.reps} surveys of {args.n} respondents per design; Monte "
          f"Carlo SE of a 95% coverage: {100 * (0.95 * 0.05 / args.reps) ** 0.5:.1f} points")
    print(f"{'truth':<7} {'design':<15} {'band: all held':>14} {'mean width':>10}   "
          f"{'shares, exact: mean, lowest (its share)':<40}{'bootstrap: mean, lowest':>24}"
          "  s/survey")
    with ProcessPoolExecutor(args.workers) as pool:
        for row in pool.map(run, jobs):
            exact = row["exact"]
            shares = "" if exact is None else (
                f"{100 * exact.mean():.1f}, {100 * exact.min():.1f} "
                f"({row['truth'][int(np.argmin(exact))]:.4f})")
            boot = row["bootstrap"]
            baseline = "" if boot is None else f"{100 * boot.mean():.1f}, {100 * boot.min():.1f}"
            print(f"{row['kind']:<7} {row['name']:<15} {100 * row['together']:>14.1f} "
                  f"{row['width']:>10.3f}   {shares:<40}{baseline:>24}  {row['seconds']:.2f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
