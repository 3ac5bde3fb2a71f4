"""The analysis as Python objects: ``analyze(paths, survey=...) -> Analysis`` (for notebooks too).

from rrsite.analyze import analyze
result = analyze(["export.csv"], survey="surveys/honor-code.md")
result.question("violated").estimate.ci_low
result.to_dict()        # the JSON of `rrsite analyze --format json`
result.to_pandas()      # one row per question, answer and subgroup (needs pandas)
"""

from __future__ import annotations

import difflib
import math
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core import Privacy, compose
from ..errors import RRSiteError, UsageError
from ..estimate.deconvolution import Deconvolution, DeconvolutionError, deconvolve
from ..estimate.estimators import (
    KIND_BINARY,
    KIND_CATEGORICAL,
    BinaryPart,
    Estimate,
    binary_estimate,
    categorical_estimate,
    pooled_binary,
    pooled_categorical,
)
from ..estimate.intervals import METHODS
from ..estimate.numbers import (
    NumberEstimate,
    NumberEstimateError,
    PartFit,
    combine,
    fit_part,
)
from ..estimate.univariate import UniFit
from ..exports.catalog import CHOICE_TYPES, Catalog, QuestionSpec, build_catalog
from ..exports.progress import Progress
from ..exports.readers import (
    BLOCK_SIZE,
    Batch,
    ExportError,
    FileInfo,
    file_size,
    parse_mapping,
    read_export,
)
from ..exports.rejections import Rejections
from ..exports.tally import NO_ANSWER, Checked, Tally
from . import univariate as rrreg_fit
from .sample_design import SampleOptions, design_based

#: Blocks read ahead of the one being committed (bounds memory: a few blocks of 4 MB).
PIPELINE = 3

VARIANCE_CONVENTION = "random-sampling"
CI_METHOD_NAMES = {
    "exact": "exact (Clopper-Pearson for the report rate, mapped through the design)",
    "wilson": "Wilson score for the report rate, mapped through the design",
    "wald": "Wald (normal approximation)",
    "profile-likelihood": "profile likelihood (designs pooled, or RRreg's models; asymptotic)",
    "profile-likelihood-boundary": (
        "profile likelihood with a boundary-calibrated critical value (RRreg's two-group "
        "designs: the likelihood ratio's large-sample law with the parameter bounds, at least "
        "chi2_1)"
    ),
}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def privacy_dict(privacy: Privacy) -> dict[str, Any]:
    """Epsilon (null when infinite), delta and a plain sentence."""
    return {
        "epsilon": _finite(privacy.epsilon),
        "delta": privacy.delta,
        "epsilon_infinite": math.isinf(privacy.epsilon),
        "statement": privacy.describe(),
    }


@dataclass
class DesignPart:
    """The reports of one question under one design (one or more versions share it)."""

    design: dict[str, Any]
    matrix: np.ndarray
    versions: list[str]
    counts: np.ndarray
    missing: np.ndarray
    privacy: Privacy
    #: RRreg's designs (rrreg_fit): the question of the first version, and for a two-group design
    #: the counts by group, ``by_group[group - 1, report, subgroup]``.
    question: QuestionSpec | None = None
    by_group: np.ndarray | None = None

    def to_dict(self, values: Sequence[str]) -> dict[str, Any]:
        """The design, its matrix, privacy, versions and the counts it received.

        An RRreg design gives its RRreg mapping (``rrreg``), its ``reports`` (the counts are
        keyed by them), and for a two-group design its ``groups`` (each group's matrix) and
        ``group_counts`` instead of one matrix.
        """
        out = dict(self.design)
        labels = values if self.question is None else self.question.answers
        if self.by_group is None:
            out["matrix"] = self.matrix.tolist()
        if self.matrix.shape == (2, 2) and self.question is None:
            out["p00"], out["p11"] = float(self.matrix[0, 0]), float(self.matrix[1, 1])
        if self.question is not None:
            out["rrreg"] = self.question.manifest.get("rrreg")
            out["reports"] = list(labels)
            if self.by_group is not None:
                out["groups"] = self.question.manifest.get("groups")
                out["group_counts"] = {
                    str(g + 1): {r: int(c) for r, c in zip(labels, row.sum(axis=1), strict=True)}
                    for g, row in enumerate(self.by_group)
                }
        out.update({
            "versions": list(self.versions),
            "n": int(self.counts.sum()),
            "counts": {v: int(c) for v, c in zip(labels, self.counts.sum(axis=1), strict=True)},
            **{key: value for key, value in privacy_dict(self.privacy).items()
               if key in ("epsilon", "delta")},
        })
        return out

    def tallied(self, column: int | None = None) -> rrreg_fit.Tallied:
        """The counts per (group, report) of this RRreg design: all subgroups, or one column."""
        assert self.question is not None
        counts = self.by_group if self.by_group is not None else self.counts[None]
        return rrreg_fit.Tallied(
            self.question, counts.sum(axis=2) if column is None else counts[:, :, column])


