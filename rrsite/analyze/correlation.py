"""`rrsite analyze --cor q1,q2,x`: Pearson correlations of randomized and direct variables.

from rrsite.analyze.correlation import correlate
result = correlate(["export.csv"], survey="surveys/doping.md", questions=["doped", "hours"])
result.fit.r, result.fit.se

The estimator is RRreg's RRcor (Fox & Tracy 1984), rrsite.estimate.correlation; each row uses its
own version's design (analyze.regression's reading of the outcome design: the report counted as
1, a = P(1 | no), b = P(1 | yes) - a). Variables: randomized yes-no questions under one-group
designs with two reports or a two-group design (unrelated-unknown, SLD, CDM, CDM-sym: its second
parameter estimated as RRuni does, its groups from ``<id>.group``; rrsite.estimate.correlation's
``rrcor_groups``), randomized numbers (every number design but duchi, whose two reports carry no
variance; not together with a two-group yes-no question), and directly asked yes-no (0/1) and
number questions. Rows missing any of the variables are left out and counted (complete cases, as
RRcor).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UsageError
from ..estimate.correlation import (
    CorFit,
    CorVariable,
    GroupedDesign,
    number_variable,
    rrcor,
    rrcor_groups,
)
from ..estimate.regression.logistic import NUISANCE_OF_MODEL
from ..exports.catalog import Catalog, exports_and_catalog
from ..exports.readers import parse_mapping
from ..exports.rejections import Rejections
from ..exports.rows import Rows, read_rows
from .joint import question_ids
from .regression.logistic import outcome_design
from .univariate import model_of


class CorrelationError(UsageError):
    """A correlation that cannot be estimated (bad variable list, unsupported design)."""


def parse_variables(text: str | Sequence[str]) -> list[str]:
    """``q1,q2[,x]`` -> ids; two or more, each once."""
    return question_ids(text, "--cor", CorrelationError)


def _check(catalog: Catalog, qid: str) -> None:
    found = catalog.questions_named(qid)
    if not found:
        raise CorrelationError(f"--cor: no question {qid!r} in {catalog.survey!r} "
                               f"(questions: {', '.join(catalog.question_ids())})")
    for _, question in found:
        if question.sensitive:
            if question.type == "number":
                number_design = question.number_design
                if number_design is not None and number_design.name == "duchi":
                    raise CorrelationError(
                        f"--cor: {qid!r} uses duchi, whose two reports carry the mean of the "
                        "numbers but not their variance: its correlations cannot be estimated")
                continue
            if question.type != "yes-no":
                raise CorrelationError(f"--cor: {qid!r} is a randomized {question.type} "
                                       "question; randomized variables must be yes-no or number")
            if question.two_group:
                design = model_of(question)
                if design is None or design.model not in NUISANCE_OF_MODEL:
                    raise CorrelationError(f"--cor: {qid!r} uses a two-group design without "
                                           "a second parameter --cor can estimate")
        elif question.type not in ("yes-no", "number"):
            raise CorrelationError(f"--cor: {qid!r} is a {question.type} question; direct "
                                   "variables must be yes-no or number questions")


def _variable(catalog: Catalog, rows: Rows, qid: str, used: np.ndarray) -> CorVariable:
    n = int(used.sum())
    z, a, b = np.zeros(n), np.zeros(n), np.ones(n)
    answers = [v for v, k in zip(rows.answers[qid], used.tolist(), strict=True) if k]
    versions = rows.version[used]
    randomized = False
    designs = {m: catalog.versions[m].question(qid) for m in sorted(set(versions.tolist()))}
    if any(q is not None and q.number_design is not None for q in designs.values()):
        return _number_variable(catalog, rows, qid, used, answers, versions)
    grouped: GroupedDesign | None = None
    one_group = False
    for m in sorted(set(versions.tolist())):
        question = catalog.versions[m].question(qid)
        assert question is not None
        here = versions == m
        values = [answers[i] for i in np.flatnonzero(here).tolist()]
        if question.type == "number":
            z[here] = [float(v) for v in values]  # type: ignore[arg-type]
            continue
        design = outcome_design(catalog, qid, m)
        z[here] = [float(str(v) == design.positive) for v in values]
        randomized = randomized or question.sensitive
        if design.nuisance is not None:
            if grouped is not None and grouped.rates != design.rates:
                raise CorrelationError(f"--cor: {qid!r} uses different two-group designs in "
                                       "different versions; analyse the versions apart")
            groups = rows.groups.get(qid, np.zeros(len(rows.version), dtype=np.int8))[used]
            grouped = GroupedDesign(groups.astype(np.int64), design.rates, design.nuisance)
            continue
        if design.by_report is not None:
            raise CorrelationError(f"--cor: {qid!r} has a design --cor does not take "
                                   "(more than two reports)")
        one_group = True
        a0, _, b0, _ = design.rates[0]
        a[here], b[here] = a0, b0
    if grouped is not None and one_group:
        raise CorrelationError(f"--cor: {qid!r} is two-group in some versions and not in others; "
                               "analyse the versions apart")
    return CorVariable(qid, z, a, b, randomized, grouped)


def _number_variable(catalog: Catalog, rows: Rows, qid: str, used: np.ndarray,
                     answers: list[object], versions: np.ndarray) -> CorVariable:
    """A randomized number: each version's design de-biases its own rows."""
    found = {m: catalog.versions[m].question(qid) for m in sorted(set(versions.tolist()))}
    designs = {m: q.number_design for m, q in found.items() if q is not None}
    if any(d is None for d in designs.values()):
        raise CorrelationError(f"--cor: {qid!r} is randomized in some versions and asked "
                               "directly in others")
    kinds = {d.name for d in designs.values() if d is not None}
    z = np.array([float(v) for v in answers])  # type: ignore[arg-type]
    groups = rows.groups.get(qid)
    if "mixture-unknown" in kinds:
        if len(designs) > 1:
            raise CorrelationError(f"--cor: {qid!r} uses mixture-unknown in several versions; "
                                   "--cor takes it in one version")
        assert groups is not None
        design = next(iter(designs.values()))
        return number_variable(qid, design, z, groups[used])
    x = np.zeros(len(z))
    second = np.zeros(len(z))
    for m, design in designs.items():
        here = versions == m
        try:
            part = number_variable(qid, design, z[here])
        except ValueError as error:
            raise CorrelationError(f"--cor: {error}") from None
        x[here] = part.z
        assert part.second is not None
        second[here] = part.second
    return CorVariable(qid, x, np.zeros(len(z)), np.ones(len(z)), True, second=second)


