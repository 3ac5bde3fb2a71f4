"""Coverage of rrsite.estimate's default 95% interval for the prevalence of every RRreg design.

Cells: N in {100, 500, 2000} per group, true prevalence in {0.02, 0.2, 0.5}. For one-group designs
with binary reports (exact Clopper-Pearson, mapped) the coverage is computed exactly by summing the
binomial distribution; for the others (profile likelihood) it is simulated: the profile interval
covers the truth exactly when the likelihood-ratio statistic at the truth is <= the critical value
there (chi2_1(0.95); for the two-group designs, method "profile-bc", the boundary-calibrated value
of profile.boundary_critical at the constrained fit), and that statistic is computed for all
simulated surveys at once (vectorised golden-section searches along the edges of the parameter
space, on which the report probabilities are linear).

    .venv/bin/python benchmarks/coverage_estimate.py [--reps 4000] [--seed 9]
    .venv/bin/python benchmarks/coverage_estimate.py --model SLD --n 100 --rate 0.02 \
        [--nuisance 1] --reps 20000     # one design's cells only
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy import stats

from rrsite.estimate.models import Design
from rrsite.estimate.profile import boundary_calibrated, boundary_ceiling, boundary_critical
from rrsite.estimate.univariate import Part, _exact_interval

CONFIDENCE = 0.95
CRITICAL = float(stats.chi2.ppf(CONFIDENCE, 1))
#: The boundary-calibrated critical value never exceeds this.
CEILING = boundary_ceiling(CONFIDENCE)
NS = (100, 500, 2000)
RATES = (0.02, 0.2, 0.5)
#: Every design, with a typical p and the true nuisance used in the simulation.
DESIGNS: list[tuple[Design, float | None]] = [
    (Design("Warner", 0.75), None),
    (Design("UQTknown", [0.7, 0.3]), None),
    (Design("Mangat", 0.7), None),
    (Design("Crosswise", 0.25), None),
    (Design("Triangular", 0.3), None),
    (Design("FR", [0.2, 0.2]), None),
    (Design("Kuk", [0.7, 0.3], 1), None),
    (Design("Kuk", [0.7, 0.3], 3), None),
    (Design("UQTunknown", [0.75, 0.25]), 0.4),
    (Design("SLD", [0.3, 0.7]), 0.8),
    (Design("CDM", [0.3, 0.7]), 0.1),
    (Design("CDMsym", [0.3, 0.1, 0.6, 0.1]), 0.1),
]


def true_theta(design: Design, rate: float, nuisance: float | None) -> np.ndarray:
    if design.model in ("CDM", "CDMsym"):
        gamma = nuisance or 0.0
        return np.array([rate, 1.0 - rate - gamma])
    if nuisance is not None:
        return np.array([rate, nuisance])
    return np.array([rate])


def exact_coverage(design: Design, rate: float, n: int) -> float:
    """Sum of P(y) over the y whose mapped Clopper-Pearson interval covers the rate."""
    probability = float(design.report_probabilities([rate])[1])
    total = 0.0
    for y in range(n + 1):
        low, high = _exact_interval(Part(design, 1, (n - y, y)), CONFIDENCE)
        if low - 1e-12 <= rate <= high + 1e-12:
            total += float(stats.binom.pmf(y, n, probability))
    return total


def _loglik_along(
    design: Design, counts: dict[int, np.ndarray], start: np.ndarray, end: np.ndarray,
    s: np.ndarray,
) -> np.ndarray:
    """Log-likelihood at theta = start + s (end - start), for every survey (s has shape (R,))."""
    total = np.zeros(s.shape)
    for group, y in counts.items():
        p0 = design.pw(group, start) @ design.state_shares(start)
        p1 = design.pw(group, end) @ design.state_shares(end)
        # report probabilities are linear along the edges used here
        probs = p0[None, :] + s[:, None] * (p1 - p0)[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(y > 0, y * np.log(np.maximum(probs, 1e-300)), 0.0)
        total += terms.sum(axis=1)
    return total


def _max_along(design: Design, counts: dict[int, np.ndarray], start: np.ndarray,
               end: np.ndarray, reps: int) -> np.ndarray:
    """Vectorised golden-section maximisation over s in [0, 1] (concave), ends included."""
    return _argmax_along(design, counts, start, end, reps)[1]


def _argmax_along(design: Design, counts: dict[int, np.ndarray], start: np.ndarray,
                  end: np.ndarray, reps: int) -> tuple[np.ndarray, np.ndarray]:
    """The maximising s in [0, 1] of every survey and the maximum."""
    low, high = np.zeros(reps), np.ones(reps)
    ratio = (np.sqrt(5) - 1) / 2
    for _ in range(90):
        a = high - ratio * (high - low)
        b = low + ratio * (high - low)
        fa = _loglik_along(design, counts, start, end, a)
        fb = _loglik_along(design, counts, start, end, b)
        better_a = fa >= fb
        high = np.where(better_a, b, high)
        low = np.where(better_a, low, a)
    candidates = np.array([(low + high) / 2, np.zeros(reps), np.ones(reps)])
    values = np.array([_loglik_along(design, counts, start, end, s) for s in candidates])
    best = values.argmax(axis=0)
    columns = np.arange(reps)
    return candidates[best, columns], values[best, columns]


def edges(design: Design) -> list[tuple[np.ndarray, np.ndarray]]:
    if len(design.parameters) == 1:
        return [(np.array([0.0]), np.array([1.0]))]
    if design.model in ("CDM", "CDMsym"):
        corners = [np.array([0.0, 0.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    else:
        corners = [np.array(v) for v in ([0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0])]
    return [(corners[i], corners[(i + 1) % len(corners)]) for i in range(len(corners))]


def simulated_coverage(design: Design, theta: np.ndarray, n: int, reps: int,
                       rng: np.random.Generator) -> float:
    counts = {
        g: rng.multinomial(n, design.report_probabilities(theta, g), size=reps).astype(float)
        for g in design.groups
    }
    statistic, critical = statistics(design, theta, n, counts)
    return float(np.mean(statistic <= critical + 1e-9))


def statistics(design: Design, theta: np.ndarray, n: int,
               counts: dict[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per survey (rows of counts[group]): 2 x the profile log-likelihood ratio at the true
    prevalence and the critical value of the interval there (it covers iff statistic <= it)."""
    reps = len(counts[design.groups[0]])
    # the maximum over the parameter space: the saturated maximum where the moment estimate is
    # admissible (saturated models), else the best edge; for Kuk m > 1 the 1-D search
    candidates = [_max_along(design, counts, a, b, reps) for a, b in edges(design)]
    ll_max = np.maximum.reduce(candidates)
    if len(design.parameters) == 2:
        saturated = sum(
            np.where(y > 0, y * np.log(np.maximum(y, 1) / n), 0.0).sum(axis=1)
            for y in counts.values()
        )
        y1 = counts[1][:, 1] / n
        y2 = counts[2][:, 1] / n
        admissible = np.array([
            design.in_bounds(moment_theta(design, a, b)) for a, b in zip(y1, y2, strict=True)
        ])
        ll_max = np.where(admissible, saturated, ll_max)
    critical = np.full(reps, CRITICAL)
    # profile at the true prevalence: maximise over the nuisance with pi fixed
    if len(design.parameters) == 1:
        ll_truth = _loglik_along(design, counts, theta, theta, np.zeros(reps))
        return 2 * (ll_max - ll_truth), critical
    rate = theta[0]
    top = 1.0 - rate if design.model in ("CDM", "CDMsym") else 1.0
    s, ll_truth = _argmax_along(design, counts, np.array([rate, 0.0]), np.array([rate, top]),
                                reps)
    statistic = 2 * (ll_max - ll_truth)
    parts = [Part(design, g, (n,) + (0,) * (len(design.reports) - 1)) for g in design.groups]
    if boundary_calibrated(parts, "pi"):
        # the boundary-calibrated critical value at the constrained fit (pi = rate, its
        # nuisance), needed only where the statistic lies between chi2_1 and the ceiling
        band = (statistic > CRITICAL + 1e-9) & (statistic <= CEILING)
        for i in np.flatnonzero(band):
            critical[i] = boundary_critical(parts, np.array([rate, s[i] * top]), CONFIDENCE)
    return statistic, critical