@dataclass
class QuestionResult:
    """One sensitive question: its overall estimate, its designs, and its subgroups (``--by``)."""

    id: str
    text: str
    kind: str
    values: tuple[str, ...]
    estimate: Estimate
    designs: list[DesignPart]
    missing: int
    privacy: Privacy
    by: str | None = None
    groups: dict[str, Estimate] = field(default_factory=dict)
    #: RRreg's designs: the fit of the whole sample and of each subgroup (``--by``).
    fit: UniFit | None = None
    group_fits: dict[str, UniFit] = field(default_factory=dict)
    #: With a sample design (``analyze(sample=...)``): the design-based estimates, as JSON.
    design_based: dict[str, Any] | None = None

    def design_dict(self) -> dict[str, Any]:
        """The design (or, when several were pooled, all of them)."""
        if len(self.designs) == 1:
            return self.designs[0].to_dict(self.values)
        return {"name": "pooled", "parts": [part.to_dict(self.values) for part in self.designs]}

    def to_dict(self) -> dict[str, Any]:
        """The per-question keys of the JSON report (docs/reference/contracts.md), and more."""
        figures = self.estimate.to_dict()
        out: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "values": list(self.values),
            "n": figures.pop("n"),
            "counts": figures.pop("counts"),
            "missing": self.missing,
            "estimate": figures.pop("estimate"),
            "unbiased": figures.pop("unbiased"),
            "se": figures.pop("se"),
            "ci": figures.pop("ci"),
            "ci_method": figures.pop("ci_method"),
            "design": self.design_dict(),
            "epsilon": _finite(self.privacy.epsilon),
            "delta": self.privacy.delta,
            "privacy": privacy_dict(self.privacy)["statement"],
        }
        out.update(figures)
        if self.fit is not None:
            out.update(rrreg_fit.fit_dict(self.fit))
            out["reports"] = list(self.estimate.counts)
            grouped = [d.to_dict(self.values).get("group_counts") for d in self.designs
                       if d.by_group is not None]
            if grouped:
                out["group_counts"] = {
                    g: {r: sum((c or {}).get(g, {}).get(r, 0) for c in grouped)
                        for r in out["reports"]} for g in ("1", "2")
                }
        if self.design_based is not None:
            out["design_based"] = self.design_based
        if self.by is not None:
            out["by"] = {
                "question": self.by,
                "groups": {name: estimate.to_dict() for name, estimate in self.groups.items()},
            }
            for name, result in self.group_fits.items():
                if name in out["by"]["groups"]:
                    out["by"]["groups"][name]["parameters"] = rrreg_fit.parameters(result)
        return out


@dataclass
class NumberPart:
    """The reports of one randomized number question under one design (one or more versions)."""

    design: Any  # rrsite.core.numbers.NumberDesign
    versions: list[str]
    reports: np.ndarray
    subgroups: np.ndarray
    groups: np.ndarray
    privacy: Privacy

    def to_dict(self, fit: PartFit | None) -> dict[str, Any]:
        """The design's spec, versions, respondents, privacy and its own estimate."""
        out: dict[str, Any] = {**self.design.spec(), "versions": list(self.versions),
                               "n": len(self.reports),
                               **{key: value for key, value in privacy_dict(self.privacy).items()
                                  if key in ("epsilon", "delta")}}
        if fit is not None:
            out["estimate"], out["se"] = _finite(fit.mean), _finite(fit.se)
            if fit.groups:
                out["group_n"] = dict(fit.groups)
        return out


