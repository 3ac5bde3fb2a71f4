"""`rrsite new NAME`: write a starter survey file, NAME.md, that builds as it is.

``--language CODE`` sets the page's language. For a language rrsite does not ship, the survey
brings its own message catalog: CODE.json is written beside the survey, a copy of the shipped
en.json to translate, and the front matter names it (``messages: CODE.json``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

from ..errors import UsageError
from ..site.builder import default_templates
from ..survey.catalog import LANGUAGE_RULE, LANGUAGE_TAG, primary_subtag
from ..survey.schema import LANGUAGES

STARTER = """\
---
# The survey's id: its folder in the built site and the "survey" field of every submission.
id: {id}
title: {title}
language: {language}{language_pad}# the language of the page's buttons and explanations
{messages_line}privacy:
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
    parser.add_argument("--language", metavar="CODE", default="en",
                        help="the page's language: " + ", ".join(LANGUAGES) + " are shipped; "
                             "for any other code (e.g. sw, ar) CODE.json is written beside the "
                             "survey, rrsite's English messages to translate (default: en)")


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
    language = str(args.language)
    if not re.fullmatch(LANGUAGE_TAG, language):
        raise UsageError(f"--language must be {LANGUAGE_RULE}, got {language!r}")
    shipped = language in LANGUAGES or primary_subtag(language) in LANGUAGES
    catalog = path.with_name(f"{language}.json")
    if not shipped and catalog.exists():
        raise UsageError(f"{catalog} already exists; choose another name or folder")
    survey_id = slug(path.stem)
    title = path.stem.replace("-", " ").replace("_", " ").strip().capitalize() or "My survey"
    text = STARTER.format(
        id=survey_id, title=json.dumps(title, ensure_ascii=False), file=path.name,
        language=language, language_pad=" " * max(1, 28 - len("language: ") - len(language)),
        messages_line="" if shipped else (
            f"messages: {catalog.name}".ljust(27) + " # the page's words in this language: "
            "translate this file\n"))
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
    if not shipped:
        shutil.copyfile(default_templates() / "messages" / "en.json", catalog)
        print(f"wrote {catalog}: rrsite's messages in English, to translate into {language} "
              "(the build warns while some are still English)")
    print(f"wrote {path}: check it with `rrsite check {path}`, try it with "
          f"`rrsite preview {path}`, build it with `rrsite build {path} -o dist`")
    return 0
