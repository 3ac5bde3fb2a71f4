"""`rrsite check SURVEYS`: every build error, then the warnings of rrsite.survey.check."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from ..site.builder import build
from ..survey import SurveyError
from ..survey.check import DEFAULT_RESPONDENTS, check_survey
from .build import add_site_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite check`."""
    parser.add_argument("surveys", nargs="+", type=Path, metavar="SURVEYS",
                        help="a survey .md file, or a folder of them")
    parser.add_argument("--respondents", type=int, default=DEFAULT_RESPONDENTS, metavar="N",
                        help="expected number of respondents, for the warning about answer "
                             f"combinations that single people out (default {DEFAULT_RESPONDENTS})")
    parser.add_argument("--strict", action="store_true",
                        help="exit with code 1 when there are warnings")
    add_site_options(parser)


def run(args: argparse.Namespace) -> int:
    """Build into a throwaway folder (errors raise: exit 2), then print every warning.

    The build uses the same cache as `rrsite build` (the shipped standard library, keyed by the
    runtime, keep list and budget), so a check after the first one never starts Node.
    """
    if args.respondents < 1:
        raise SystemExit("rrsite check: --respondents must be at least 1")
    with tempfile.TemporaryDirectory(prefix="rrsite-check-") as folder:
        result = build(args.surveys, Path(folder) / "dist", args.templates, args.pyodide,
                       compress=False, cache=True)
    warnings: list[SurveyError] = list(result.warnings)
    for survey in result.surveys:  # loaded once, by the build
        warnings.extend(check_survey(survey, args.respondents))
    for warning in warnings:
        print(f"{warning.file}:{warning.line}: warning: {warning.message}")
    surveys = len(result.surveys)
    print(f"rrsite check: {surveys} survey{'s' * (surveys != 1)} "
          f"build{'s' * (surveys == 1)}; "
          f"{len(warnings)} warning{'s' * (len(warnings) != 1)}", file=sys.stderr)
    return 1 if warnings and args.strict else 0