@dataclass
class NumberResult:
    """A randomized number question: the mean of the true numbers (and the total), by subgroup."""

    id: str
    text: str
    unit: str | None
    parts: list[NumberPart]
    estimate: NumberEstimate | None
    missing: int
    privacy: Privacy
    by: str | None = None
    groups: dict[str, NumberEstimate] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    #: With a sample design: the design-based estimates (rrsite.analyze.sample_design), JSON.
    design_based: dict[str, Any] | None = None

    def deconvolution(self, confidence: float = 0.95) -> Deconvolution | str:
        """The estimated distribution of the true numbers, or why there is none.

        Every version's reports together (rrsite.estimate.deconvolution); mixture-unknown's
        innocuous answers have an unknown law, and duchi's two reports cannot tell the true
        numbers apart beyond their mean.
        """
        usable = [(p.design, p.reports) for p in self.parts if len(p.reports)]
        if any(design.name == "mixture-unknown" for design, _ in usable):
            return ("not estimated: mixture-unknown's innocuous answers follow a law nobody "
                    "knows, so the reports cannot be unmixed")
        if not usable:
            return "not estimated: no reports"
        try:
            return deconvolve(usable, confidence)
        except DeconvolutionError as error:
            return f"not estimated: {error}"

    def to_dict(self) -> dict[str, Any]:
        """The ``numbers`` entry of ``--format json`` (docs/contracts.md)."""
        fits = self.estimate.parts if self.estimate is not None else [None] * len(self.parts)
        out: dict[str, Any] = {
            "id": self.id, "text": self.text, "kind": "number", "unit": self.unit,
            "missing": self.missing,
            **(self.estimate.to_dict() if self.estimate is not None else
               {"n": sum(len(p.reports) for p in self.parts), "estimate": None, "se": None,
                "ci": [None, None]}),
            "design": (self.parts[0].to_dict(fits[0]) if len(self.parts) == 1 else
                       {"name": "pooled", "parts": [p.to_dict(f) for p, f in
                                                    zip(self.parts, fits, strict=True)]}),
            "epsilon": _finite(self.privacy.epsilon), "delta": self.privacy.delta,
            "privacy": privacy_dict(self.privacy)["statement"],
            "rrreg": (fits[0].rrreg if len(self.parts) == 1 and fits[0] is not None else None),
            "variance_convention": "random sampling: sd of the de-biased reports with n - 1 "
                                   "(RRreg's convention); se_noise: the randomization alone, "
                                   "given the respondents' true numbers",
            "messages": list(self.messages),
        }
        found = self.deconvolution(self.estimate.confidence if self.estimate is not None
                                   else 0.95)
        out["distribution"] = ({"not_estimated": found} if isinstance(found, str)
                               else found.to_dict())
        if self.by is not None:
            out["by"] = {"question": self.by,
                         "groups": {name: e.to_dict() for name, e in self.groups.items()}}
        if self.design_based is not None:
            out["design_based"] = self.design_based
        return out


@dataclass
class DirectResult:
    """A question asked directly (yes-no or choice): how it was answered."""

    id: str
    text: str
    type: str
    counts: dict[str, int]
    missing: int

    def to_dict(self) -> dict[str, Any]:
        """id, text, type, counts by value, missing."""
        return {"id": self.id, "text": self.text, "type": self.type, "counts": self.counts,
                "missing": self.missing}


