"""`rrsite analyze --weights/--strata/--cluster/--fpc`: design-based estimates of every question.

Rows are read and checked exactly as `rrsite analyze` does (the same rejections); each accepted
row keeps its design cell: its weight (or inclusion probability), stratum, cluster and
finite-population correction, read from columns of the export or, with ``--design FILE.csv``,
from a CSV joined by respondent token. Every sensitive question's reports become the per-respondent
de-biased variable of rrsite.estimate.survey_design (with the row's own version's design), whose
weighted (Hajek) mean, Horvitz-Thompson total and, given ``--population N``, known-N mean are
estimated with design-based standard errors.

Bad design values stop the analysis with every bad row counted and the first few named by
``file:line`` (exit code 2): a weight that is missing, not a number, zero or negative; an
inclusion probability outside (0, 1]; a missing stratum or cluster; an export row whose token is
not in the design file; a stratum with a single cluster (unless ``--lonely-psu collapse``).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from ..errors import RRSiteError
from ..estimate import numbers as number_estimates
from ..estimate import survey_design as sd
from ..estimate.models import TWO_GROUP_MODELS, Design
from ..exports.catalog import Catalog, QuestionSpec
from ..exports.readers import EXTRA_PREFIX, ExportError, FileInfo, read_export
from ..exports.rejections import Rejections
from ..exports.subgroups import NO_ANSWER, Subgroups, parse_by
from ..exports.tally import Tally
from .univariate import model_of

#: How many bad rows an error message names.
SHOWN = 5
#: The submission field / export column of a design cell id (`rrsite invite --frame`).
CELL = "cell"
RESPONDENT_KEYS = ("respondent", "token", "respondent_token")


def design_file_key(path: str) -> str | None:
    """The column a design file is joined by: ``cell`` when it has one, else the respondent's."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            header = next(csv.reader(handle), [])
    except OSError as error:
        raise DesignInputError(f"{path}: cannot read: {error.strerror or error}") from error
    if CELL in header:
        return CELL
    return next((h for h in header if h.strip().lower() in RESPONDENT_KEYS), None)


class DesignInputError(RRSiteError):
    """A design column holds a bad value (the message names file:line)."""


@dataclass
class SampleOptions:
    """Where the design's columns are, and how to estimate (the CLI's options)."""

    weights: str | None = None
    inclusion: str | None = None
    strata: str | None = None
    cluster: str | None = None
    fpc: str | None = None
    design_file: str | None = None
    variance: str = "linearization"
    lonely: str = "refuse"
    population: float | None = None
    #: ``--rake VAR=margins.csv``: (column, margins file) per raking variable.
    rake: list[tuple[str, str]] = field(default_factory=list)

    def columns(self) -> list[str]:
        """The design column names given (weights, strata, ..., the raking variables)."""
        names = [c for c in (self.weights, self.inclusion, self.strata, self.cluster, self.fpc)
                 if c is not None]
        return names + [v for v, _ in self.rake if v not in names]

    def export_columns(self) -> list[str]:
        """Columns read from the export: all without --design; else the raking variables.

        With a design file keyed by ``cell`` (`rrsite invite --frame`), also the export's cell.
        """
        if not self.design_file:
            return self.columns()
        key = [CELL] if design_file_key(self.design_file) == CELL else []
        return key + [v for v, _ in self.rake]

    def check(self) -> None:
        """Options that cannot work together."""
        if self.weights is not None and self.inclusion is not None:
            raise RRSiteError("give either --weights or --inclusion, not both")
        if self.variance not in sd.VARIANCE_METHODS:
            raise RRSiteError(f"--variance must be one of {', '.join(sd.VARIANCE_METHODS)}, "
                              f"got {self.variance!r}")
        if self.lonely not in sd.LONELY_METHODS:
            raise RRSiteError(f"--lonely-psu must be one of {', '.join(sd.LONELY_METHODS)}")
        if self.population is not None and not (math.isfinite(self.population)
                                                and self.population > 0):
            raise RRSiteError(f"--population must be a positive number, got {self.population}")

    def describe(self) -> dict[str, Any]:
        """The options, as JSON."""
        return {
            "weights_column": self.weights, "inclusion_column": self.inclusion,
            "strata_column": self.strata, "cluster_column": self.cluster,
            "fpc_column": self.fpc, "design_file": self.design_file,
            "variance_method": self.variance, "lonely_psu": self.lonely,
            "population": self.population,
            "rake": [{"variable": v, "margins": path} for v, path in self.rake],
        }


