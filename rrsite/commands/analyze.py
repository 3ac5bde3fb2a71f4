"""`rrsite analyze`: de-bias exported submissions into estimates, intervals and a privacy report.

rrsite analyze EXPORT... --survey FILE.md [--manifest survey.json ...] [--confidence 0.95]
[--by QUESTION ...] [--format table|json|markdown|html] [-o FILE]
[--interval exact|wilson|wald] [--strict] [--map COLUMN=FIELD ...] [--model "Y ~ A + B" ...]
[--bias-reduced] [--population N]
[--weights COL | --inclusion COL] [--strata COL] [--cluster COL] [--fpc COL]
[--design design.csv] [--variance linearization|jackknife|rrtcs-deville|rrtcs-jackknife]
[--lonely-psu refuse|collapse]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..analyze.sample_design import SampleOptions, parse_rake
from ..errors import RRSiteError
from ..estimate.intervals import METHODS
from ..exports.sql.dialects import DIALECTS
from ..report.analysis import FORMATS

#: rrsite.analyze.api.ENGINES (not imported here: `rrsite analyze --help` stays light).
ENGINES = ("auto", "duckdb", "numpy")


class RejectedRowsError(RRSiteError):
    """--strict and some rows were rejected."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite analyze`."""
    parser.add_argument("exports", nargs="*", metavar="EXPORT",
                        help="exported submissions: rrsite CSV or JSONL, a Netlify Forms CSV, or "
                        "any CSV (with --map); .gz is read too")
    parser.add_argument("--counts", metavar="FILE.csv",
                        help="estimate from report counts instead of rows (columns question, "
                        "version, group, report, subgroup, count; the result of --sql's query)")
    parser.add_argument("--survey", action="append", default=[], metavar="FILE.md",
                        help="the survey file (its current version's designs); with --db, the "
                        "survey's id")
    parser.add_argument("--db", metavar="postgresql://...",
                        help="count in the collector's PostgreSQL database, read-only: only "
                        "counts leave it (give the survey's id with --survey)")
    parser.add_argument("--sql", metavar="DIALECT", choices=sorted(DIALECTS),
                        help="print the tally as one SQL query for duckdb, postgres, spark, "
                        "bigquery or trino, to run where the rows are; save its result as CSV "
                        "and read it with --counts")
    parser.add_argument("--table", default="rrsite_export", metavar="NAME",
                        help="with --sql: the table of rows (the export's columns, plus file "
                        "and row that order them; default rrsite_export)")
    parser.add_argument("--reports", metavar="FILE.csv",
                        help="with --sql, for a survey with randomized numbers: the result of "
                        "the first query printed (its distinct reports)")
    parser.add_argument("--manifest", action="append", default=[], metavar="survey.json",
                        help="a built manifest (e.g. of an earlier version); repeatable")
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="confidence level of the intervals (default 0.95)")
    parser.add_argument("--by", action="append", metavar="QUESTION",
                        help="estimate each sensitive question within each answer of this "
                        "directly asked question; repeated (--by a --by b) or listed (--by a,b), "
                        "the questions are crossed: every combination of their answers")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (default), json, markdown or html (self-contained, with plots)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report here")
    parser.add_argument("--interval", choices=METHODS, default="exact",
                        help="exact (Clopper-Pearson mapped, default), wilson (mapped) or wald")
    parser.add_argument("--strict", action="store_true",
                        help="any rejected row is an error (exit code 2)")
    parser.add_argument("--map", action="append", default=[], metavar="COLUMN=FIELD",
                        dest="mapping",
                        help="read CSV column COLUMN as FIELD (survey, version, respondent, "
                        "submitted_at, a question id, or - to ignore it); repeatable")
    parser.add_argument("--model", action="append", default=[], metavar='"Y ~ A + B"',
                        help="logistic regression of randomized yes-no Y on directly asked "
                        "questions (C(a, ref=\"x\"), scale(n), a:b, a*b), with a random "
                        "intercept (1 | g); or of a direct number/yes-no Y on randomized "
                        "questions' true answers (Y ~ q + x); repeatable; the report is then "
                        "the regressions")
    parser.add_argument("--bias-reduced", action="store_true",
                        help="with --model: also the bias-reduced estimates (Kosmidis & Firth "
                        "2009; Firth's logistic regression for a direct outcome) beside the "
                        "maximum-likelihood ones")
    parser.add_argument("--joint", metavar="Q1,Q2[,Q3]",
                        help="the table of true-answer combinations of these questions (joint "
                        "maximum likelihood, profile-likelihood intervals, the privacy of the "
                        "combination); the report is then that table")
    parser.add_argument("--cor", metavar="Q1,Q2[,X]",
                        help="Pearson correlations of randomized yes-no and direct yes-no or "
                        "number questions (RRreg's RRcor, bootstrap SEs); the report is then "
                        "the correlations")
    design = parser.add_argument_group(
        "sample design", "design-based estimates for samples that are not simple random: the "
        "columns of the export (or of --design FILE.csv, joined by respondent token) that hold "
        "each respondent's weight, stratum, cluster and finite-population correction")
    design.add_argument("--weights", metavar="COL",
                        help="sampling weights (1 / inclusion probability); turns the design-based "
                        "estimates on")
    design.add_argument("--inclusion", metavar="COL",
                        help="inclusion probabilities in (0, 1] instead of weights")
    design.add_argument("--strata", metavar="COL", help="the stratum of each respondent")
    design.add_argument("--cluster", metavar="COL",
                        help="the primary sampling unit (cluster) of each respondent, nested in "
                        "its stratum")
    design.add_argument("--fpc", metavar="COL",
                        help="finite-population correction: the number of clusters (or "
                        "respondents, without --cluster) of the stratum in the population, or "
                        "the sampling fraction (<= 1); default: sampling with replacement")
    design.add_argument("--design", metavar="FILE.csv", dest="design_file",
                        help="read the design columns from this CSV (with a respondent column) "
                        "instead of the export")
    design.add_argument("--variance", default="linearization",
                        choices=("linearization", "jackknife", "rrtcs-deville",
                                 "rrtcs-jackknife"),
                        help="linearization (default), jackknife (delete one cluster), or, for "
                        "comparison with published work only, rrtcs-deville (R RRTCS's "
                        "analytic default: ignores strata and clusters) or rrtcs-jackknife "
                        "(RRTCS's jackknife: no randomization term)")
    design.add_argument("--lonely-psu", default="refuse", choices=("refuse", "collapse"),
                        dest="lonely_psu",
                        help="a stratum with one cluster: refuse (default, exit 2) or collapse "
                        "it into the next stratum")
    design.add_argument("--population", type=float, metavar="N",
                        help="population size: the design-based mean with a known N (total / "
                        "N), and randomized number questions' totals (N x mean) with their SE "
                        "and interval")
    design.add_argument("--rake", action="append", default=[], metavar="VAR=margins.csv",
                        help="rake the weights to known population margins of column VAR (a "
                        "question asked directly, or a design column): a CSV of VAR's values "
                        "and 'count' (or 'share', with --population); one --rake is "
                        "post-stratification; repeatable")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="what reads and counts the rows (same estimates and rejected rows "
                        "either way): duckdb (a columnar engine, in parallel), numpy (rrsite's "
                        "own reader), or auto (default: DuckDB, except for exports under 1 MB)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bar on stderr (default: on a terminal, for long runs)")