@dataclass
class Analysis:
    """Everything `rrsite analyze` reports, as objects."""

    survey: str
    title: str
    confidence: float
    interval: str
    by: str | None
    files: list[FileInfo]
    versions: list[dict[str, Any]]
    rejected: Rejections
    questions: list[QuestionResult]
    direct: list[DirectResult]
    privacy: dict[str, Any]
    rows_read: int
    rows_accepted: int
    notes: list[str] = field(default_factory=list)
    #: With a sample design: the design, its options and summary (``sample_design.DesignBased``).
    sample_design: dict[str, Any] | None = None
    #: Randomized number questions (rrsite.estimate.numbers).
    numbers: list[NumberResult] = field(default_factory=list)
    population: float | None = None

    def question(self, qid: str) -> QuestionResult:
        """The result for one question id."""
        for result in self.questions:
            if result.id == qid:
                return result
        raise KeyError(qid)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``--format json``.

        Keys of the JSON report (survey, versions, rejected, privacy, questions) and a few more.
        """
        return {
            "survey": self.survey,
            "title": self.title,
            "confidence": self.confidence,
            "interval": self.interval,
            "variance_convention": VARIANCE_CONVENTION,
            "by": self.by,
            "files": [
                {"path": f.path, "format": f.format, "rows": f.rows, "notes": list(f.notes)}
                for f in self.files
            ],
            "rows": {"read": self.rows_read, "accepted": self.rows_accepted,
                     "rejected": self.rejected.total},
            "versions": self.versions,
            "rejected": self.rejected.to_dict(),
            "privacy": self.privacy,
            "questions": [q.to_dict() for q in self.questions],
            "direct": [d.to_dict() for d in self.direct],
            "numbers": [n.to_dict() for n in self.numbers],
            "population": self.population,
            "notes": list(self.notes),
            **({"sample_design": self.sample_design} if self.sample_design is not None else {}),
        }

    def to_pandas(self) -> Any:
        """A pandas DataFrame: one row per question, estimated answer and subgroup."""
        try:
            import pandas
        except ImportError as error:
            raise ImportError(
                "Analysis.to_pandas() needs pandas, which is not installed: pip install pandas "
                "(or use Analysis.to_dict())"
            ) from error
        records = []
        for question in self.questions:
            parts = [("all", question.estimate)] + list(question.groups.items())
            for group, estimate in parts:
                for i, label in enumerate(estimate.labels):
                    records.append({
                        "question": question.id, "kind": question.kind, "value": label,
                        "group": group if question.by is None or group != "all" else "all",
                        "by": question.by, "n": estimate.n,
                        "observed": float(estimate.observed[i]),
                        "estimate": float(estimate.estimate[i]),
                        "unbiased": float(estimate.unbiased[i]), "se": float(estimate.se[i]),
                        "ci_low": float(estimate.ci_low[i]), "ci_high": float(estimate.ci_high[i]),
                        "ci_method": estimate.ci_method, "clipped": estimate.clipped,
                        "epsilon": question.privacy.epsilon, "delta": question.privacy.delta,
                    })
        return pandas.DataFrame.from_records(records)


def _check_options(catalog: Catalog, confidence: float, interval: str, by: str | None) -> None:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) \
            or not 0.0 < confidence < 1.0:
        raise UsageError(f"--confidence must be between 0 and 1, got {confidence!r}")
    if interval not in METHODS:
        raise UsageError(f"--interval must be one of {', '.join(METHODS)}, got {interval!r}")
    if by is None:
        return
    found = catalog.questions_named(by)
    if not found:
        known = catalog.question_ids()
        close = difflib.get_close_matches(by, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f" (questions: {', '.join(known)})"
        raise UsageError(f"--by {by!r}: no such question in survey {catalog.survey!r}{hint}")
    for _, question in found:
        if question.sensitive:
            raise UsageError(f"--by {by!r}: the question is randomized; subgroups need a question "
                             "asked directly")
        if question.type not in CHOICE_TYPES:
            raise UsageError(f"--by {by!r}: subgroups need a yes-no or choice question, "
                             f"not {question.type}")


def analyze(
    exports: str | Path | Iterable[str | Path],
    survey: str | Path | Iterable[str | Path] | None = None,
    manifests: Iterable[str | Path | Mapping[str, Any]] = (),
    *,
    confidence: float = 0.95,
    by: str | None = None,
    interval: str = "exact",
    mapping: Mapping[str, str] | Sequence[str] | None = None,
    progress: bool | None = None,
    block_size: int = BLOCK_SIZE,
    threads: int | None = None,
    sample: SampleOptions | None = None,
    population: float | None = None,
) -> Analysis:
    """Read exports, check every row against its version's manifest, and de-bias the counts.

    ``survey``: survey file(s) (.md through rrsite.survey, or a survey.json); ``manifests``:
    more survey.json paths or manifest dicts (older versions). ``mapping``: CSV column -> field
    (``{"Q1": "violated"}`` or ``["Q1=violated"]``). ``progress``: a bar on stderr (default: when
    stderr is a terminal and the run is long). ``threads``: 2 (the default on a machine with
    more than one CPU) checks one block while the next is read; the result is the same.
    ``sample``: the sample design's columns (weights, strata, clusters, fpc; rrsite.analyze.
    sample_design): each sensitive question then also gets design-based estimates.
    ``population``: the population size, for the totals of randomized number questions.
    """
    if population is not None and (isinstance(population, bool) or not population > 0):
        raise UsageError(f"--population must be a positive number, got {population!r}")
    paths = [exports] if isinstance(exports, str | Path) else list(exports)
    if not paths:
        raise UsageError("give at least one export file")
    surveys = [] if survey is None else [survey] if isinstance(survey, str | Path) else list(survey)
    catalog = build_catalog(surveys, manifests)
    _check_options(catalog, confidence, interval, by)
    if mapping is None:
        column_map: dict[str, str] = {}
    elif isinstance(mapping, Mapping):
        column_map = parse_mapping([f"{k}={v}" for k, v in mapping.items()], catalog)
    else:
        column_map = parse_mapping(list(mapping), catalog)
    for path in paths:
        if not Path(path).is_file():
            raise ExportError(f"{path}: no such file")
    rejections = Rejections()
    tally = Tally(catalog, by, rejections)
    bar = Progress(sum(file_size(p) for p in paths), enabled=progress)
    files: list[FileInfo] = []
    try:
        extra = sample.export_columns() if sample is not None else []
        _run(paths, catalog, column_map, rejections, tally, files, block_size, bar, threads,
             extra)
    finally:
        bar.close()
    analysis = _assemble(catalog, tally, files, rejections, confidence, interval, by)
    based = None
    if sample is not None:
        based = design_based(paths, catalog, column_map, sample, analysis.questions, confidence,
                             by)
        for question in analysis.questions:
            question.design_based = based.questions.get(question.id)
        analysis.sample_design = based.to_dict()
        analysis.notes.extend(based.notes)
    analysis.population = population
    analysis.numbers = _number_results(catalog, tally, confidence, by, population)
    if based is not None:
        for number in analysis.numbers:
            number.design_based = based.numbers.get(number.id)
    analysis.privacy["questions"] += [{"id": n.id, **privacy_dict(n.privacy)}
                                      for n in analysis.numbers]
    if analysis.numbers and any("nothing to de-bias" in note for note in analysis.notes):
        analysis.notes = [note for note in analysis.notes if "nothing to de-bias" not in note]
    return analysis


def _number_results(catalog: Catalog, tally: Tally, confidence: float, by: str | None,
                    population: float | None) -> list[NumberResult]:
    """Every randomized number question: its designs' reports pooled, overall and by subgroup."""
    import json

    results = []
    for qid in catalog.question_ids():
        entries = [(m, q) for m, q in catalog.questions_named(qid) if q.numeric]
        if not entries:
            continue
        parts: dict[str, NumberPart] = {}
        missing = 0
        for m, question in entries:
            reports, subgroups, groups = tally.number_reports(m, qid)
            missing += int(tally.rows_accepted[m]) - len(reports)
            key = json.dumps(question.design_spec, sort_keys=True)
            version = catalog.versions[m].version
            if key in parts:
                part = parts[key]
                part.reports = np.concatenate((part.reports, reports))
                part.subgroups = np.concatenate((part.subgroups, subgroups))
                part.groups = np.concatenate((part.groups, groups))
                part.versions.append(version)
            else:
                assert question.privacy is not None
                parts[key] = NumberPart(question.number_design, [version], reports, subgroups,
                                        groups, question.privacy)
        first = entries[0][1]
        result = NumberResult(qid, first.text, first.unit, list(parts.values()), None, missing,
                              max((p.privacy for p in parts.values()),
                                  key=lambda p: (p.epsilon, p.delta)), by)

        try:
            result.estimate = _number_estimate(result.parts, None, confidence, population)
        except NumberEstimateError as error:
            result.messages.append(f"no estimate: {error}")
        else:
            caution = _small_groups_caution(result.estimate)
            if caution:
                result.messages.append(caution)
        if by is not None:
            for g, name in enumerate(tally.groups):
                try:
                    result.groups[name] = _number_estimate(result.parts, g, confidence,
                                                           population)
                except NumberEstimateError as error:
                    if name != NO_ANSWER:
                        result.messages.append(f"{by} = {name}: no estimate: {error}")
        results.append(result)
    return results