def moment_theta(design: Design, lam1: float, lam2: float) -> np.ndarray:
    """Solve the two groups' "1" rates for theta (linear in (pi, nuisance * [pi for SLD]))."""
    base = [design.report_probabilities(np.array([0.0, 0.0]), g)[1] for g in (1, 2)]
    if design.model == "SLD":
        # lambda_g = (1 - pi)(1 - p_g) + u with u = pi t: linear in (pi, u)
        p = design.p
        matrix = np.array([[-(1 - p[0]), 1.0], [-(1 - p[1]), 1.0]])
        pi, u = np.linalg.solve(matrix, [lam1 - (1 - p[0]), lam2 - (1 - p[1])])
        return np.array([pi, u / pi if pi > 0 else 0.0])
    columns = []
    for unit in (np.array([1.0, 0.0]), np.array([0.0, 1.0])):
        columns.append([design.report_probabilities(unit, g)[1] - base[g - 1] for g in (1, 2)])
    solved = np.linalg.solve(np.array(columns).T, [lam1 - base[0], lam2 - base[1]])
    return np.asarray(solved, dtype=float)


def main(argv: list[str] | None = None) -> int:
    # benchmarks/, beside this script; imported here, as tests load this module by its path
    from study import study_parser

    parser = study_parser(__doc__, reps=4000, seed=9)
    parser.add_argument("--model", help="only the designs of this RRreg model (e.g. SLD)")
    parser.add_argument("--n", type=int, nargs="*", default=list(NS), help="N per group")
    parser.add_argument("--rate", type=float, nargs="*", default=list(RATES))
    parser.add_argument("--nuisance", type=float, help="the true nuisance instead of the table's")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    worst = 1.0
    cells = "".join(f"N={n:<5} pi={r:<6}" for n in args.n for r in args.rate)
    print(f"{'design':<40}{'method':<12}" + cells)
    for design, nuisance in DESIGNS:
        if args.model and design.model != args.model:
            continue
        if args.nuisance is not None and nuisance is not None:
            nuisance = args.nuisance
        exact = len(design.groups) == 1 and len(design.reports) == 2
        method = "exact" if exact else "profile"
        if boundary_calibrated([Part(design, 1, (1,) + (0,) * (len(design.reports) - 1))], "pi"):
            method = "profile-bc"
        label = f"{design.model}{design.p}"
        if design.model == "Kuk":
            label += f" m={design.kukrep}"
        if nuisance is not None:
            name = "gamma" if design.model in ("CDM", "CDMsym") else design.parameters[1]
            label += f" {name}={nuisance}"
        row = []
        for n in args.n:
            for rate in args.rate:
                theta = true_theta(design, rate, nuisance)
                if exact:
                    coverage = exact_coverage(design, rate, n)
                else:
                    coverage = simulated_coverage(design, theta, n, args.reps, rng)
                worst = min(worst, coverage)
                row.append(f"{coverage:<16.4f}")
        print(f"{label:<40}{method:<12}" + "".join(row))
    print(f"worst coverage {worst:.4f} (target >= 0.94); {args.reps} simulations per profile cell; "
          f"{time.perf_counter() - started:.1f} s")
    return 0 if worst >= 0.94 else 1


if __name__ == "__main__":
    sys.exit(main())
