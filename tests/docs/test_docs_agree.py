"""The docs cannot disagree with the tool: what a key or command accepts comes from the code.

Read from the sources (no site build): every section's index links every page of its folder and
its navigation names it; a command's usage is generated, never hand-written; a comment listing a
key's values lists exactly the values the schema accepts; no tracker numbers in the docs or in
any command's help.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snippets import DOCS, ROOT, pages  # noqa: E402

SECTIONS = sorted(folder for folder in DOCS.iterdir() if (folder / "index.md").is_file())
#: Tracker words: code, help texts and docs name behaviours, never an issue's number.
TRACKER = re.compile(r"\bissues? \d+|\bissue \d+'s|README: '", re.IGNORECASE)


def _members(folder: Path) -> list[str]:
    """The pages of a section: its .md files and its subfolders' index pages."""
    found = [page.name for page in sorted(folder.glob("*.md")) if page.name != "index.md"]
    found += [f"{sub.name}/index.md" for sub in sorted(folder.iterdir())
              if sub.is_dir() and (sub / "index.md").is_file()]
    return found


@pytest.mark.parametrize("folder", SECTIONS, ids=lambda f: f.name)
def test_every_page_is_in_its_sections_index_and_navigation(folder: Path) -> None:
    index = (folder / "index.md").read_text("utf-8")
    linked = set(re.findall(r"\]\(([^)#\s]+)", index))
    nav_file = folder / ".nav.yml"
    named: set[str] = set()
    if nav_file.is_file():
        for entry in yaml.safe_load(nav_file.read_text("utf-8"))["nav"]:
            target = next(iter(entry.values())) if isinstance(entry, dict) else entry
            named.add(str(target))
    for page in _members(folder):
        assert page in linked, f"{folder.name}/index.md does not link {page}"
        if nav_file.is_file():
            assert page in named or page.split("/")[0] in named, \
                f"{folder.name}/.nav.yml does not name {page}"


def test_the_index_rule_fails_on_a_missing_page(tmp_path: Path) -> None:
    """The rule above, on a folder whose index misses one of two pages."""
    (tmp_path / "index.md").write_text("- [One](one.md)\n", "utf-8")
    for name in ("one.md", "two.md"):
        (tmp_path / name).write_text(f"# {name}\n", "utf-8")
    linked = set(re.findall(r"\]\(([^)#\s]+)", (tmp_path / "index.md").read_text("utf-8")))
    assert [page for page in _members(tmp_path) if page not in linked] == ["two.md"]


def _text_blocks(text: str) -> list[str]:
    return re.findall(r"^```text\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_no_hand_written_usage(page: Path) -> None:
    """A synopsis of a command's options is `<!-- rrsite:usage COMMAND -->`, from the parser."""
    for block in _text_blocks(page.read_text("utf-8")):
        first = block.splitlines()[0] if block.strip() else ""
        assert not re.match(r"(usage: )?rrsite [a-z]+ .*\[-", first), \
            f"{page.name}: write <!-- rrsite:usage ... --> instead of {first!r}"


def _accepted(key: str) -> set[str] | None:
    """The values the schema accepts for ``key`` (a fixed list), or None."""
    from rrsite.survey.kinds import OneOf
    from rrsite.survey.schema import BLOCKS, LANGUAGES

    if key == "language":
        return set(LANGUAGES)
    for block in BLOCKS:
        if key in block.names and isinstance(block.key(key).kind, OneOf):
            return set(block.key(key).kind.choices)
    return None


def _listed_values() -> list[tuple[str, str, set[str]]]:
    """(where, key, values) of every ``key: value  # a | b | c`` comment in docs and starter."""
    from rrsite.commands.new import STARTER

    texts = [(str(page.relative_to(ROOT)), page.read_text("utf-8")) for page in pages()]
    texts += [("README.md", (ROOT / "README.md").read_text("utf-8")),
              ("rrsite new's starter", STARTER)]
    found = []
    for where, text in texts:
        for key, comment in re.findall(r"^\s*([a-z_]+):[^#\n]*#\s*(.*\|.*)$", text,
                                       flags=re.MULTILINE):
            values = {word.group(0) for part in comment.split("|")
                      if (word := re.match(r"[\w-]+", part.strip()))}
            found.append((where, key, values))
    return found


def test_comments_listing_a_keys_values_list_what_the_schema_accepts() -> None:
    listed = _listed_values()
    assert any(key == "to" for _, key, _ in listed)  # the survey file's example lists them
    for where, key, values in listed:
        accepted = _accepted(key)
        if accepted is not None:
            assert values == accepted, f"{where}: {key}: {sorted(values)} != {sorted(accepted)}"


def _help_texts() -> list[tuple[str, str]]:
    """Every command's --help text, from the parser."""
    from rrsite.cli import COMMANDS, make_parser

    out = []
    for name in COMMANDS:
        parser = make_parser([name])
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        out.append((name, sub.choices[name].format_help()))
    return out


def test_no_tracker_numbers_in_docs_readme_or_help() -> None:
    """Docs, README, help texts and the code itself name behaviours, never tracker numbers."""
    sources = [(str(page.relative_to(ROOT)), page.read_text("utf-8")) for page in pages()]
    sources += [("README.md", (ROOT / "README.md").read_text("utf-8")), *_help_texts()]
    for folder, pattern in (("rrsite", "*.py"), ("templates", "*.*"), ("surveys", "*.md"),
                            ("benchmarks", "*.py"), ("tests", "*.py"), ("tests", "*.mjs")):
        sources += [(str(path.relative_to(ROOT)), path.read_text("utf-8"))
                    for path in sorted((ROOT / folder).rglob(pattern))
                    if path.is_file() and path.suffix not in {".png", ".svg", ".br", ".gz"}
                    and path.name != "test_docs_agree.py"]
    for where, text in sources:
        found = TRACKER.search(text)
        assert found is None, f"{where}: {found.group(0) if found else ''}"


def test_the_question_types_sentence_is_the_schemas() -> None:
    """Which question types can be randomized: said by the schema, and a number can."""
    from rrsite.survey.schema import QUESTION, RANDOMIZABLE_TYPES

    assert "number" in RANDOMIZABLE_TYPES
    doc = QUESTION.key("type").doc
    assert "`number` can be randomized" in doc or "and `number` can be randomized" in doc
    guide = (DOCS / "how-to" / "choose-a-design.md").read_text("utf-8")
    assert "<!-- rrsite:key question.type -->" in guide
    for page in pages():
        assert "always asked directly (useful" not in page.read_text("utf-8"), page


@pytest.mark.parametrize("page", sorted((DOCS / "how-to").glob("*.md")), ids=lambda p: p.name)
def test_how_to_guides_hold_no_benchmark_tables(page: Path) -> None:
    """Timings belong in the engineering pages (benchmarks); a guide links to them."""
    for line in page.read_text("utf-8").splitlines():
        if line.startswith("|"):
            assert not re.search(r"\|\s*[\d.,]+ ?(?:s|ms)\s*\||/ build|\bmedian\b", line), \
                f"{page.name}: {line}"