#: mixture-unknown over a heavy-tailed number: below this many reports in a group the interval
#: was measured to cover less than 95% (94.3-94.5% at 50 per group over log-normal incomes).
SMALL_GROUP = 250


def _small_groups_caution(estimate: NumberEstimate) -> str | None:
    """A message when mixture-unknown's groups are small and the reports heavy-tailed."""
    sizes = [size for part in estimate.parts if part.groups for size in part.groups.values()]
    if not sizes or min(sizes) >= SMALL_GROUP or estimate.df >= 30:
        return None
    return (f"heavy-tailed reports (the interval's Satterthwaite df is {estimate.df:.1f}) and a "
            f"mixture-unknown group of {min(sizes)}: with fewer than {SMALL_GROUP} reports per "
            "group over a skewed number this interval can cover less than 95% (measured: 94.5% "
            "at 50 per group over log-normal incomes); more respondents, or a design with more "
            "noise, make it reliable")


def _number_estimate(parts: list[NumberPart], subgroup: int | None, confidence: float,
                     population: float | None) -> NumberEstimate:
    """Each design's fit (of one subgroup's rows, or all), pooled."""
    fits = []
    for part in parts:
        rows = np.ones(len(part.reports), dtype=bool) if subgroup is None \
            else part.subgroups == subgroup
        fits.append(fit_part(part.design, part.reports[rows], part.groups[rows]))
    return combine(fits, confidence, population)