def write_atomically(path: str, text: str) -> None:
    """Write a file so that a reader never sees half of it.

    It gets the mode the user's umask gives a new file, as open() would: a co-author in the
    same group can read the report.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    except OSError as error:
        raise RRSiteError(f"{path}: cannot write: {error.strerror or error}") from error
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        mask = os.umask(0)  # mkstemp makes the file 0600: give it the mode open() would
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)
        os.replace(temporary, target)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise RRSiteError(f"{path}: cannot write: {error.strerror or error}") from error


def run(args: argparse.Namespace) -> int:
    """Analyse, print or write the report; exit 2 on bad input or (--strict) rejected rows."""
    from ..analyze.api import analyze

    if getattr(args, "db", None):
        return _run_database(args)
    if not args.survey and not args.manifest:
        raise RRSiteError("give the survey file with --survey FILE.md (and/or its built "
                          "manifests with --manifest survey.json)")
    if getattr(args, "sql", None):
        from ..analyze.api import tally_sql

        if args.exports or args.counts is not None:
            raise RRSiteError("--sql prints a query for the rows where they are; give no export "
                              "files and no --counts")
        sys.stdout.write(tally_sql(args.survey, args.manifest, dialect=args.sql,
                                   table=args.table, by=args.by, reports=args.reports) + "\n")
        return 0
    if args.by and (args.model or getattr(args, "joint", None) or getattr(args, "cor", None)):
        other = "--model" if args.model else "--joint" if args.joint else "--cor"
        raise RRSiteError(f"--by gives subgroups of the estimates; it does not apply to {other} "
                          "(put the question in the model's formula instead)")
    if len(args.survey) > 1:  # the waves of a series (rrsite.analyze.panel)?
        from ..analyze.panel import waves_of

        waves = waves_of(args.survey)
        if waves is not None:
            return _run_panel(args, waves)
    if getattr(args, "joint", None) or getattr(args, "cor", None):
        return _run_joint(args)
    if args.model:
        if args.counts is not None:
            raise RRSiteError("--model fits rows of an export; it cannot use --counts")
        if not args.exports:
            raise RRSiteError("give the export file(s) to fit --model on")
        return _run_models(args)
    if _sample_options(args) is not None and args.counts is not None:
        raise RRSiteError("a sample design needs the rows of an export, not --counts")
    if args.counts is not None:
        if args.exports:
            raise RRSiteError("give either export files or --counts FILE.csv, not both")
        from ..analyze.api import analyze_counts

        analysis = analyze_counts(args.counts, survey=args.survey, manifests=args.manifest,
                                  confidence=args.confidence, by=args.by,
                                  interval=args.interval)
    elif not args.exports:
        raise RRSiteError("give the export file(s) to analyze, or --counts FILE.csv")
    else:
        analysis = analyze(
            args.exports, survey=args.survey, manifests=args.manifest,
            confidence=args.confidence, by=args.by, interval=args.interval,
            mapping=args.mapping, progress=args.progress, sample=_sample_options(args),
            population=args.population, engine=args.engine,
        )
    return _report(args, analysis)


def _run_database(args: argparse.Namespace) -> int:
    """`--db URL --survey ID`: the tally counted in the collector's PostgreSQL database."""
    from ..analyze.api import analyze_database

    if args.exports or args.counts is not None or args.sql or args.model:
        raise RRSiteError("--db counts in the database: give no export files, --counts, --sql "
                          "or --model")
    if len(args.survey) != 1:
        raise RRSiteError("--db needs the survey's id: --survey ID")
    analysis = analyze_database(args.db, args.survey[0], args.manifest,
                                confidence=args.confidence, by=args.by, interval=args.interval,
                                population=args.population)
    return _report(args, analysis)


