"""`rrsite new NAME`: write a starter survey file, NAME.md, that builds as it is."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from ..errors import UsageError

STARTER = """\
---
# The survey's id: its folder in the built site and the "survey" field of every submission.
id: {id}
title: {title}
language: en                # en or es: the language of the page's buttons and explanations
privacy:
  budget: 2.0               # per respondent: randomized questions' epsilons add up to at most this
submit:
  to: collector             # collector (rrsite serve) | endpoint (with url:) | netlify | download
---
Thank you for taking part. Some questions are **randomized on your device**: before anything is
sent, your browser flips coins that decide whether your true answer or a random one goes out.
Nobody can tell which, so any single answer proves nothing about you.

## Have you ever done the thing this survey is about?

The coins: first coin heads, your true answer is sent; tails, a second coin picks "yes" or "no".

```question
id: did_it
type: yes-no
randomize: forced-response  # the fair two-coin design: epsilon = ln 3 (about 1.1)
truth: 1/2
```

## How often does it happen around you?

Optional, asked directly: rrsite can break the estimate down by this answer.

```question
id: how_often
type: choice
options:
  - Never
  - Sometimes
  - {{value: often, label: "*Often*"}}
required: false
```

Thank you for your answers. You can close this page now.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite new`."""
    parser.add_argument("name", metavar="NAME", help="the survey to create: writes NAME.md")


def slug(name: str) -> str:
    """A survey id from a file name: lowercase letters, digits and single dashes."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:64].strip("-")
    return text or "my-survey"


def run(args: argparse.Namespace) -> int:
    """Write the starter file; refuse to overwrite anything."""
    path = Path(args.name)
    if path.suffix != ".md":
        path = path.with_name(path.name + ".md")
    if path.exists():
        raise UsageError(f"{path} already exists; choose another name")
    if not path.parent.is_dir():
        raise UsageError(f"{path.parent} is not a folder")
    survey_id = slug(path.stem)
    title = path.stem.replace("-", " ").replace("_", " ").strip().capitalize() or "My survey"
    text = STARTER.format(id=survey_id, title=json.dumps(title, ensure_ascii=False))
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
    print(f"wrote {path}: check it with `rrsite check {path}`, try it with "
          f"`rrsite preview {path}`, build it with `rrsite build {path} -o dist`")
    return 0