def _run(
    paths: list[str | Path], catalog: Catalog, column_map: dict[str, str],
    rejections: Rejections, tally: Tally, files: list[FileInfo], block_size: int,
    bar: Progress, threads: int | None, extra: Sequence[str] = (),
) -> None:
    """Read every file, check its blocks and commit them in order.

    With two threads a worker checks one block (numpy releases the GIL) while the main thread
    parses the next; at most PIPELINE blocks are in flight.
    """
    if threads is None:
        threads = 2 if (os.cpu_count() or 1) > 1 else 1

    def batches() -> Iterator[Batch]:
        for path in paths:
            info = FileInfo(str(path), "?")
            files.append(info)
            yield from read_export(path, catalog, column_map, rejections, info, block_size,
                                   bar.advance, extra)

    if threads <= 1:
        for batch in batches():
            tally.commit(tally.check(batch))
        return
    with ThreadPoolExecutor(max_workers=threads - 1) as pool:
        pending: deque[Future[Checked]] = deque()
        for batch in batches():
            pending.append(pool.submit(tally.check, batch))
            while len(pending) >= PIPELINE or (pending and pending[0].done()):
                tally.commit(pending.popleft().result())
        while pending:
            tally.commit(pending.popleft().result())


# --------------------------------------------------------------------------------- assembling


def _canonical(values: Sequence[str], qtype: str) -> tuple[str, ...]:
    return ("no", "yes") if qtype == "yes-no" and set(values) == {"no", "yes"} else tuple(values)


def _design_key(matrix: np.ndarray) -> tuple[float, ...]:
    return tuple(np.round(matrix, 12).ravel().tolist())


def _estimate(
    kind: str, values: tuple[str, ...], parts: list[tuple[np.ndarray, np.ndarray]],
    confidence: float, interval: str,
) -> Estimate:
    """One estimate from (counts per value, matrix) per design: exact for one, pooled for more."""
    if kind == KIND_BINARY:
        binary = [BinaryPart(int(c[1]), int(c.sum()), float(m[0, 0]), float(m[1, 1]))
                  for c, m in parts]
        if len(binary) == 1:
            b = binary[0]
            return binary_estimate(b.n_yes, b.n, b.p00, b.p11, confidence, interval, values)
        return pooled_binary(binary, confidence, interval, values)
    if len(parts) == 1:
        return categorical_estimate(parts[0][0], parts[0][1], values, confidence, interval)
    return pooled_categorical([c for c, _ in parts], [m for _, m in parts], values, confidence,
                              interval)


def _question_results(
    catalog: Catalog, tally: Tally, confidence: float, interval: str, by: str | None,
    notes: list[str],
) -> list[QuestionResult]:
    results = []
    for qid in catalog.question_ids():
        entries = [(m, q) for m, q in catalog.questions_named(qid)
                   if q.sensitive and not q.numeric]
        if not entries:
            continue
        # versions whose value sets differ cannot be pooled: one result per value set
        by_values: dict[tuple[str, frozenset[str]], list[tuple[int, QuestionSpec]]] = {}
        for m, question in entries:
            by_values.setdefault((question.type, frozenset(question.values)), []).append(
                (m, question))
        for number, group in enumerate(by_values.values()):
            first = group[0][1]
            values = _canonical(first.values, first.type)
            label = qid if number == 0 else f"{qid} [{', '.join(values)}]"
            if number:
                notes.append(f"{qid}: versions with other answer values are reported as {label!r}")
            if not any(q.uses_rrreg for _, q in group):
                results.append(_one_question(catalog, tally, label, group, values, confidence,
                                             interval, by))
                continue
            for index, (model, pooled) in enumerate(_rrreg_pools(group).items()):
                name = label if index == 0 else f"{label} [{model}]"
                if index:
                    notes.append(
                        f"{qid}: versions under {model} cannot be pooled with the others (the "
                        f"models estimate different parameters); they are reported as {name!r}")
                if model == "classic":
                    results.append(_one_question(catalog, tally, name, pooled, values,
                                                 confidence, interval, by))
                else:
                    results.append(_rrreg_question(catalog, tally, name, pooled, values,
                                                   confidence, by))
    return results


