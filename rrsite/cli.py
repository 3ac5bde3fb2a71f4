"""The `rrsite` command: parses arguments and delegates; the work lives in the subpackages.

Each command lives in a module that offers ``add_arguments(parser)`` and ``run(args) -> int``,
imported only when that command runs (so `rrsite plan` never loads numpy or the server).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import __version__
from .errors import RRSiteError

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

COMMANDS: dict[str, tuple[str, str]] = {
    "new": ("rrsite.commands.new", "write a starter survey file"),
    "build": ("rrsite.commands.build", "build survey files into a static site"),
    "check": ("rrsite.commands.check", "report build errors and warnings of survey files"),
    "preview": ("rrsite.commands.preview", "build, serve and rebuild on save, with reload"),
    "verify": ("rrsite.commands.verify", "check that a deployed site is what its sources build"),
    "serve": ("rrsite.commands.serve", "serve a built site and collect submissions"),
    "export": ("rrsite.commands.export", "export stored submissions to CSV or JSONL"),
    "invite": ("rrsite.commands.invite", "personal invitation links, each accepted once"),
    "completions": ("rrsite.commands.completions",
                    "which of a panel's participants completed (the completion record)"),
    "analyze": ("rrsite.commands.analyze", "de-bias exported submissions into estimates"),
    "plan": (
        "rrsite.commands.plan",
        "the optimal design for a privacy budget, sample sizes",
    ),
    "power": ("rrsite.commands.power", "respondents to detect an odds ratio (regression)"),
    "simulate": (
        "rrsite.commands.simulate",
        "simulate an export through a survey's designs",
    ),
}


class _Parser(argparse.ArgumentParser):
    """argparse exits with 2 on bad arguments already; keep its message short and clear."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """Write a help or usage text, letting a closed pipe raise.

        argparse swallows OSError here in some Python versions (3.11.7 does, 3.11.2 does not),
        so with unbuffered output (PYTHONUNBUFFERED) `rrsite plan --help` into a closed pipe
        would exit 0 under one interpreter and 141 under another; here it is 141 under all.
        """
        if message:
            (file or sys.stderr).write(message)


def _command_module(name: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(COMMANDS[name][0])


def make_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The top-level parser; only the command that runs is imported and given its options."""
    parser = _Parser(prog="rrsite", description="Randomized-response surveys as static sites.")
    parser.add_argument("--version", action="version", version=f"rrsite {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    chosen = next((arg for arg in argv if arg in COMMANDS), None)
    for name, (_, help_text) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            _command_module(name).add_arguments(command)
    return parser


#: Exit code when the reader of the output went away (`rrsite plan | head`): 128 + SIGPIPE, as a
#: shell reports a program that SIGPIPE ended.
BROKEN_PIPE_EXIT = 141


def _output_closed() -> int:
    """The reader of standard output is gone: stop quietly, without a traceback.

    What is still buffered cannot be written; standard output is pointed at /dev/null so that
    Python's final flush at exit does not fail again (the recipe of Python's signal module docs).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return BROKEN_PIPE_EXIT


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = make_parser(argv).parse_args(argv)  # --help and --version print too
    except BrokenPipeError:
        return _output_closed()
    except SystemExit:  # --help, --version: flush here, where a closed pipe is caught (a help
        try:            # text shorter than the buffer is otherwise written only at exit)
            sys.stdout.flush()
        except BrokenPipeError:
            return _output_closed()
        raise
    try:
        code = int(_command_module(args.command).run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in Python's flush at exit
        return code
    except BrokenPipeError:
        return _output_closed()
    except RRSiteError as error:
        print(f"rrsite {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
