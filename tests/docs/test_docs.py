"""The documentation site: a strict build, the generated references, and every snippet run or built.

See tests/docs/snippets.py for the conventions (``sh``, ``python`` and survey ``markdown`` blocks).
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snippets import (  # noqa: E402
    BIN,
    DOCS,
    ROOT,
    SnippetFailed,
    blocks,
    build_survey,
    pages,
    run_block,
    run_page,
    scratch_copy,
)

MKDOCS_ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
RUNNABLE_PAGES = [page for page in pages() if any(b.lang in ("sh", "python") for b in blocks(page))]
SURVEYS = [block for page in pages() for block in blocks(page) if block.is_survey]


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "mkdocs"), "build", "--strict", "-f", str(config),
                           "-d", str(site)], cwd=config.parent, env=MKDOCS_ENV,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once with --strict (a broken link, a missing page or any warning fails)."""
    out = tmp_path_factory.mktemp("docs") / "site"
    done = mkdocs_build(ROOT / "mkdocs.yml", out)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    assert "WARNING" not in done.stderr, done.stderr
    return out


def text_of(html_file: Path) -> str:
    """The page's text without tags and entities."""
    return html.unescape(re.sub(r"<[^>]+>", "", html_file.read_text(encoding="utf-8")))


def words(text: str) -> str:
    """Letters, digits and single spaces only: Markdown's marks and escapes compare equal."""
    return " ".join(re.sub(r"[^A-Za-z0-9]+", " ", text).split())


def test_strict_build_has_every_section(site: Path) -> None:
    for section in ("tutorial", "how-to", "reference", "explanation", "engineering"):
        assert (site / section / "index.html").is_file(), section
    for language in ("es", "fr", "de", "pt", "it"):
        protected = site / "explanation" / "how-your-answer-is-protected"
        assert (protected / f"{language}.html").is_file(), language


def test_the_site_works_from_file_urls(site: Path, playwright: Playwright) -> None:
    """README says to open site/index.html: its links and its search work from file://.

    Every link between pages names a file that exists (a link to a folder shows a
    directory listing from file://), and Chromium, opening site/index.html from disk, finds a
    page by searching and opens it.
    """
    for page in site.rglob("*.html"):
        if page.name == "404.html":  # a web server's page, linked from the site's root
            continue
        scripts = re.findall(r'<script [^>]*src="([^"]*)"', page.read_text("utf-8"))
        assert not [src for src in scripts if re.match(r"[a-z]+:", src)], page  # all local
        for target in re.findall(r'<a [^>]*href="([^"#?]*)[^"]*"', page.read_text("utf-8")):
            if not target or re.match(r"[a-z]+:", target):
                continue
            resolved = (page.parent / target).resolve()
            assert resolved.is_file(), (page, target)  # a file, never a folder
    # the session's one Playwright driver (a second one in a worker that already ran browser
    # tests would find their event loop running)
    browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                         args=["--headless", "--no-sandbox", "--disable-gpu"])
    try:
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        tab.goto((site / "index.html").as_uri())
        tab.locator("input[data-md-component=search-query]").fill("budget")
        result = tab.locator(".md-search-result__item a").first
        result.wait_for(timeout=30_000)
        assert "Initializing" not in tab.locator(".md-search-result__meta").inner_text()
        result.click()
        tab.wait_for_load_state()
        assert tab.url.startswith("file://") and tab.url.split("#")[0].endswith(".html")
        assert "budget" in tab.locator("article").inner_text().lower()
    finally:
        browser.close()


def test_survey_reference_is_generated_from_the_loaders_schema(site: Path) -> None:
    from rrsite.survey.schema import BLOCKS

    text = text_of(site / "reference" / "survey-file.html")
    assert "rrsite:survey-reference" not in text  # the marker was replaced
    page = words(text)
    for block in BLOCKS:
        for key in block.keys:
            # each key's row: its name, then its whole meaning
            assert re.search(rf"\b{re.escape(key.name)}\b", text), (block.name, key.name)
            assert words(key.doc) in page, (block.name, key.name, key.doc)