def _rrreg_pools(
    group: list[tuple[int, QuestionSpec]],
) -> dict[str, list[tuple[int, QuestionSpec]]]:
    """Versions of a question with an RRreg design, split into what one likelihood can hold.

    Versions whose RRreg models share their parameters (e.g. crosswise and Warner: pi) are one
    pool, named by its first model; a version without an RRreg mapping stays "classic".
    """
    keys: dict[object, str] = {}
    pools: dict[str, list[tuple[int, QuestionSpec]]] = {}
    for m, question in group:
        key = rrreg_fit.pool_key(question)
        design = rrreg_fit.model_of(question)
        if key not in keys:
            keys[key] = "classic" if design is None else design.model
        pools.setdefault(keys[key], []).append((m, question))
    return pools


def _rrreg_question(
    catalog: Catalog, tally: Tally, label: str, group: list[tuple[int, QuestionSpec]],
    values: tuple[str, ...], confidence: float, by: str | None,
) -> QuestionResult:
    """A question estimated with RRreg's models: one joint fit of every version's parts."""
    parts: dict[str, DesignPart] = {}
    for m, question in group:
        tallied = tally.counts[(m, question.id)]
        key = rrreg_fit.design_key(question)
        version = catalog.versions[m].version
        if key in parts:  # the same design in several versions: counts add
            part = parts[key]
            part.counts = part.counts + tallied.counts
            part.missing = part.missing + tallied.missing
            if part.by_group is not None and tallied.by_group is not None:
                part.by_group = part.by_group + tallied.by_group
            part.versions.append(version)
        else:
            assert question.privacy is not None and question.design is not None
            parts[key] = DesignPart(
                design=question.design_spec or question.design.spec(), matrix=question.matrix,
                versions=[version], counts=tallied.counts.copy(), missing=tallied.missing.copy(),
                privacy=question.privacy, question=question,
                by_group=None if tallied.by_group is None else tallied.by_group.copy(),
            )
    designs = list(parts.values())
    reports = designs[0].question.answers if designs[0].question else values

    def estimate(column: int | None) -> tuple[UniFit, Estimate]:
        tallies = [d.tallied(column) for d in designs]
        result, fitted = rrreg_fit.fit_designs(tallies, confidence)
        counts: dict[str, int] = {}
        for d, t in zip(designs, tallies, strict=True):
            assert d.question is not None
            for label_, count in zip(d.question.answers, t.counts.sum(axis=0), strict=True):
                counts[label_] = counts.get(label_, 0) + int(count)
        if set(counts) == set(reports):
            counts = {r: counts[r] for r in reports}
        return result, rrreg_fit.estimate_of(result, fitted, counts, values, confidence)

    overall_fit, overall = estimate(None)
    privacy = max((p.privacy for p in designs), key=lambda p: (p.epsilon, p.delta))
    result = QuestionResult(
        id=label, text=group[0][1].text, kind=KIND_BINARY, values=values, estimate=overall,
        designs=designs, missing=int(sum(p.missing.sum() for p in designs)), privacy=privacy,
        by=by, fit=overall_fit,
    )
    if by is not None:
        for g, name in enumerate(tally.groups):
            group_fit, group_estimate = estimate(g)
            if name == NO_ANSWER and group_estimate.n == 0:
                continue
            result.groups[name] = group_estimate
            result.group_fits[name] = group_fit
    return result


