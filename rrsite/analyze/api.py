"""The analysis as Python objects: ``analyze(paths, survey=...) -> Analysis`` (for notebooks too).

from rrsite.analyze import analyze
result = analyze(["export.csv"], survey="surveys/honor-code.md")
result.question("violated").estimate.ci_low
result.to_dict()        # the JSON of `rrsite analyze --format json`
result.to_pandas()      # one row per question, answer and subgroup (needs pandas)

The steps: the survey's versions (rrsite.exports.catalog), every export read and checked into
a tally (rrsite.exports), yes-no and choice questions de-biased (rrsite.analyze.prevalence),
randomized numbers (rrsite.analyze.numbers), and with a sample design the design-based
estimates (rrsite.analyze.sample_design).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import RRSiteError, UsageError
from ..estimate.intervals import METHODS
from ..exports.catalog import CHOICE_TYPES, Catalog, build_catalog
from ..exports.counts import read_counts
from ..exports.pipeline import read_into
from ..exports.progress import Progress
from ..exports.readers import BLOCK_SIZE, ExportError, FileInfo, file_size, parse_mapping
from ..exports.rejections import Rejections
from ..exports.tally import Tally
from .numbers import number_results
from .prevalence import assemble
from .results import Analysis, DirectResult, QuestionResult, privacy_dict
from .sample_design import SampleOptions, design_based


def check_options(catalog: Catalog, confidence: float, interval: str, by: str | None) -> None:
    """--confidence in (0, 1), a known --interval, and --by a direct yes-no or choice question."""
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
    siblings: tuple[str, ...] = (),
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
    ``siblings``: survey ids of the other waves of the survey's series, whose rows are left out
    (rrsite.analyze.panel).
    """
    if population is not None and (isinstance(population, bool) or not population > 0):
        raise UsageError(f"--population must be a positive number, got {population!r}")
    paths = [exports] if isinstance(exports, str | Path) else list(exports)
    if not paths:
        raise UsageError("give at least one export file")
    surveys = [] if survey is None else [survey] if isinstance(survey, str | Path) else list(survey)
    catalog = build_catalog(surveys, manifests)
    check_options(catalog, confidence, interval, by)
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
    tally = Tally(catalog, by, rejections, siblings)
    bar = Progress(sum(file_size(p) for p in paths), enabled=progress)
    files: list[FileInfo] = []
    try:
        extra = sample.export_columns() if sample is not None else []
        read_into(paths, catalog, column_map, rejections, tally, files, block_size, bar, threads,
             extra)
    finally:
        bar.close()
    analysis = assemble(catalog, tally, files, rejections, confidence, interval, by)
    based = None
    if sample is not None:
        based = design_based(paths, catalog, column_map, sample, analysis.questions, confidence,
                             by)
        for question in analysis.questions:
            question.design_based = based.questions.get(question.id)
        analysis.sample_design = based.to_dict()
        analysis.notes.extend(based.notes)
    analysis.population = population
    analysis.numbers = number_results(catalog, tally, confidence, by, population)
    if based is not None:
        for number in analysis.numbers:
            number.design_based = based.numbers.get(number.id)
    analysis.privacy["questions"] += [{"id": n.id, **privacy_dict(n.privacy)}
                                      for n in analysis.numbers]
    if analysis.numbers and any("nothing to de-bias" in note for note in analysis.notes):
        analysis.notes = [note for note in analysis.notes if "nothing to de-bias" not in note]
    return analysis


def analyze_counts(
    path: str | Path, survey: Any = None, manifests: Any = (), *, confidence: float = 0.95,
    by: str | None = None, interval: str = "exact",
) -> Analysis:
    """Estimates from report counts instead of rows (``rrsite analyze --counts FILE.csv``).

    For published tables and counts computed elsewhere; the columns are rrsite.exports.counts'.
    Randomized numbers need every report and are refused there. Bad rows raise ExportError.
    """
    surveys = [] if survey is None else [survey] if isinstance(survey, str | Path) else list(survey)
    catalog = build_catalog(surveys, manifests)
    check_options(catalog, confidence, interval, by)
    tally, info = read_counts(path, catalog, by)
    return assemble(catalog, tally, [info], tally.rejections, confidence, interval, by)


__all__ = ["Analysis", "DirectResult", "QuestionResult", "RRSiteError", "analyze",
           "analyze_counts"]