def _report(args: argparse.Namespace, analysis: Any) -> int:
    """Print or write the report; exit 2 with --strict when rows were rejected."""
    from ..report.analysis import render

    rejected = analysis.rejected
    if args.strict and rejected.total:
        raise RejectedRowsError(
            f"--strict: {rejected.total:,} of {analysis.rows_read:,} rows rejected\n"
            + rejected.summary()
        )
    _emit(args, render(analysis, args.format),
          f" ({analysis.rows_accepted:,} rows accepted, {rejected.total:,} rejected)")
    if rejected.total and (args.output or args.format != "table"):
        print(f"{rejected.total:,} rows rejected:\n{rejected.summary()}", file=sys.stderr)
    return 0


def _run_panel(args: argparse.Namespace, waves: list[Any]) -> int:
    """Several waves of a series: shares per wave, changes, the ledger per respondent."""
    from ..analyze.panel import analyze_panel
    from ..report.panel import render

    if args.counts is not None or args.model or args.joint or args.cor or args.by or \
            _sample_options(args) is not None or getattr(args, "engine", "auto") == "duckdb":
        raise RRSiteError("several waves are analysed with the options --confidence, "
                          "--interval, --format and -o, by rrsite's own reader (analyse one "
                          "wave for --by, --joint, --model, --cor, --counts, --engine duckdb or "
                          "a sample design)")
    if not args.exports:
        raise RRSiteError("give the export file(s) of the waves")
    result = analyze_panel(args.exports, waves, confidence=args.confidence,
                           interval=args.interval, mapping=args.mapping, progress=args.progress)
    report = render(result, args.format)
    _emit(args, report)
    return 0


