"""`rrsite export`: stored submissions as CSV, JSONL, Parquet, Stata .dta or SPSS .sav; a codebook.

rrsite export --db FILE [--survey ID] -o FILE.csv|.jsonl|.parquet|.dta|.sav
              [--codebook FILE.md|.html|.json] [--r-script FILE.R]
rrsite export --from EXPORT.csv ... --manifest SURVEY.md|survey.json ... -o FILE.dta|FILE.sav
              [--codebook FILE] [--r-script FILE.R] [--map COLUMN=FIELD ...]

Reads the collector's SQLite file directly (a running `rrsite serve` may keep writing: the export is
a consistent snapshot). There is deliberately no HTTP export endpoint: whoever can read the file can
export, nobody else. ``--from`` converts an export made elsewhere (a Netlify CSV, a simulated
export), its rows checked as `rrsite analyze` checks them.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..collect.export import FORMATS, export
from ..errors import RRSiteError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite export`."""
    parser.add_argument("--db",
                        help="the collector's SQLite file, or its PostgreSQL database "
                        "(postgresql://user@host/dbname)")
    parser.add_argument("--from", action="append", default=[], dest="sources",
                        metavar="EXPORT",
                        help="read the submissions from this export (CSV or JSONL, e.g. a "
                        "Netlify Forms CSV or a simulated export) instead of --db; repeatable; "
                        "needs --manifest")
    parser.add_argument("--manifest", action="append", default=[], metavar="SURVEY",
                        help="the survey file (.md) or a built survey.json: the designs for "
                        "--from, or for a codebook without data; repeatable (versions)")
    parser.add_argument("--map", action="append", default=[], metavar="COLUMN=FIELD",
                        dest="mapping", help="with --from: read CSV column COLUMN as FIELD, as "
                        "rrsite analyze --map does")
    parser.add_argument("--survey", metavar="ID", help="only this survey (default: all; a "
                        "labelled file, codebook or R script needs one survey)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="FILE.csv, FILE.jsonl or FILE.parquet (from --db; `-` writes to "
                        "standard output; give --format), or a labelled FILE.dta (Stata) or "
                        "FILE.sav (SPSS)")
    parser.add_argument("--format", choices=FORMATS,
                        help="csv, jsonl or parquet (default: from the output file's "
                        "extension); Parquet is columnar and compressed, for large exports "
                        "read by rrsite analyze, DuckDB, polars or pandas")
    parser.add_argument("--keep-formulas", action="store_true",
                        help="write CSV text cells exactly as sent, even ones a spreadsheet would "
                        "run as a formula (by default a cell starting with = + - @, tab or "
                        "carriage return gets a leading apostrophe; rrsite analyze removes it)")
    parser.add_argument("--codebook", metavar="FILE",
                        help="write the codebook: every variable, its values and labels, its "
                        "design and privacy (FILE.md, FILE.html or FILE.json)")
    parser.add_argument("--r-script", metavar="FILE.R", dest="r_script",
                        help="write an R script that reads the export (-o's file) and re-fits "
                        "each randomized question with RRreg")


def run(args: argparse.Namespace) -> int:
    """Write the export (and the codebook, the R script); say how many submissions it holds."""
    from ..report.labelled import format_for as labelled_format

    if not (args.output or args.codebook or args.r_script):
        raise RRSiteError("give -o FILE (the export), --codebook FILE or --r-script FILE.R")
    if args.db and args.sources:
        raise RRSiteError("give either --db or --from EXPORT, not both")
    labelled = args.output is not None and labelled_format(args.output) is not None
    if args.sources and args.output and not labelled:
        raise RRSiteError(f"-o {args.output}: --from converts an export to a labelled .dta or "
                          ".sav file (it is a CSV or JSONL export already)")
    if not (labelled or args.codebook or args.r_script):
        if not args.db:
            raise RRSiteError("give the collector's database with --db FILE")
        count = export(args.db, args.output, survey=args.survey, fmt=args.format,
                       keep_formulas=args.keep_formulas)
        _said(args.output, count)
        return 0
    if args.db and args.output and not labelled:
        count = export(args.db, args.output, survey=args.survey, fmt=args.format,
                       keep_formulas=args.keep_formulas)
        _said(args.output, count)
    return _papers(args, labelled)


def _said(output: str, count: int) -> None:
    if output != "-":
        print(f"rrsite export: {count} submission{'s' if count != 1 else ''} -> {output}",
              file=sys.stderr)


def _papers(args: argparse.Namespace, labelled: bool) -> int:
    """The labelled file, the codebook and the R script, from --db or --from and --manifest."""
    from ..exports.catalog import build_catalog
    from ..report import codebook as codebooks
    from ..report import labelled as labelled_files
    from ..report import rscript

    records: list[dict[str, Any]] | None = None
    if args.db:
        if args.manifest:
            raise RRSiteError("--db holds the survey's manifests; --manifest is for --from")
        manifests, records = _from_db(args.db, args.survey, need_rows=labelled)
        catalog = build_catalog([], manifests)
    else:
        if not args.manifest:
            raise RRSiteError("give the survey's designs with --manifest SURVEY.md (or its built "
                              "survey.json)")
        catalog = _catalog(args.manifest)
        if labelled and not args.sources:
            raise RRSiteError(f"-o {args.output}: give the submissions with --db FILE or --from "
                              "EXPORT")
        if args.sources:
            records = _from_exports(args, catalog)
    if args.survey is not None and args.survey != catalog.survey:
        raise RRSiteError(f"--survey {args.survey}: the manifests are of survey "
                          f"{catalog.survey!r}")
    book = codebooks.build(catalog)
    if labelled:
        assert records is not None
        count = labelled_files.write(book, records, args.output)
        _said(args.output, count)
    if args.codebook:
        form = codebooks.EXTENSIONS.get(os.path.splitext(args.codebook)[1].lower())
        if form is None:
            raise RRSiteError(f"--codebook {args.codebook}: name it .md, .html or .json")
        _write_text(args.codebook, codebooks.render(book, form))
        print(f"rrsite export: codebook of {len(book.variables)} variables -> {args.codebook}",
              file=sys.stderr)
    if args.r_script:
        default = args.output if args.output and args.output != "-" else "answers.csv"
        _write_text(args.r_script, rscript.render(
            book, script=os.path.basename(args.r_script), default=default))
        print(f"rrsite export: R script -> {args.r_script}", file=sys.stderr)
    return 0


def _catalog(paths: list[str]) -> Any:
    """The catalog of --manifest files: survey files (.md) and survey.json."""
    from ..exports.catalog import build_catalog

    surveys = [p for p in paths if not p.endswith(".json")]
    manifests = [p for p in paths if p.endswith(".json")]
    return build_catalog(surveys, manifests)


def _from_db(db: str, survey: str | None,
             need_rows: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """The stored manifests of one survey, and its submissions as records when needed."""
    from pathlib import Path

    from ..collect.export import Export, PgExport
    from ..collect.storebase import is_postgres

    source = PgExport(str(db), survey) if is_postgres(db) else Export(Path(db), survey)
    try:
        surveys = list(dict.fromkeys(str(m.get("id")) for m in source.manifests))
        if survey is None and len(surveys) > 1:
            raise RRSiteError(f"{db}: holds several surveys ({', '.join(surveys)}); choose one "
                              "with --survey ID")
        if not surveys:
            raise RRSiteError(f"{db}: no survey manifest is stored; nothing to describe")
        chosen = survey or surveys[0]
        manifests = [m for m in source.manifests if m.get("id") == chosen]
        records = list(source.rows()) if need_rows else None
    finally:
        source.close()
    return manifests, records


def _from_exports(args: argparse.Namespace, catalog: Any) -> list[dict[str, Any]]:
    """The accepted rows of --from exports; rejected rows are counted on standard error."""
    from ..exports.readers import parse_mapping
    from ..exports.rows import read_records

    records, rejections, read = read_records(args.sources, catalog,
                                             parse_mapping(args.mapping, catalog))
    if rejections.total:
        print(f"rrsite export: {rejections.total:,} of {read:,} rows rejected (left out):\n"
              + rejections.summary(), file=sys.stderr)
    return records


def _write_text(path: str, text: str) -> None:
    """Write a text file atomically (a reader never sees half of it)."""
    from .analyze import write_atomically

    write_atomically(path, text)
