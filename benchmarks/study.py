"""What the simulation studies of benchmarks/ share: the command line each one starts from.

Every study takes ``--reps`` (simulated surveys a case) and ``--seed`` (its random generator's
seed); ``study_parser`` gives both, with the script's own defaults and the first line of its
docstring as the description, and the script adds its own options after them.
"""

from __future__ import annotations

import argparse


def study_parser(doc: str | None, reps: int, seed: int) -> argparse.ArgumentParser:
    """The parser a study starts from: ``--reps`` and ``--seed`` with the study's defaults."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=reps)
    parser.add_argument("--seed", type=int, default=seed)
    return parser
