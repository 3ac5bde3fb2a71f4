"""What `rrsite analyze` finds, as objects: ``Analysis`` and a result per question.

``Analysis.to_dict()`` is the JSON of ``rrsite analyze --format json`` (docs/reference/
contracts.md); ``Analysis.to_pandas()`` one row per question, answer and subgroup. The objects
render nothing (rrsite.report does); rrsite.analyze.api builds them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import Privacy, compose
from ..estimate.deconvolution import Deconvolution, DeconvolutionError, deconvolve
from ..estimate.estimators import Estimate
from ..estimate.numbers import NumberEstimate, PartFit
from ..estimate.univariate import UniFit
from ..exports.catalog import Catalog, QuestionSpec
from ..exports.readers import FileInfo
from ..exports.rejections import Rejections
from ..exports.subgroups import SEPARATOR, Subgroups
from . import univariate

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


def finite(value: float) -> float | None:
    """The value, or None (JSON null) where it is infinite or not a number."""
    return value if math.isfinite(value) else None


def epsilon_words(epsilon: float) -> str:
    """An epsilon as people read it, to four significant digits.

    ``ln 3 = 1.099`` when e^epsilon is a simple ratio (denominator up to 10), else ``1.5``.
    """
    shown = f"{epsilon:.4g}"
    ratio = Fraction(math.exp(epsilon)).limit_denominator(10)
    if ratio > 1 and math.isclose(math.log(ratio), epsilon, rel_tol=1e-9, abs_tol=1e-12):
        return f"ln {ratio} = {shown}" if ratio.denominator == 1 else f"ln({ratio}) = {shown}"
    return shown


def privacy_words(privacy: Privacy) -> str:
    """The guarantee in a plain sentence, or why there is no epsilon.

    ``epsilon = ln 3 = 1.099: any report is at most 3 times as likely ...``.
    """
    if math.isinf(privacy.epsilon):
        return privacy.describe()
    ratio = math.exp(privacy.epsilon)
    delta = f", delta = {privacy.delta:.3g}" if privacy.delta else ""
    unless = ", except with chance delta" if privacy.delta else ""
    return (f"epsilon = {epsilon_words(privacy.epsilon)}{delta}: any report is at most "
            f"{ratio:.3g} times as likely under one true answer as under another{unless}")


def privacy_dict(privacy: Privacy) -> dict[str, Any]:
    """Epsilon (null when infinite), delta and a plain sentence."""
    return {
        "epsilon": finite(privacy.epsilon),
        "delta": privacy.delta,
        "epsilon_infinite": math.isinf(privacy.epsilon),
        "statement": privacy_words(privacy),
    }


@dataclass
class Labels:
    """What reports show for ids and values: the questions' short names and options' labels."""

    #: Per question id: its short name (only questions that have one).
    names: dict[str, str] = field(default_factory=dict)
    #: Per question id: each value's label.
    values: dict[str, dict[str, str]] = field(default_factory=dict)

    def question(self, qid: str) -> str:
        """The short name of a question, else its id."""
        return self.names.get(qid, qid)

    def value(self, qid: str, value: str) -> str:
        """A value's label (the value itself when it has none)."""
        return self.values.get(qid, {}).get(value, value)

    def _cell_labels(self, subgroups: Subgroups | None,
                     name: str) -> list[tuple[str, str]] | None:
        """(by-question, its answer's label) of a subgroup, or None when name is not one."""
        if subgroups is None or not subgroups.questions:
            return None
        try:
            cell = subgroups.cell_of(name)
        except ValueError:
            return None
        return [(q, self.value(q, a)) for q, a in cell.items()]

    def cell(self, subgroups: Subgroups | None, name: str) -> str:
        """A subgroup's name with each by-question's answer as its label."""
        labels = self._cell_labels(subgroups, name)
        return name if labels is None else SEPARATOR.join(label for _, label in labels)

    def where(self, subgroups: Subgroups | None, name: str) -> str:
        """``year = First, sex = Women``: a subgroup in words (its labels)."""
        labels = self._cell_labels(subgroups, name)
        return name if labels is None else ", ".join(f"{q} = {label}" for q, label in labels)


def labels_of(catalog: Catalog) -> Labels:
    """Every question's short name and value labels, the first version's first."""
    labels = Labels()
    for version in catalog.versions:
        for question in version.questions:
            if question.short:
                labels.names.setdefault(question.id, question.short)
            values = labels.values.setdefault(question.id, {})
            for value, label in question.labels.items():
                values.setdefault(value, label)
    return labels


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

    def tallied(self, column: int | None = None) -> univariate.Tallied:
        """The counts per (group, report) of this RRreg design: all subgroups, or one column."""
        assert self.question is not None
        counts = self.by_group if self.by_group is not None else self.counts[None]
        return univariate.Tallied(
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
            "epsilon": finite(self.privacy.epsilon),
            "delta": self.privacy.delta,
            "privacy": privacy_dict(self.privacy)["statement"],
        }
        out.update(figures)
        if self.fit is not None:
            out.update(univariate.fit_dict(self.fit))
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
                    out["by"]["groups"][name]["parameters"] = univariate.parameters(result)
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
            out["estimate"], out["se"] = finite(fit.mean), finite(fit.se)
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
            "epsilon": finite(self.privacy.epsilon), "delta": self.privacy.delta,
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
    #: The cells of ``--by`` (one question, or several crossed); None before they are known.
    subgroups: Subgroups | None = None
    #: Short names and value labels, for the reports.
    labels: Labels = field(default_factory=Labels)
    #: Did randomized response work? (rrsite.analyze.compliance: its ``to_dict()``), or None.
    compliance: dict[str, Any] | None = None

    @property
    def by_questions(self) -> list[str]:
        """The ``--by`` questions (several when crossed; empty without --by)."""
        return list(self.subgroups.questions) if self.subgroups is not None else []

    def label(self, qid: str | None, value: str) -> str:
        """The label of ``value`` of question ``qid``, or the value itself."""
        return self.labels.value(qid or "", value)

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
            "by_questions": self.by_questions,
            "files": [
                {"path": f.path, "format": f.format, "rows": f.rows, "notes": list(f.notes)}
                for f in self.files
            ],
            "rows": {"read": self.rows_read, "accepted": self.rows_accepted,
                     "rejected": self.rejected.total},
            "versions": self.versions,
            "rejected": self.rejected.to_dict(),
            "privacy": self.privacy,
            "questions": [self._cells(q.to_dict()) for q in self.questions],
            "direct": [d.to_dict() for d in self.direct],
            "numbers": [self._cells(n.to_dict()) for n in self.numbers],
            "population": self.population,
            "notes": list(self.notes),
            **({"sample_design": self.sample_design} if self.sample_design is not None else {}),
            **({"compliance": self.compliance} if self.compliance is not None else {}),
        }

    def _cells(self, entry: dict[str, Any]) -> dict[str, Any]:
        """A question's ``by`` with its by-questions and each subgroup's ``cell`` (answers)."""
        by = entry.get("by")
        if by is None or self.subgroups is None or not self.subgroups.questions:
            return entry
        by["questions"] = list(self.subgroups.questions)
        for name, group in by["groups"].items():
            try:
                group["cell"] = self.subgroups.cell_of(name)
            except ValueError:
                continue
        return entry

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


def composed(questions: Iterable[QuestionResult]) -> Privacy:
    """Basic composition over results (used by reports)."""
    return compose(q.privacy for q in questions)
