"""`rrsite verify URL --survey FILE.md`: a deployed site compared with a build of its sources."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..site.verify import as_json, describe, verify
from .build import add_site_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite verify`."""
    parser.add_argument("url", metavar="URL",
                        help="the deployed site (its root, or a survey's page)")
    parser.add_argument("--survey", dest="surveys", action="append", type=Path, required=True,
                        metavar="FILE.md",
                        help="a survey file the site was built from (repeat for several)")
    add_site_options(parser, templates="page templates the site was built with",
                     pyodide="Pyodide runtime the site was built with")
    parser.add_argument("--full-stdlib", action="store_true",
                        help="the site was built with --full-stdlib")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                        help="per request (default 30)")
    parser.add_argument("--all", dest="every", action="store_true",
                        help="list every file compared, not only those that differ")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    """0 when every file matches the local build, 1 when some differ (each is named)."""
    result = verify(args.url, args.surveys, templates=args.templates, pyodide=args.pyodide,
                    full_stdlib=args.full_stdlib, timeout=args.timeout)
    if args.json:
        print(as_json(result))
    else:
        describe(result, print, every=args.every, surveys=args.surveys)
    sys.stdout.flush()
    return 0 if result.matches else 1
