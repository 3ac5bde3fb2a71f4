"""MkDocs hook: fills in the generated parts of the documentation at build time.

A page asks for a generated part with a marker alone on a line; the marker is replaced by Markdown
generated from the code, so these parts are never hand-edited copies and cannot drift:

- ``<!-- rrsite:survey-reference -->``: every key of the survey file, from the declarations the
  loader validates with (``rrsite.survey.schema.BLOCKS``);
- ``<!-- rrsite:cli-reference -->``: every command and option of ``rrsite``, from the argparse
  parser of ``rrsite.cli`` (each command's own ``add_arguments``);
- ``<!-- rrsite:usage COMMAND -->``: that command's usage, as ``rrsite COMMAND --help`` prints it,
  in a ``text`` block (how-to guides show it where they explain the command);
- ``<!-- rrsite:key BLOCK.KEY -->``: what the schema says of one key (``question.type``), for a
  guide that must state what a key accepts.

Used by mkdocs.yml (``hooks:``); tests/docs/test_docs.py checks both against the code.

The site reads from disk (file://, `make docs` then site/index.html): Material's offline plugin
links pages as ``page.html`` and ships the search index as a script, and its search runs in a
Web Worker, which a browser refuses to start from file://. Material loads a shim for that from
unpkg.com; :func:`on_post_page` points every page at the same shim (npm's ``iframe-worker``,
pinned in package.json) copied into the site by :func:`on_post_build`, so nothing is loaded
from another host.
"""

from __future__ import annotations

import argparse
import posixpath
import re
import shutil
from pathlib import Path
from typing import Any

SURVEY_MARKER = "<!-- rrsite:survey-reference -->"
CLI_MARKER = "<!-- rrsite:cli-reference -->"
#: Material's offline plugin loads the Web Worker shim from here; the site ships its own copy.
SHIM_URL = "https://unpkg.com/iframe-worker/shim"
SHIM_SOURCE = Path(__file__).resolve().parent.parent / "node_modules" / "iframe-worker" / "shim" \
    / "index.js"
SHIM_TARGET = "assets/javascripts/iframe-worker-shim.js"


def survey_reference() -> str:
    """The survey-file reference: one table per block of the loader's schema."""
    from rrsite.survey.schema import reference_markdown

    return reference_markdown(level=2)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _plain(text: str) -> str:
    """Help text is plain text: Markdown's marks in it are escaped, not rendered."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]])", r"\\\1", text)


def _option_row(action: argparse.Action) -> str:
    if action.option_strings:
        names = ", ".join(f"`{name}`" for name in action.option_strings)
        if action.nargs != 0:
            metavar = action.metavar or action.dest.upper()
            if isinstance(metavar, tuple):
                metavar = " ".join(metavar)
            names += f" `{metavar}`"
    else:
        names = f"`{action.metavar or action.dest}`"
        if action.nargs in ("+", "*"):
            names += " ..."
    help_text = (action.help or "").replace("%%", "%")
    if "%(" in help_text:
        help_text = help_text % {**vars(action), "prog": "rrsite"}
    default = action.default
    if action.required or default in (None, argparse.SUPPRESS) or action.nargs == 0:
        shown = "required" if action.required else "—"
    else:
        shown = f"`{default}`" if not isinstance(default, list) or default else "—"
    help_text = _plain(help_text)
    if isinstance(action, argparse._AppendAction) and "repeatable" not in help_text:  # noqa: SLF001
        help_text += " (repeatable)"
    return f"| {names} | {_cell(shown)} | {_cell(help_text)} |"


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(prog=parser.prog, width=100)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)  # noqa: SLF001
    return formatter.format_help().strip()


def command_parsers() -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """Every command's parser with its options, as ``rrsite COMMAND`` builds it."""
    from rrsite.cli import COMMANDS, make_parser

    parsers = {}
    for name, (_, help_text) in COMMANDS.items():
        parser = make_parser([name])
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
        parsers[name] = (help_text, sub.choices[name])
    return parsers


def cli_reference() -> str:
    """One section per command: what it does, its usage line and a table of its options."""
    parts = []
    for name, (help_text, parser) in command_parsers().items():
        rows = ["| argument | default | meaning |", "|---|---|---|"]
        for action in parser._actions:  # noqa: SLF001
            if isinstance(action, argparse._HelpAction):  # noqa: SLF001
                continue
            rows.append(_option_row(action))
        usage = _usage(parser)
        parts.append(f"## `rrsite {name}`\n\n{help_text[0].upper()}{help_text[1:]}.\n\n"
                     f"```text\n{usage}\n```\n\n" + "\n".join(rows) + "\n")
    return "\n".join(parts)


GENERATORS = {SURVEY_MARKER: survey_reference, CLI_MARKER: cli_reference}
USAGE_MARKER = re.compile(r"^<!-- rrsite:usage ([a-z]+) -->$", re.MULTILINE)
KEY_MARKER = re.compile(r"^<!-- rrsite:key ([a-z_ ]+)\.([a-z_]+) -->$", re.MULTILINE)


def usage_block(command: str) -> str:
    """``rrsite COMMAND``'s usage line(s), from its parser, in a ``text`` block."""
    parsers = command_parsers()
    if command not in parsers:
        raise ValueError(f"<!-- rrsite:usage {command} -->: no such command")
    return f"```text\n{_usage(parsers[command][1])}\n```"


def key_sentence(block_name: str, key_name: str) -> str:
    """``type`` (a question block): the schema's words for the key."""
    from rrsite.survey.schema import BLOCKS

    for block in BLOCKS:
        if block.name == block_name:
            key = block.key(key_name)
            return f"`{key.name}` ({block.title}): {key.doc}"
    raise ValueError(f"<!-- rrsite:key {block_name}.{key_name} -->: no such block")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each marker line with its generated Markdown."""
    for marker, generate in GENERATORS.items():
        if marker in markdown:
            markdown = re.sub(rf"^{re.escape(marker)}$", lambda _m, g=generate: g(), markdown,
                              flags=re.MULTILINE)
    markdown = USAGE_MARKER.sub(lambda found: usage_block(found.group(1)), markdown)
    return KEY_MARKER.sub(lambda found: key_sentence(found.group(1), found.group(2)), markdown)


def on_post_page(output: str, page: Any, config: Any) -> str:
    """Point the page's Web Worker shim at the site's own copy (a path relative to the page)."""
    if SHIM_URL not in output:
        return output
    folder = posixpath.dirname(page.file.dest_uri)
    return output.replace(f'src="{SHIM_URL}"',
                          f'src="{posixpath.relpath(SHIM_TARGET, folder or ".")}"')


def on_post_build(config: Any) -> None:
    """Copy the Web Worker shim into the site; without it (no `npm ci`) the build fails."""
    if not SHIM_SOURCE.is_file():
        raise FileNotFoundError(f"{SHIM_SOURCE} is missing: run `npm ci` (make docs does) for "
                                "the search of the site opened from disk")
    target = Path(config["site_dir"]) / SHIM_TARGET
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SHIM_SOURCE, target)
