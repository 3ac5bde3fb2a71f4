"""Rendering ``rrsite analyze --cor``: Pearson correlations of randomized and direct variables."""

from __future__ import annotations

import json

from ..analyze.correlation import CorResult
from .tables import Section, Table, render_sections


def _pairs(result: CorResult) -> list[list[str]]:
    f = result.fit
    pct = f"{f.confidence:.0%}"
    out = [["pair", "r", "se (bootstrap)", f"{pct} low", f"{pct} high"]]
    for i in range(len(f.names)):
        for k in range(i + 1, len(f.names)):
            out.append([f"{f.names[i]} ~ {f.names[k]}", f"{f.r[i, k]:.4f}", f"{f.se[i, k]:.4f}",
                        f"{f.ci_low[i, k]:.4f}", f"{f.ci_high[i, k]:.4f}"])
    return out


def _notes(result: CorResult) -> list[str]:
    f = result.fit
    left = ", ".join(f"{n:,} missing {q}" for q, n in result.left_out.items() if n) or "none"
    lines = [f"N = {f.n:,} complete rows of {result.rows_accepted:,} accepted (left out: {left})",
             "estimator: RRreg's RRcor (Fox & Tracy 1984); SEs: nonparametric bootstrap, "
             f"{f.replicates} replicates; intervals: "
             + ("Fieller's, from the bootstrap covariance"
                if f.interval_method.startswith("Fieller") else "bootstrap percentile")]
    lines += [f"prevalence of {q} (moment estimate): {p:.4f}" for q, p in f.prevalence.items()]
    lines += [f"mean of the true numbers of {q} (moment estimate): {m:.6g}"
              for q, m in f.means.items()]
    if f.means:
        lines.append("randomized numbers: Var(X) from each row's unbiased estimate of X^2, not "
                     "RRcor's pi (1 - pi)")
    for q, t in f.nuisance.items():
        lines.append(f"{t['name']} of {q} (re-estimated in every replicate): {t['estimate']:.4f} "
                     f"(bootstrap SE {t['se']:.4f}, {f.confidence:.0%} interval "
                     f"{t['ci_low']:.4f} to {t['ci_high']:.4f}); two-group pairs: RRcor's average "
                     "over the subgroups, weighted with the pair's own variables")
    return lines + f.messages


def render(result: CorResult, fmt: str) -> str:
    """The correlations in one of analyze's formats."""
    if fmt == "json":
        return json.dumps({"correlations": result.to_dict()}, indent=2) + "\n"
    section = Section("correlations (RRcor)", "", [Table(_pairs(result))], _notes(result))
    return render_sections([section], fmt, "Correlations")