def test_cli_reference_is_generated_from_the_parser(site: Path) -> None:
    import argparse

    from rrsite.cli import COMMANDS, make_parser

    text = text_of(site / "reference" / "cli.html")
    page = words(text)
    for name in COMMANDS:
        assert f"rrsite {name}" in text, name
        parser = make_parser([name])
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for action in sub.choices[name]._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            for option in action.option_strings:
                assert option in text, (name, option)
            if action.help and "%(" not in action.help:
                assert words(action.help) in page, (name, action.help)


def test_python_api_is_rendered(site: Path) -> None:
    page = text_of(site / "reference" / "python-api.html")
    for name in ("rrsite.analyze.api.analyze", "rrsite.survey.load_survey",
                 "rrsite.core.privacy.privacy_of", "rrsite.estimate.univariate.fit"):
        assert name in page, name


def test_docs_cite_nothing_outside_the_repository(site: Path) -> None:
    """Neither the sources nor the built pages cite the project's private notes."""
    forbidden = re.compile(r"MATH\.md|DESIGN\.md|STYLE\.md|PYODIDE-NOTES|/work/shared")
    for path in [*pages(), ROOT / "README.md", *site.rglob("*.html")]:
        match = forbidden.search(path.read_text(encoding="utf-8"))
        assert match is None, f"{path} cites {match.group(0) if match else ''}"


@pytest.mark.parametrize("page", RUNNABLE_PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_snippets_run(page: Path, tmp_path: Path) -> None:
    assert run_page(page, tmp_path) > 0


@pytest.mark.parametrize("block", SURVEYS, ids=lambda b: b.where)
def test_survey_snippets_build(block, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    build_survey(block, tmp_path)


def test_there_are_snippets_of_every_kind() -> None:
    kinds = {block.lang for page in pages() for block in blocks(page)}
    assert {"sh", "python", "markdown", "console"} <= kinds
    assert len(SURVEYS) >= 3 and len(RUNNABLE_PAGES) >= 5


# ---- the checker itself fails on a bad snippet ------------------------------------------------

BAD_PAGE = """# A page with broken snippets

```sh
rrsite new ok-survey
test -f ok-survey.md
```

```sh
rrsite build no-such-survey.md -o dist
```

```python
import json
assert json.loads("[1, 2]") == [1, 2, 3], "wrong"
```

```sh
rrsite serve dist
```

````markdown
---
id: broken
title: Broken
---
## A question?

```question
id: q
type: yes-or-no
```
````
"""


def test_checker_fails_on_bad_snippets(tmp_path: Path) -> None:
    page = tmp_path / "bad.md"
    page.write_text(BAD_PAGE, encoding="utf-8")
    found = blocks(page)
    assert [b.lang for b in found] == ["sh", "sh", "python", "sh", "markdown"]
    cwd = scratch_copy(tmp_path / "root")
    run_block(found[0], cwd)  # a good block runs, and its file is there for the next one
    assert (cwd / "ok-survey.md").is_file()
    with pytest.raises(SnippetFailed, match=r"bad\.md:8: sh block failed with exit code 2"):
        run_block(found[1], cwd)
    with pytest.raises(SnippetFailed, match=r"bad\.md:12: python block failed(.|\n)*wrong"):
        run_block(found[2], cwd)
    with pytest.raises(SnippetFailed, match=r"bad\.md:17: .*tag it `console`"):
        run_block(found[3], cwd)
    assert found[4].is_survey
    with pytest.raises(SnippetFailed, match=r"bad\.md:21: survey block does not build"
                                            r"(.|\n)*did you mean 'yes-no'"):
        build_survey(found[4], tmp_path / "surveys")
    with pytest.raises(SnippetFailed, match=r"bad\.md:8"):
        run_page(page, tmp_path / "page")


def test_strict_build_fails_on_a_broken_link(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", copy / "docs")
    (copy / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "docs_hooks.py", copy / "scripts" / "docs_hooks.py")
    (copy / "docs" / "how-to" / "broken.md").write_text(
        "# Broken\n\nSee [a page that does not exist](no-such-page.md).\n", encoding="utf-8")
    done = mkdocs_build(copy / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr


def test_readme_is_one_screen_and_starts_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 150
    first = next(block for block in blocks(ROOT / "README.md") if block.lang == "sh")
    commands = [line.split("#")[0].strip() for line in first.text.splitlines() if line.strip()]
    assert commands[:2] == ["make demo", "make test"]
    for needed in ("rrsite check", "rrsite preview", "make docs", "make docs-serve"):
        assert needed in readme, needed