def _one_question(
    catalog: Catalog, tally: Tally, label: str, group: list[tuple[int, QuestionSpec]],
    values: tuple[str, ...], confidence: float, interval: str, by: str | None,
) -> QuestionResult:
    first = group[0][1]
    kind = KIND_BINARY if first.binary else KIND_CATEGORICAL
    parts: dict[tuple[float, ...], DesignPart] = {}
    for m, question in group:
        order = [question.values.index(v) for v in values]
        matrix = question.matrix[np.ix_(order, order)]
        tallied = tally.counts[(m, question.id)]
        counts = tallied.counts[order]
        key = _design_key(matrix)
        version = catalog.versions[m].version
        if key in parts:  # the same design in several versions: one likelihood, counts add
            part = parts[key]
            part.counts = part.counts + counts
            part.missing = part.missing + tallied.missing
            part.versions.append(version)
        else:
            assert question.privacy is not None and question.design is not None
            parts[key] = DesignPart(
                design=question.design_spec or question.design.spec(), matrix=matrix,
                versions=[version], counts=counts, missing=tallied.missing.copy(),
                privacy=question.privacy,
            )
    designs = list(parts.values())
    overall = _estimate(kind, values, [(p.counts.sum(axis=1), p.matrix) for p in designs],
                        confidence, interval)
    privacy = max((p.privacy for p in designs), key=lambda p: (p.epsilon, p.delta))
    result = QuestionResult(
        id=label, text=first.text, kind=kind, values=values, estimate=overall, designs=designs,
        missing=int(sum(p.missing.sum() for p in designs)), privacy=privacy, by=by,
    )
    if by is not None:
        for g, name in enumerate(tally.groups):
            estimate = _estimate(kind, values, [(p.counts[:, g], p.matrix) for p in designs],
                                 confidence, interval)
            if name == NO_ANSWER and estimate.n == 0:
                continue
            result.groups[name] = estimate
    return result


def _direct_results(catalog: Catalog, tally: Tally) -> list[DirectResult]:
    results = []
    for qid in catalog.question_ids():
        entries = [(m, q) for m, q in catalog.questions_named(qid)
                   if not q.sensitive and q.type in CHOICE_TYPES]
        if not entries:
            continue
        counts: dict[str, int] = {}
        missing = 0
        for m, question in entries:
            tallied = tally.counts[(m, qid)]
            for value, count in zip(question.values, tallied.counts.sum(axis=1), strict=True):
                counts[value] = counts.get(value, 0) + int(count)
            missing += int(tallied.missing.sum())
        first = entries[0][1]
        results.append(DirectResult(qid, first.text, first.type, counts, missing))
    return results


def _privacy(catalog: Catalog, tally: Tally, questions: list[QuestionResult]) -> dict[str, Any]:
    """Per question (worst design), per version (basic composition) and per respondent."""
    from ..survey.model import over_budget  # the build's rule: compared at the printed digits

    by_version = []
    for m, version in enumerate(catalog.versions):
        total = version.privacy
        entry = {"version": version.version, "rows": int(tally.rows_accepted[m]),
                 **privacy_dict(total)}
        if version.budget:
            entry["budget"] = version.budget
            budget = version.budget.get("budget")
            if isinstance(budget, int | float) and over_budget(total.epsilon, budget):
                entry["over_budget"] = True
        by_version.append((m, total, entry))
    seen = [item for item in by_version if tally.rows_accepted[item[0]] > 0] or by_version
    worst = max(seen, key=lambda item: (item[1].epsilon, item[1].delta))
    per_respondent = {**privacy_dict(worst[1]), "version": worst[2]["version"]}
    return {
        "composition": "basic: a respondent's epsilons and deltas add up over the sensitive "
                       "questions of the version answered",
        "questions": [{"id": q.id, **privacy_dict(q.privacy)} for q in questions],
        "per_respondent": per_respondent,
        "by_version": [entry for _, _, entry in by_version],
    }


def _assemble(
    catalog: Catalog, tally: Tally, files: list[FileInfo], rejections: Rejections,
    confidence: float, interval: str, by: str | None,
) -> Analysis:
    notes: list[str] = []
    questions = _question_results(catalog, tally, confidence, interval, by, notes)
    if not questions:
        notes.append(f"survey {catalog.survey!r} has no randomized question: nothing to de-bias")
    versions = [
        {"version": v.version, "rows": int(tally.rows_accepted[m]), "source": v.source,
         "seen": bool(tally.rows_accepted[m] > 0)}
        for m, v in enumerate(catalog.versions)
    ]
    accepted = int(tally.rows_accepted.sum())
    return Analysis(
        survey=catalog.survey, title=catalog.title, confidence=confidence, interval=interval,
        by=by, files=files, versions=versions, rejected=rejections, questions=questions,
        direct=_direct_results(catalog, tally), privacy=_privacy(catalog, tally, questions),
        rows_read=sum(f.rows for f in files), rows_accepted=accepted, notes=notes,
    )


def composed(questions: Iterable[QuestionResult]) -> Privacy:
    """Basic composition over results (used by reports)."""
    return compose(q.privacy for q in questions)


__all__ = ["Analysis", "DirectResult", "QuestionResult", "RRSiteError", "analyze"]