def _sample_options(args: argparse.Namespace) -> SampleOptions | None:
    """The sample design options, or None when none was given."""
    # --population alone is not a design: it also gives randomized numbers their totals
    given = [args.weights, args.inclusion, args.strata, args.cluster, args.fpc, args.design_file,
             *args.rake]
    if all(value is None for value in given) and args.variance == "linearization":
        return None
    if args.weights is None and args.inclusion is None:
        raise RRSiteError("the sample design options need --weights COL (or --inclusion COL); "
                          "for an unweighted clustered sample give a column of 1s")
    return SampleOptions(weights=args.weights, inclusion=args.inclusion, strata=args.strata,
                         cluster=args.cluster, fpc=args.fpc, design_file=args.design_file,
                         variance=args.variance, lonely=args.lonely_psu,
                         population=args.population, rake=parse_rake(args.rake))


def _run_models(args: argparse.Namespace) -> int:
    """`--model`: fit each formula and print or write its report."""
    from ..analyze.regression import regress
    from ..report.models import render_models as render

    models = regress(args.exports, survey=args.survey, manifests=args.manifest,
                     models=args.model, confidence=args.confidence, mapping=args.mapping,
                     bias_reduced=args.bias_reduced, sample=_sample_options(args))
    if models:
        _refuse_or_tell(args, models[0].rejected, "left out of every model")
    report = render(models, args.format)
    _emit(args, report)
    return 0


def _run_joint(args: argparse.Namespace) -> int:
    """`--joint` or `--cor`: several questions together."""
    option = "--joint" if args.joint else "--cor"
    if args.counts is not None or args.model or (args.joint and args.cor):
        raise RRSiteError(f"{option} fits rows of an export; it cannot be combined with "
                          "--counts, --model, or the other of --joint and --cor")
    if not args.exports:
        raise RRSiteError(f"give the export file(s) to estimate {option} from")
    result: Any
    if args.joint:
        from ..analyze.joint import joint
        from ..report.joint import render

        result = joint(args.exports, survey=args.survey, manifests=args.manifest,
                       questions=args.joint, confidence=args.confidence, mapping=args.mapping)
    else:
        from ..analyze.correlation import correlate
        from ..report.correlation import render as render_cor

        result = correlate(args.exports, survey=args.survey, manifests=args.manifest,
                           questions=args.cor, confidence=args.confidence, mapping=args.mapping)
        render = render_cor  # type: ignore[assignment]
    _refuse_or_tell(args, result.rejected, "left out of the table")
    report = render(result, args.format)
    _emit(args, report)
    return 0


def _refuse_or_tell(args: argparse.Namespace, rejected: Any, where: str) -> None:
    """Rejected rows: an error with --strict (exit 2), else listed on stderr."""
    if rejected is None or not rejected.total:
        return
    if args.strict:
        raise RejectedRowsError(f"--strict: {rejected.total:,} rows rejected\n"
                                + rejected.summary())
    print(f"{rejected.total:,} rows rejected ({where}):\n{rejected.summary()}", file=sys.stderr)


def _emit(args: argparse.Namespace, report: str, note: str = "") -> None:
    """Write the report to -o (atomically, ``note`` after its name on stderr), or print it."""
    if args.output:
        write_atomically(args.output, report)
        print(f"wrote {args.output}{note}", file=sys.stderr)
    else:
        sys.stdout.write(report)
