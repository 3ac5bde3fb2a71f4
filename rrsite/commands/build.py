"""`rrsite build SURVEYS -o DIST`: survey files to a static site, all or nothing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..site.builder import build, default_pyodide, default_templates, describe


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite build`."""
    parser.add_argument("surveys", nargs="+", type=Path, metavar="SURVEYS",
                        help="a survey .md file, or a folder of them")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="DIST",
                        help="output folder, replaced as a whole only when every survey built")
    add_site_options(parser, pyodide="Pyodide runtime to ship")
    parser.add_argument("--full-stdlib", action="store_true",
                        help="ship Pyodide's whole standard library, not the one trimmed to what "
                             "the page imports (for debugging or comparison)")
    parser.add_argument("--no-compress", action="store_true",
                        help="skip the .br/.gz copies (faster; for development only)")


def add_site_options(parser: argparse.ArgumentParser, templates: str = "page templates",
                     pyodide: str = "Pyodide runtime") -> None:
    """--templates and --pyodide: what build, check, preview and verify build a site from.

    ``templates`` and ``pyodide`` are the command's own words that start each option's help.
    """
    parser.add_argument("--templates", type=Path, metavar="DIR",
                        help=f"{templates} (default: {default_templates()})")
    parser.add_argument("--pyodide", type=Path, metavar="DIR",
                        help=f"{pyodide} (default: {default_pyodide()})")


def run(args: argparse.Namespace) -> int:
    """Build; problems raise RRSiteError (every file:line printed, exit code 2)."""
    result = build(args.surveys, args.output, args.templates, args.pyodide,
                   compress=not args.no_compress, full_stdlib=args.full_stdlib)
    for warning in result.warnings:
        print(f"{warning.file}:{warning.line}: warning: {warning.message}", file=sys.stderr)
    describe(result, print)
    return 0