def _missing(catalog: Catalog, rows: Rows, qid: str) -> np.ndarray:
    out = np.zeros(len(rows.version), dtype=bool)
    for i, (value, m) in enumerate(zip(rows.answers[qid], rows.version.tolist(), strict=True)):
        question = catalog.versions[m].question(qid)
        if question is None or value is None or value == "":
            out[i] = True
        elif question.type == "number":
            try:
                float(value)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                out[i] = True
    return out


@dataclass
class CorResult:
    """The correlation matrix with what it was estimated from."""

    fit: CorFit
    rows_accepted: int
    left_out: dict[str, int]
    rejected: Rejections = field(default_factory=Rejections)

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys of docs/contracts.md ("analyze --cor")."""
        return {**self.fit.to_dict(), "rows_accepted": self.rows_accepted,
                "left_out": self.left_out, "rows_rejected": self.rejected.total}


def correlate(
    exports: str | Path | Iterable[str | Path],
    survey: str | Path | Iterable[str | Path] | None = None,
    manifests: Iterable[str | Path | Mapping[str, Any]] = (),
    questions: str | Sequence[str] = (),
    confidence: float = 0.95,
    mapping: Sequence[str] | None = None,
    replicates: int = 1000,
) -> CorResult:
    """RRcor's correlations of ``questions`` from the exports (see the module docstring)."""
    paths, catalog = exports_and_catalog(exports, survey, manifests, confidence)
    ids = parse_variables(questions)
    for qid in ids:
        _check(catalog, qid)
    rows = read_rows(paths, catalog, parse_mapping(list(mapping or ()), catalog), ids)
    missing = np.zeros(len(rows.version), dtype=bool)
    left_out = {}
    for qid in ids:
        miss = _missing(catalog, rows, qid)
        left_out[qid] = int(np.count_nonzero(miss & ~missing))
        missing |= miss
    used = ~missing
    variables = [_variable(catalog, rows, qid, used) for qid in ids]
    numbers = [v.name for v in variables if v.second is not None]
    grouped = [v.name for v in variables if v.grouped is not None]
    if numbers and grouped:
        raise CorrelationError(f"--cor {','.join(ids)}: {', '.join(grouped)} (two-group yes-no) "
                               f"and {', '.join(numbers)} (randomized numbers) go in separate "
                               "--cor runs: the two-group average over subgroups is RRcor's, "
                               "for yes-no variances only")
    try:
        if grouped:
            fit = rrcor_groups(variables, confidence, replicates)
        else:
            fit = rrcor(variables, confidence, replicates)
    except ValueError as error:
        raise CorrelationError(f"--cor {','.join(ids)}: {error}") from error
    return CorResult(fit, len(rows.version), left_out, rows.rejections)