class Places(Sequence[str]):
    """``file:line`` of each accepted row, built only when a message needs one."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.file_index: list[np.ndarray] = []
        self.lines: list[np.ndarray] = []
        self._joined: tuple[np.ndarray, np.ndarray] | None = None

    def add(self, path: str, lines: np.ndarray) -> None:
        """The accepted rows of one batch of ``path``."""
        if not self.files or self.files[-1] != path:
            self.files.append(path)
        self.file_index.append(np.full(len(lines), len(self.files) - 1, dtype=np.int32))
        self.lines.append(np.asarray(lines, dtype=np.int64))
        self._joined = None

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._joined is None:
            self._joined = (
                np.concatenate(self.file_index) if self.file_index else np.zeros(0, np.int32),
                np.concatenate(self.lines) if self.lines else np.zeros(0, np.int64))
        return self._joined

    def __len__(self) -> int:
        return len(self._arrays()[1])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        files, lines = self._arrays()
        return f"{self.files[int(files[index])]}:{int(lines[index])}"


@dataclass
class DesignRows:
    """The accepted rows: where they came from, their version, answers and design cell."""

    where: Places = field(default_factory=Places)
    version: list[np.ndarray] = field(default_factory=list)
    tokens: list[object] = field(default_factory=list)
    codes: dict[str, list[np.ndarray]] = field(default_factory=dict)
    groups: dict[str, list[np.ndarray]] = field(default_factory=dict)
    cells: dict[str, list[object]] = field(default_factory=dict)
    #: Per number question: each row's reported number (NaN when none).
    numbers: dict[str, list[np.ndarray]] = field(default_factory=dict)
    #: Per frequency-oracle question: each row's de-biased supports (n x k; NaN when none).
    oracles: dict[str, list[np.ndarray]] = field(default_factory=dict)


def _read_rows(
    paths: Sequence[str | Path], catalog: Catalog, column_map: dict[str, str],
    options: SampleOptions,
) -> tuple[Places, np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray],
           dict[str, list[object]], list[object], dict[str, np.ndarray]]:
    columns = options.export_columns()
    rows = DesignRows()
    rejections = Rejections()
    tally = Tally(catalog, None, rejections)
    qids = catalog.question_ids()
    numeric = {qid for qid in qids if catalog_numeric(catalog, qid)}
    for path in paths:
        if not Path(path).is_file():
            raise ExportError(f"{path}: no such file")
        info = FileInfo(str(path), "")
        seen_columns: set[str] = set()
        for batch in read_export(path, catalog, column_map, rejections, info, extra=columns):
            checked = tally.check(batch)
            tally.commit(checked)
            keep = checked.status == 0
            rows.where.add(str(path), batch.rows[keep])
            rows.version.append(checked.version[keep])
            token = batch.columns.get("respondent")
            values = token.objects() if token is not None else [None] * len(batch)
            rows.tokens.extend(v for v, k in zip(values, keep.tolist(), strict=True) if k)
            for qid in qids:
                local = checked.local_codes.get(qid)
                rows.codes.setdefault(qid, []).append(
                    np.full(int(keep.sum()), -2, dtype=np.int32) if local is None
                    else np.asarray(local)[keep])
                group = checked.group_codes.get(qid)
                rows.groups.setdefault(qid, []).append(
                    np.zeros(int(keep.sum()), dtype=np.int8) if group is None
                    else np.asarray(group)[keep].astype(np.int8))
                oracles = [(m, q) for m, q in catalog.questions_named(qid) if q.oracle]
                if oracles:  # (support - q) / (p - q) of each answered row, else NaN
                    rows.oracles.setdefault(qid, []).append(
                        _debiased_supports(oracles, checked.supports.get(qid, {}),
                                           checked.version, len(batch))[keep])
                if qid in numeric:
                    reported = checked.number_values.get(qid)
                    rows.numbers.setdefault(qid, []).append(
                        np.full(int(keep.sum()), np.nan) if reported is None
                        else np.asarray(reported, dtype=np.float64)[keep])
            for name in columns:
                column = batch.columns.get(EXTRA_PREFIX + name)
                if column is None:
                    continue
                seen_columns.add(name)
                cells = column.objects()
                rows.cells.setdefault(name, []).extend(
                    c for c, k in zip(cells, keep.tolist(), strict=True) if k)
        missing = [name for name in columns if name not in seen_columns]
        if missing and info.rows:
            raise DesignInputError(
                f"{path}:1: no column {missing[0]!r} (the design's columns must be in the export, "
                "or in a CSV given with --design FILE.csv, joined by respondent token)")
    version = np.concatenate(rows.version) if rows.version else np.zeros(0, dtype=np.int32)
    codes = {q: np.concatenate(parts) for q, parts in rows.codes.items()}
    groups = {q: np.concatenate(parts) for q, parts in rows.groups.items()}
    numbers = {q: np.concatenate(parts) for q, parts in rows.numbers.items()}
    numbers.update({q: np.concatenate(parts) for q, parts in rows.oracles.items()})
    return rows.where, version, codes, groups, rows.cells, rows.tokens, numbers


def _debiased_supports(oracles: list[tuple[int, QuestionSpec]],
                       found: dict[int, tuple[np.ndarray, np.ndarray]], version: np.ndarray,
                       n: int) -> np.ndarray:
    """Per row and answer, (support - q) / (p - q) under the row's version's oracle.

    Unbiased for the indicator of the true answer; rows that did not answer are NaN.
    """
    k = len(oracles[0][1].values)
    out = np.full((n, k), np.nan)
    for m, question in oracles:
        if m not in found or question.oracle is None:
            continue
        table, answered = found[m]
        rows = (version == m) & answered
        p, q = question.oracle.p, question.oracle.q
        out[rows] = (table[rows] - q) / (p - q)
    return out


def catalog_numeric(catalog: Catalog, qid: str) -> bool:
    """Whether some version asks ``qid`` as a randomized number question."""
    return any(q.numeric for _, q in catalog.questions_named(qid))


def _join_design_file(
    path: str, columns: list[str], tokens: list[object], where: Sequence[str],
) -> dict[str, list[object]]:
    """The design columns of each export row, from a CSV keyed by respondent token or cell id.

    ``tokens``: each export row's respondent token, or its cell id for a file keyed by cell
    (many rows share a cell).
    """
    with _open_csv(path) as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        key = CELL if CELL in header else next(
            (h for h in header if h.strip().lower() in RESPONDENT_KEYS), None)
        if key is None:
            raise DesignInputError(f"{path}:1: no respondent or cell column (the design file is "
                                   "joined to the export by respondent token, or by the cell id "
                                   "of `rrsite invite --frame`)")
        missing = [c for c in columns if c not in header]
        if missing:
            raise DesignInputError(f"{path}:1: no column {missing[0]!r} (columns: "
                                   f"{', '.join(header)})")
        table: dict[str, dict[str, str]] = {}
        for record in reader:
            token = (record.get(key) or "").strip()
            if token in table:
                raise DesignInputError(f"{path}:{reader.line_num}: {key} {token!r} appears "
                                       "twice")
            table[token] = record
    out: dict[str, list[object]] = {c: [] for c in columns}
    unknown: list[str] = []
    for token, place in zip(tokens, where, strict=True):
        found = table.get(str(token)) if token is not None else None
        if found is None:
            unknown.append(f"{place}: {key} {token!r} is not in {path}")
        for c in columns:
            out[c].append(None if found is None else found.get(c))
    if unknown:
        raise DesignInputError(_many(unknown, "rows have no design cell"))
    return out


def _many(messages: list[str], what: str) -> str:
    shown = "\n".join("  " + m for m in messages[:SHOWN])
    more = f"\n  ... and {len(messages) - SHOWN:,} more" if len(messages) > SHOWN else ""
    return f"{len(messages):,} {what}:\n{shown}{more}"


def _numbers(values: list[object], where: Sequence[str], name: str, what: str,
             low_open: float, high: float | None) -> np.ndarray:
    out = np.full(len(values), np.nan)
    bad: list[str] = []
    for i, value in enumerate(values):
        text = "" if value is None else str(value).strip()
        try:
            number = float(text) if not isinstance(value, bool) else math.nan
        except ValueError:
            number = math.nan
        if text == "":
            bad.append(f"{where[i]}: no {what} (column {name!r} is empty)")
        elif not math.isfinite(number):
            bad.append(f"{where[i]}: {what} {text!r} is not a number")
        elif number <= low_open or (high is not None and number > high):
            limit = f"in ({low_open:g}, {high:g}]" if high is not None else f"> {low_open:g}"
            bad.append(f"{where[i]}: {what} {text!r} must be {limit}")
        else:
            out[i] = number
    if bad:
        raise DesignInputError(_many(bad, f"rows with a bad {what}"))
    return out


def _labels(values: list[object], where: Sequence[str], name: str, what: str) -> list[str]:
    bad = [f"{where[i]}: no {what} (column {name!r} is empty)"
           for i, v in enumerate(values) if v is None or str(v).strip() == ""]
    if bad:
        raise DesignInputError(_many(bad, f"rows without a {what}"))
    return [str(v).strip() for v in values]


@dataclass
class DesignBased:
    """The design and every question's design-based estimates (``Analysis.sample_design``)."""

    options: SampleOptions
    design: sd.SampleDesign
    questions: dict[str, dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    #: Randomized number questions: ``design_based`` of each ``numbers`` entry (JSON).
    numbers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``"sample_design"`` of the JSON report (docs/contracts.md)."""
        return {**self.options.describe(), **self.design.describe(), "notes": list(self.notes)}


def build_design(
    paths: Sequence[str | Path], catalog: Catalog, column_map: dict[str, str],
    options: SampleOptions,
) -> tuple[sd.SampleDesign, Places, np.ndarray, dict[str, np.ndarray],
           dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Read the rows and their design cells; check them; the SampleDesign.

    Returns the design, where each row came from, its version, the answer codes and groups of
    each question, and the reported numbers of each randomized number question.
    """
    options.check()
    if options.weights is None and options.inclusion is None:
        raise RRSiteError("a design-based analysis needs --weights COL (or --inclusion COL)")
    where, version, codes, groups, cells, tokens, numbers = _read_rows(
        paths, catalog, column_map, options)
    if len(where) == 0:
        raise RRSiteError("no accepted row to estimate from")
    if options.design_file:
        design_columns = [c for c in options.columns() if c not in options.export_columns()]
        keys = cells.get(CELL, []) if design_file_key(options.design_file) == CELL else tokens
        cells.update(_join_design_file(options.design_file, design_columns, keys, where))
    if options.weights is not None:
        weights = _numbers(cells[options.weights], where, options.weights, "weight", 0.0, None)
    else:
        assert options.inclusion is not None
        weights = 1.0 / _numbers(cells[options.inclusion], where, options.inclusion,
                                 "inclusion probability", 0.0, 1.0)
    strata = (_labels(cells[options.strata], where, options.strata, "stratum")
              if options.strata else None)
    clusters = (_labels(cells[options.cluster], where, options.cluster, "cluster")
                if options.cluster else None)
    fpc = (_numbers(cells[options.fpc], where, options.fpc, "fpc", 0.0, None)
           if options.fpc else None)
    try:
        design = sd.SampleDesign.build(weights, strata, clusters, fpc, options.lonely)
        if options.rake:
            margins = [(name, _labels(cells[name], where, name, f"value of {name}"),
                        read_margins(path, name, options.population))
                       for name, path in options.rake]
            design = design.rake(margins)
    except sd.SampleDesignError as error:
        place = f"{where[error.row]}: " if error.row is not None else ""
        raise DesignInputError(f"{place}{error}") from error
    return design, where, version, codes, groups, numbers


def parse_rake(items: Sequence[str]) -> list[tuple[str, str]]:
    """``--rake VAR=margins.csv`` options."""
    out: list[tuple[str, str]] = []
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise RRSiteError(f"--rake {item!r}: write VARIABLE=margins.csv")
        if name in [n for n, _ in out]:
            raise RRSiteError(f"--rake: {name!r} is given twice")
        out.append((name, path))
    return out


def _open_csv(path: str) -> TextIO:
    """``path`` opened for the csv module (BOM skipped), or a DesignInputError naming it."""
    try:
        return open(path, newline="", encoding="utf-8-sig")  # noqa: SIM115
    except OSError as error:
        raise DesignInputError(f"{path}: cannot read: {error.strerror or error}") from error


def read_margins(path: str, name: str, population: float | None) -> dict[str, float]:
    """A margins file: a category column, then ``count`` (population counts) or ``share``.

    Shares (adding up to 1) need ``--population N``; they become counts N x share.
    """
    with _open_csv(path) as handle:
        reader = csv.reader(handle)
        header = next(reader, [])
        if len(header) != 2 or header[1].strip().lower() not in ("count", "share"):
            raise DesignInputError(f"{path}:1: a margins file has two columns: the value of "
                                   f"{name} and 'count' (or 'share'), got {header}")
        shares = header[1].strip().lower() == "share"
        margins: dict[str, float] = {}
        for record in reader:
            line = reader.line_num
            if not record or all(not c.strip() for c in record):
                continue
            if len(record) != 2:
                raise DesignInputError(f"{path}:{line}: two columns expected, got {len(record)}")
            value, text = record[0].strip(), record[1].strip()
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if not math.isfinite(number) or number < 0:
                raise DesignInputError(f"{path}:{line}: {text!r} is not a count >= 0")
            if value in margins:
                raise DesignInputError(f"{path}:{line}: {value!r} appears twice")
            margins[value] = number
    if not margins:
        raise DesignInputError(f"{path}: no margins")
    if shares:
        total = sum(margins.values())
        if abs(total - 1.0) > 1e-6:
            raise DesignInputError(f"{path}: the shares add up to {total:g}, not 1")
        if population is None:
            raise DesignInputError(f"{path}: shares need the population size: --population N")
        margins = {k: v * population for k, v in margins.items()}
    return margins


def _question_data(
    catalog: Catalog, qid: str, values: tuple[str, ...], labels: tuple[str, ...],
    version: np.ndarray, codes: np.ndarray, groups: np.ndarray, weights: np.ndarray,
    notes: list[str],
) -> tuple[dict[str, sd.Debiased], np.ndarray] | None:
    """Per estimated label, the de-biased variable of every row; and the rows that answered."""
    n = len(version)
    r = {label: np.zeros(n) for label in labels}
    v = {label: np.zeros(n) for label in labels}
    e = {label: np.zeros(n) for label in labels}
    answered = np.zeros(n, dtype=bool)
    for m, question in catalog.questions_named(qid):
        rows = (version == m) & (codes >= 0)
        if not question.sensitive or not rows.any():
            continue
        if set(question.values) != set(values):
            notes.append(f"{qid}: version {catalog.versions[m].version} asks other answers; its "
                         "rows are left out of the design-based estimate")
            continue
        local = codes[rows].astype(np.int64)
        design = model_of(question) if question.uses_rrreg else None
        if design is not None:
            label = labels[-1]
            if design.model in TWO_GROUP_MODELS:
                data = sd.debias_two_group(design, codes.clip(0), groups, weights, rows)
                r[label][rows], v[label][rows] = data.r[rows], data.v[rows]
                e[label][rows] = data.u[rows]
            elif isinstance((question.manifest.get("rrreg") or {}).get("group_p"), list):
                # the extended crosswise model: each row is crosswise with its group's p
                group_p = question.manifest["rrreg"]["group_p"]
                for g, rate in ((1, group_p[0]), (2, group_p[1])):
                    inside = rows & (groups == g)
                    data = sd.debias_rrreg(Design(design.model, float(rate)),
                                           codes[inside].astype(np.int64))
                    r[label][inside], v[label][inside], e[label][inside] = (data.r, data.v,
                                                                            data.r)
            else:
                data = sd.debias_rrreg(design, local)
                r[label][rows], v[label][rows], e[label][rows] = data.r, data.v, data.r
        else:
            order = [question.values.index(value) for value in values]
            matrix = question.matrix[np.ix_(order, order)]
            canonical = np.argsort(order)[local]
            per_value = sd.debias_matrix(canonical, matrix)
            for label in labels:
                data = per_value[values.index(label)]
                r[label][rows], v[label][rows], e[label][rows] = data.r, data.v, data.r
        answered |= rows
    if not answered.any():
        return None
    return {label: sd.Debiased(r[label], v[label], e[label]) for label in labels}, answered


def _oracle_data(rows: np.ndarray, values: tuple[str, ...], labels: tuple[str, ...],
                 ) -> tuple[dict[str, sd.Debiased], np.ndarray] | None:
    """A frequency oracle's de-biased supports per answer, r = (support - q) / (p - q).

    E[r | truth] is the truth's indicator, and r (r - 1) an unbiased estimate of its
    randomization variance (as for a yes/no design).
    """
    answered = ~np.isnan(rows[:, 0]) if rows.size else np.zeros(0, dtype=bool)
    if not answered.any():
        return None
    data = {}
    for label in labels:
        r = np.where(answered, rows[:, values.index(label)], 0.0)
        data[label] = sd.Debiased(r, r * (r - 1.0), r)
    return data, answered


def _by_values(catalog: Catalog, by: str, version: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Each row's answer to the directly asked question ``by`` (NO_ANSWER when none)."""
    out = np.full(len(version), NO_ANSWER, dtype=object)
    for m, question in catalog.questions_named(by):
        rows = (version == m) & (codes >= 0)
        answers = np.array(question.answers, dtype=object)
        out[rows] = answers[codes[rows]]
    return out


def _cells(catalog: Catalog, by: Sequence[str], version: np.ndarray,
           codes: dict[str, np.ndarray]) -> tuple[np.ndarray, dict[str, int]]:
    """Each row's subgroup (a cell of the crossed by-questions) and every cell's rank."""
    answers: dict[str, list[str]] = {}
    for qid in by:
        seen: dict[str, None] = {}
        for _, question in catalog.questions_named(qid):
            seen.update(dict.fromkeys(question.answers))
        answers[qid] = list(seen)
    subgroups = Subgroups.of(by, answers)
    names = subgroups.names_of({q: _by_values(catalog, q, version, codes[q]) for q in by})
    return names, {name: i for i, name in enumerate(subgroups.names)}


def design_based(
    paths: Sequence[str | Path], catalog: Catalog, column_map: dict[str, str],
    options: SampleOptions, questions: Sequence[Any], confidence: float,
    by: str | Sequence[str] | None = None,
) -> DesignBased:
    """Design-based estimates of every question result (``api.QuestionResult``) given.

    ``by``: also per answer of that directly asked question, or per cell of several crossed
    (domains of the whole design).
    """
    design, _, version, codes, groups, numbers = build_design(paths, catalog, column_map,
                                                              options)
    # frequency oracles' de-biased supports (n x k) travel with the numbers (n)
    supports = {qid: rows for qid, rows in numbers.items() if rows.ndim == 2}
    numbers = {qid: rows for qid, rows in numbers.items() if rows.ndim == 1}
    by_questions = parse_by(by)
    by_values, rank = (_cells(catalog, by_questions, version, codes) if by_questions
                       else (None, {}))
    notes: list[str] = []
    if design.collapsed:
        notes.append("strata with a single cluster collapsed: " + ", ".join(
            f"{a} into {b}" for a, b in design.collapsed))
    out: dict[str, dict[str, Any]] = {}
    for result in questions:
        qid = result.id
        if qid not in codes:
            continue  # a result relabelled for other answer values: not estimated here
        labels = tuple(result.estimate.labels)
        if qid in supports:
            found = _oracle_data(supports[qid], tuple(result.values), labels)
        else:
            found = _question_data(catalog, qid, tuple(result.values), labels, version,
                                   codes[qid], groups.get(qid, np.zeros(len(version),
                                                                        dtype=np.int8)),
                                   design.weights, notes)
        if found is None:
            continue
        data, answered = found
        entry: dict[str, Any] = {"n": int(answered.sum()), "values": {}}
        for label in labels:
            mean = sd.mean(data[label], design, method=options.variance, confidence=confidence,
                           domain=answered)
            total = sd.total(data[label], design, method=options.variance,
                             confidence=confidence, domain=answered)
            figures = mean.to_dict()
            figures["total"] = total.to_dict()
            if options.population is not None:
                figures["mean_known_n"] = sd.mean(
                    data[label], design, population=options.population, method=options.variance,
                    confidence=confidence, domain=answered).to_dict()
            entry["values"][label] = figures
        if by_values is not None:
            entry["by"] = {}
            for name in sorted(set(by_values.tolist()), key=lambda v: (rank.get(v, len(rank)), v)):
                domain = answered & (by_values == name)
                if not domain.any():
                    continue
                entry["by"][name] = {"n": int(domain.sum()), "values": {
                    label: sd.mean(data[label], design, method=options.variance,
                                   confidence=confidence, domain=domain).to_dict()
                    for label in labels}}
        if int(answered.sum()) < design.n:
            entry["note"] = (f"{design.n - int(answered.sum()):,} rows did not answer: the "
                             "estimate is over the rows that did (a domain of the design)")
        out[qid] = entry
    estimates = _Estimates(design, options, confidence)
    number_out = {qid: _number_entry(catalog, qid, reports, version, estimates, by_values, rank)
                  for qid, reports in numbers.items()}
    if options.variance == "rrtcs-deville":
        notes.append("variance by RRTCS's analytic default (Deville's single-stage "
                     "approximation): strata and clusters are ignored; for comparison only")
    if options.variance == "rrtcs-jackknife":
        notes.append("variance by RRTCS's jackknife: its finite-population correction shrinks "
                     "the randomization variance and nothing adds it back; for comparison only")
    return DesignBased(options, design, out, notes, number_out)


@dataclass
class _Estimates:
    """The design and the options every estimate uses."""

    design: sd.SampleDesign
    options: SampleOptions
    confidence: float

    def figures(self, data: sd.Debiased, domain: np.ndarray, totals: bool) -> dict[str, Any]:
        """The Hajek mean (and with ``totals``, the HT total and the known-N mean)."""
        method = self.options.variance
        out = sd.mean(data, self.design, method=method, confidence=self.confidence,
                      domain=domain).to_dict()
        if totals:
            out["total"] = sd.total(data, self.design, method=method, confidence=self.confidence,
                                    domain=domain).to_dict()
            if self.options.population is not None:
                out["mean_known_n"] = sd.mean(
                    data, self.design, population=self.options.population, method=method,
                    confidence=self.confidence, domain=domain).to_dict()
        return out


def _number_debiased(
    catalog: Catalog, qid: str, reports: np.ndarray, version: np.ndarray, design: sd.SampleDesign,
    method: str,
) -> tuple[sd.Debiased, np.ndarray] | str:
    """Each row's de-biased number r_i and Var(r_i | y_i) estimate v_i under its version's design.

    Returns the reason when some version's design has no such per-respondent variable.
    """
    n = len(version)
    r, v = np.zeros(n), np.zeros(n)
    answered = np.zeros(n, dtype=bool)
    needs_v = design.has_fpc or method == "rrtcs-deville"
    for m, question in catalog.questions_named(qid):
        rows = (version == m) & ~np.isnan(reports)
        if not question.numeric or not rows.any():
            continue
        number = question.number_design
        assert number is not None
        where = f"version {catalog.versions[m].version}'s design {number.name}"
        if number.name == "mixture-unknown":
            return (f"{where} estimates the mean from the two groups' means together: no "
                    "respondent's report alone de-biases to its true number (E[r_i | y_i] = y_i), "
                    "which a design-based estimate needs")
        r[rows] = number_estimates.debias(number, reports[rows])
        try:
            v[rows] = number_estimates.conditional_variance(number, r[rows])
        except number_estimates.NumberEstimateError:
            if needs_v:
                why = ("a finite-population correction (--fpc) shrinks the randomization "
                       "variance, which must be added back" if design.has_fpc else
                       "RRTCS's Deville variance adds the randomization variance")
                return (f"{where} has no unbiased per-respondent estimate of its randomization "
                        f"variance (its report takes two values whatever the true number), and "
                        f"{why}: give no --fpc (the with-replacement variance contains it)")
            v[rows] = np.nan  # not used: the with-replacement variance already contains it
        answered |= rows
    return sd.Debiased(r, v), answered


def _number_entry(
    catalog: Catalog, qid: str, reports: np.ndarray, version: np.ndarray, estimates: _Estimates,
    by_values: np.ndarray | None, rank: dict[str, int],
) -> dict[str, Any]:
    """``design_based`` of one randomized number question (docs/contracts.md)."""
    design = estimates.design
    found = _number_debiased(catalog, qid, reports, version, design, estimates.options.variance)
    if isinstance(found, str):
        return {"n": int(np.count_nonzero(~np.isnan(reports))), "values": {},
                "not_estimated": found}
    data, answered = found
    count = int(answered.sum())
    if count < 2:
        return {"n": count, "values": {},
                "not_estimated": f"{count} row answered: a design-based estimate needs 2"}
    entry: dict[str, Any] = {"n": count,
                             "values": {"mean": estimates.figures(data, answered, True)}}
    if by_values is not None:
        entry["by"] = {}
        for name in sorted(set(by_values.tolist()), key=lambda v: (rank.get(v, len(rank)), v)):
            domain = answered & (by_values == name)
            if domain.any():
                entry["by"][name] = {"n": int(domain.sum()), "values": {
                    "mean": estimates.figures(data, domain, False)}}
    if count < design.n:
        entry["note"] = (f"{design.n - count:,} rows did not answer: the estimate is over the "
                         "rows that did (a domain of the design)")
    return entry
