"""The analysis as Python objects: ``analyze(paths, survey=...) -> Analysis`` (for notebooks too).

from rrsite.analyze import analyze
result = analyze(["export.csv"], survey="surveys/honor-code.md")
result.question("violated").estimate.ci_low
result.to_dict()        # the JSON of `rrsite analyze --format json`
result.to_pandas()      # one row per question, answer and subgroup (needs pandas)

The steps: the survey's versions (rrsite.exports.catalog), every export read and checked into
a tally (rrsite.exports), yes-no and choice questions de-biased (rrsite.analyze.prevalence),
randomized numbers (rrsite.analyze.numbers), with a sample design the design-based
estimates (rrsite.analyze.sample_design), and the checks of whether randomized response worked
(rrsite.analyze.compliance: the split ballot, comprehension checks, the crosswise anchor).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import RRSiteError, UsageError
from ..estimate.intervals import METHODS
from ..exports.catalog import CHOICE_TYPES, Catalog, build_catalog, exports_and_catalog
from ..exports.counts import read_counts
from ..exports.pipeline import read_into
from ..exports.progress import Progress
from ..exports.readers import (
    BLOCK_SIZE,
    ExportError,
    FileInfo,
    detect_format,
    file_size,
    parse_mapping,
)
from ..exports.rejections import Rejections
from ..exports.sql.checks import uncounted_reason
from ..exports.subgroups import parse_by
from ..exports.tally import Tally
from .compliance import compliance
from .numbers import number_results
from .prevalence import assemble
from .results import Analysis, DirectResult, QuestionResult, privacy_dict
from .sample_design import SampleOptions, design_based


def check_options(catalog: Catalog, confidence: float, interval: str,
                  by: str | Sequence[str] | None) -> tuple[str, ...]:
    """Check --confidence, --interval and --by; return the --by questions (several: crossed).

    --confidence in (0, 1), a known --interval, and each --by a direct yes-no or choice question.
    """
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) \
            or not 0.0 < confidence < 1.0:
        raise UsageError(f"--confidence must be between 0 and 1, got {confidence!r}")
    if interval not in METHODS:
        raise UsageError(f"--interval must be one of {', '.join(METHODS)}, got {interval!r}")
    try:
        questions = parse_by(by)
    except ValueError as error:
        raise UsageError(str(error)) from error
    for qid in questions:
        _check_by(catalog, qid)
    return questions


def _check_by(catalog: Catalog, by: str) -> None:
    """One --by question: asked directly, yes-no or choice."""
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
    by: str | Sequence[str] | None = None,
    interval: str = "exact",
    mapping: Mapping[str, str] | Sequence[str] | None = None,
    progress: bool | None = None,
    block_size: int = BLOCK_SIZE,
    threads: int | None = None,
    sample: SampleOptions | None = None,
    population: float | None = None,
    engine: str = "auto",
    siblings: tuple[str, ...] = (),
) -> Analysis:
    """Read exports, check every row against its version's manifest, and de-bias the counts.

    ``survey``: survey file(s) (.md through rrsite.survey, or a survey.json); ``manifests``:
    more survey.json paths or manifest dicts (older versions). ``mapping``: CSV column -> field
    (``{"Q1": "violated"}`` or ``["Q1=violated"]``). ``progress``: a bar on stderr (default: when
    stderr is a terminal and the run is long). ``threads``: 2 (the default on a machine with
    more than one CPU) checks one block while the next is read; the result is the same.
    ``by``: a directly asked yes-no or choice question (``"year"``) whose answers are subgroups;
    several (``["year", "sex"]`` or ``"year,sex"``) are crossed into cells, every combination.
    ``sample``: the sample design's columns (weights, strata, clusters, fpc; rrsite.analyze.
    sample_design): each sensitive question then also gets design-based estimates.
    ``population``: the population size, for the totals of randomized number questions.
    ``engine``: what reads and counts the rows (the estimates and rejected rows are the same):
    ``duckdb`` (checked by DuckDB, counted in numpy; rrsite.exports.sql), ``numpy`` (rrsite's
    own reader, block by block), or ``auto`` (the default: DuckDB, except for exports under
    ``SMALL_EXPORT`` bytes, which rrsite's reader reads before DuckDB has started).
    ``siblings``: survey ids of the other waves of the survey's series, whose rows are left out
    (rrsite.analyze.panel).
    """
    if population is not None and (isinstance(population, bool) or not population > 0):
        raise UsageError(f"--population must be a positive number, got {population!r}")
    paths, catalog = exports_and_catalog(exports, survey, manifests)
    by_questions = check_options(catalog, confidence, interval, by)
    if mapping is None:
        column_map: dict[str, str] = {}
    elif isinstance(mapping, Mapping):
        column_map = parse_mapping([f"{k}={v}" for k, v in mapping.items()], catalog)
    else:
        column_map = parse_mapping(list(mapping), catalog)
    for path in paths:
        if not Path(path).is_file():
            raise ExportError(f"{path}: no such file")
    extra = sample.export_columns() if sample is not None else []
    tally, files, rejections, note = _tally(paths, catalog, column_map, by_questions, engine,
                                            progress, block_size, threads, extra, siblings)
    analysis = assemble(catalog, tally, files, rejections, confidence, interval)
    if note:
        analysis.notes.append(note)
    based = None
    if sample is not None:
        based = design_based(paths, catalog, column_map, sample, analysis.questions, confidence,
                             by_questions)
        for question in analysis.questions:
            question.design_based = based.questions.get(question.id)
        analysis.sample_design = based.to_dict()
        analysis.notes.extend(based.notes)
    _add_numbers(analysis, catalog, tally, confidence, population,
                 based.numbers if based is not None else None)
    checked = compliance(paths, catalog, column_map, analysis, confidence, block_size)
    if checked:
        analysis.compliance = checked.to_dict()
    return analysis


def _add_compliance(analysis: Analysis, catalog: Catalog, confidence: float) -> Analysis:
    """Did randomized response work? From the counts alone (no rows to read)."""
    checked = compliance([], catalog, {}, analysis, confidence, rows=False)
    if checked:
        analysis.compliance = checked.to_dict()
    return analysis


def _add_numbers(analysis: Analysis, catalog: Catalog, tally: Tally, confidence: float,
                 population: float | None,
                 design_based_numbers: Mapping[str, Any] | None = None) -> Analysis:
    """The randomized number questions of a filled tally, added to its analysis."""
    analysis.population = population
    analysis.numbers = number_results(catalog, tally, confidence, tally.by, population)
    if design_based_numbers is not None:
        for number in analysis.numbers:
            number.design_based = design_based_numbers.get(number.id)
    analysis.privacy["questions"] += [{"id": n.id, **privacy_dict(n.privacy)}
                                      for n in analysis.numbers]
    if analysis.numbers and any("nothing to de-bias" in note for note in analysis.notes):
        analysis.notes = [note for note in analysis.notes if "nothing to de-bias" not in note]
    return analysis


#: Exports smaller than this (bytes, all files together) are read by rrsite's own reader when
#: the engine is "auto": it has counted them before DuckDB would have started.
SMALL_EXPORT = 1 << 20
ENGINES = ("auto", "duckdb", "numpy")


def _tally(
    paths: list[str | Path], catalog: Catalog, column_map: dict[str, str], by: Sequence[str],
    engine: str, progress: bool | None, block_size: int, threads: int | None,
    extra: Sequence[str] = (), siblings: tuple[str, ...] = (),
) -> tuple[Tally, list[FileInfo], Rejections, str | None]:
    """Every export read and counted by the engine chosen (or rrsite's reader, see analyze()).

    DuckDB counts reports by value: a survey with a frequency oracle, or one wave of a series
    read beside the others (``siblings``), is read by rrsite's reader (``auto``; ``duckdb``
    refuses it and says why).
    """
    if engine not in ENGINES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    size = sum(file_size(p) for p in paths)
    parquet = any(detect_format(p) == "parquet" for p in paths)
    note = None
    reason = uncounted_reason(catalog)
    if siblings and reason is None:
        reason = "the waves of a series are read together and each wave's rows picked out"
    if reason is not None and engine == "duckdb":
        raise UsageError(f"--engine duckdb: {reason}; analyze with --engine numpy (rrsite's own "
                         "reader), which does")
    if reason is not None and (size >= SMALL_EXPORT or parquet):
        note = f"read by rrsite's own reader: {reason}"
    if reason is None and (engine == "duckdb"
                           or (engine == "auto" and (size >= SMALL_EXPORT or parquet))):
        from ..exports.sql.files import tally_files
        from ..exports.sql.shown import Disagreement

        rejections = Rejections()
        tally = Tally(catalog, by, rejections)
        try:
            files = tally_files(paths, catalog, column_map, by, rejections, tally, threads,
                                extra)
            return tally, files, rejections, None
        except Disagreement as error:
            if parquet:
                raise ExportError(str(error)) from error
            note = f"read by rrsite's own reader: {error}"
    rejections = Rejections()
    tally = Tally(catalog, by, rejections, siblings)
    bar = Progress(size, enabled=progress)
    read: list[FileInfo] = []
    try:
        read_into(paths, catalog, column_map, rejections, tally, read, block_size, bar, threads,
                  extra)
    finally:
        bar.close()
    return tally, read, rejections, note


def analyze_counts(
    path: str | Path, survey: Any = None, manifests: Any = (), *, confidence: float = 0.95,
    by: str | Sequence[str] | None = None, interval: str = "exact",
    population: float | None = None,
) -> Analysis:
    """Estimates from report counts instead of rows (``rrsite analyze --counts FILE.csv``).

    For published tables and counts computed elsewhere (the query of ``tally_sql``); the
    columns are rrsite.exports.counts'. A randomized number's counts are one row per distinct
    report. Bad rows raise ExportError.
    """
    surveys = [] if survey is None else [survey] if isinstance(survey, str | Path) else list(survey)
    catalog = build_catalog(surveys, manifests)
    by_questions = check_options(catalog, confidence, interval, by)
    tally, info = read_counts(path, catalog, by_questions)
    analysis = assemble(catalog, tally, [info], tally.rejections, confidence, interval)
    _add_numbers(analysis, catalog, tally, confidence, population)
    return _add_compliance(analysis, catalog, confidence)


def analyze_database(
    dsn: str, survey: str, manifests: Iterable[str | Path | Mapping[str, Any]] = (), *,
    confidence: float = 0.95, by: str | Sequence[str] | None = None, interval: str = "exact",
    population: float | None = None,
) -> Analysis:
    """Estimates of one survey counted in the collector's PostgreSQL database, read-only.

    ``rrsite analyze --db URL --survey ID``: the tally runs in the database
    (rrsite.exports.sql.postgres); only counts, each randomized number's distinct reports and
    the few rejected rows shown leave it. The survey's versions are the manifests the collector
    stored (``manifests`` may add more).
    """
    from ..exports.catalog import load_manifest_file
    from ..exports.sql.postgres import tally_database

    if not str(dsn).startswith(("postgresql://", "postgres://")):
        raise UsageError(f"--db {dsn!r}: analyze counts in a PostgreSQL database "
                         "(postgresql://...); export a SQLite collector with rrsite export")
    extra = [dict(m) if isinstance(m, Mapping) else load_manifest_file(m) for m in manifests]
    try:
        by_questions = parse_by(by)
    except ValueError as error:
        raise UsageError(str(error)) from error
    counted = tally_database(str(dsn), survey, by_questions, extra)
    check_options(counted.catalog, confidence, interval, by_questions)
    analysis = assemble(counted.catalog, counted.tally, [counted.info], counted.tally.rejections,
                        confidence, interval)
    _add_numbers(analysis, counted.catalog, counted.tally, confidence, population)
    return _add_compliance(analysis, counted.catalog, confidence)


def tally_sql(
    survey: Any = None, manifests: Any = (), *, dialect: str = "duckdb",
    table: str = "rrsite_export", by: str | Sequence[str] | None = None,
    reports: str | Path | None = None,
) -> str:
    """The tally as one SQL query for ``dialect``, over ``table`` (``rrsite analyze --sql``).

    Its result, saved as CSV, is a counts file (``analyze_counts``). A survey with randomized
    numbers needs two steps: without ``reports`` this is the query of their distinct reports;
    with its result (``reports``, CSV: question, version, report) the counting query, where
    rrsite.core's designs have judged each report possible or not.
    """
    from ..exports.sql.aggregate import Aggregate, table_source
    from ..exports.sql.checks import RowChecks
    from ..exports.sql.dialects import DIALECTS

    if dialect not in DIALECTS:
        raise UsageError(f"--sql must be one of {', '.join(DIALECTS)}, got {dialect!r}")
    surveys = [] if survey is None else [survey] if isinstance(survey, str | Path) else list(survey)
    catalog = build_catalog(surveys, manifests)
    by_questions = check_options(catalog, 0.95, "exact", by)
    reason = uncounted_reason(catalog)
    if reason is not None:
        raise UsageError(f"--sql: {reason}; export the rows and analyze them with rrsite analyze")
    d = DIALECTS[dialect]
    fields, query = table_source(catalog, d, table)
    checks = RowChecks(catalog, by_questions, d, fields)
    if checks.numbers and reports is None:
        return _reports_sql(checks, query.source)
    if checks.numbers:
        assert reports is not None
        checks.impossible = _impossible_reports(catalog, reports)
    return Aggregate(checks, query).sql()


def _reports_sql(checks: Any, source: str) -> str:
    """The first query of a survey with randomized numbers: every distinct report."""
    d = checks.d
    select = checks.select(source, number_text=True, keep_all=True)
    parts = []
    for i, (qid, versions) in enumerate(checks.numbers):
        version = " ".join(f"WHEN rr_m = {m} THEN {d.text(checks.catalog.version_ids[m])}"
                           for m in versions)
        parts.append(f"SELECT DISTINCT {d.text(qid)} AS {d.ident('question')}, CASE {version} "
                     f"END AS {d.ident('version')}, rr_v{i} AS {d.ident('report')} FROM "
                     f"rr_rows WHERE rr_v{i} IS NOT NULL")
    return f"WITH rr_rows AS ({select})\n" + "\nUNION ALL\n".join(parts)


def _impossible_reports(catalog: Catalog, path: str | Path) -> dict[tuple[int, str], list[float]]:
    """Reports of the first query (CSV: question, version, report) that their design cannot give."""
    import csv

    impossible: dict[tuple[int, str], list[float]] = {}
    try:
        handle = open(path, encoding="utf-8-sig", newline="")
    except OSError as error:
        raise ExportError(f"{path}: cannot read: {error.strerror or error}") from error
    with handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            qid, version, text = (row.get(k) or "" for k in ("question", "version", "report"))
            if version not in catalog.version_ids:
                raise ExportError(f"{path}:{line}: version {version!r} is not one of "
                                  f"{', '.join(catalog.version_ids)}")
            m = catalog.version_ids.index(version)
            question = catalog.versions[m].question(qid)
            if question is None or question.number_design is None:
                raise ExportError(f"{path}:{line}: {qid!r} is not a randomized number question")
            try:
                value = float(text)
            except ValueError:
                raise ExportError(f"{path}:{line}: report {text!r} is not a number") from None
            if question.number_design.impossible(value) is not None:
                impossible.setdefault((m, qid), []).append(value)
    return impossible


__all__ = ["Analysis", "DirectResult", "QuestionResult", "RRSiteError", "analyze",
           "analyze_counts", "analyze_database", "tally_sql"]
