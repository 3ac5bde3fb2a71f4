"""Every script and stylesheet of every built page is pinned, whatever the template asked for.

The pins derive from the build's assets (rrsite/site/pins.py, ``pin_page``): a page of the
shipped templates for each kind of survey (the examples, a study in two languages with a split
ballot, a check and a panel, the extended crosswise model) loads nothing without the SHA-384 of
the file it names, and neither does a template that loads its assets with plain ``asset()``. A
script that is not an asset, or an integrity that is not the file's, fails the build at the
template's line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import pytest

from rrsite.site.builder import BuildResult, build
from rrsite.survey import SurveyErrors

from .conftest import FIXTURES, PYODIDE, SURVEYS

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"
FIELDING = ROOT / "tests" / "browser" / "fielding"
CROSSWISE = ROOT / "tests" / "browser" / "surveys" / "extended-crosswise.md"
CONFIG = re.compile(r'<script type="application/json" id="rr-config">(.*?)</script>', re.S)
#: An asset URL anywhere in a page: ../_rr/name.hash.js, ../../_rr/...
ASSET_URL = re.compile(r"""(?:\.\./)+_rr/[\w.-]+\.(?:js|mjs|css)""")


def sri(data: bytes) -> str:
    """SHA-384 in the form of the integrity attribute, computed here."""
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()


class Loads(HTMLParser):
    """Every tag of a page with a src or href: (tag, attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {key: value or "" for key, value in attrs}
        if "src" in values or "href" in values:
            self.tags.append((tag, values))


def loads(page: Path) -> list[tuple[str, dict[str, str]]]:
    parser = Loads()
    parser.feed(page.read_text("utf-8"))
    return parser.tags


@pytest.fixture(scope="module")
def fielded(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """The examples, a two-language study with a panel, and the extended crosswise model."""
    base = tmp_path_factory.mktemp("fielded")
    return build([SURVEYS, FIELDING, CROSSWISE], base / "dist", TEMPLATES, PYODIDE,
                 compress=False, cache=base / "cache")


def pages(result: BuildResult) -> list[Path]:
    return sorted(result.dist.glob("*/index.html")) + sorted(result.dist.glob("*/*/index.html"))


def test_every_page_of_every_kind_loads_only_pinned_code(fielded):
    every = pages(fielded)
    assert any(page.parent.name == "de" for page in every)  # a translation's page, one deeper
    loaded: set[str] = set()
    for page in every:
        text = page.read_text("utf-8")
        pinned_urls = set()
        for tag, attrs in loads(page):
            url = attrs.get("src") or attrs["href"]
            rels = attrs.get("rel", "").split()
            code = tag == "script" or "stylesheet" in rels or "modulepreload" in rels
            if not code:
                assert not url.endswith((".js", ".mjs", ".css")), (page, tag, url)
                continue
            target = (page.parent / url).resolve()
            assert target.is_relative_to(fielded.dist / "_rr"), (page, url)
            assert attrs.get("integrity") == sri(target.read_bytes()), (page, url)
            pinned_urls.add(url)
            loaded.add(target.name.split(".")[0] + target.suffix)
        config = json.loads(CONFIG.search(text).group(1))  # type: ignore[union-attr]
        worker = (page.parent / config["worker_url"]).resolve()
        assert config["integrity"]["worker"] == sri(worker.read_bytes())
        # no asset URL on the page outside a pinned tag but the worker's (pinned in the config)
        for url in set(ASSET_URL.findall(text)) - pinned_urls:
            assert url == config["worker_url"], (page, url)
    # what the fielded pages load, each pinned above
    assert {"page.js", "guard.js", "page.css", "fielding.js", "fielding.css", "panel.js",
            "crosswise.js", "numbers.js"} <= loaded


def test_a_translation_page_pins_the_same_files_one_folder_deeper(fielded):
    first = fielded.dist / "campus" / "index.html"
    german = fielded.dist / "campus" / "de" / "index.html"
    def pinned(page: Path) -> dict[str, str]:
        return {str((page.parent / (a.get("src") or a["href"])).resolve()): a["integrity"]
                for _, a in loads(page) if "integrity" in a}
    assert pinned(first) == pinned(german) and len(pinned(first)) >= 5
    one = json.loads(CONFIG.search(first.read_text("utf-8")).group(1))  # type: ignore[union-attr]
    two = json.loads(CONFIG.search(german.read_text("utf-8")).group(1))  # type: ignore[union-attr]
    assert one["integrity"] == two["integrity"]
    assert urljoin("https://x/campus/", one["worker_url"]) == \
        urljoin("https://x/campus/de/", two["worker_url"])


def test_a_template_that_loads_assets_with_asset_gets_them_pinned(tmp_path):
    """The fixture template names its stylesheet and script with plain asset(): pinned."""
    result = build([SURVEYS / "honor-code.md"], tmp_path / "dist", FIXTURES / "templates",
                   PYODIDE, compress=False, cache=tmp_path / "cache")
    page = result.dist / "honor-code" / "index.html"
    code = [(tag, attrs) for tag, attrs in loads(page)
            if tag == "script" or attrs.get("rel") == "stylesheet"]
    assert len(code) == 2
    for _, attrs in code:
        target = page.parent / (attrs.get("src") or attrs["href"])
        assert attrs["integrity"] == sri(target.read_bytes())


def _template_with(tmp_path: Path, line: str) -> Path:
    templates = tmp_path / "templates"
    shutil.copytree(FIXTURES / "templates", templates)
    page = templates / "page.html"
    page.write_text(page.read_text("utf-8").replace("</head>", f"{line}\n</head>"), "utf-8")
    return templates


@pytest.mark.parametrize(("line", "says"), [
    ('<script src="https://cdn.example.org/x.js"></script>',
     "loads https://cdn.example.org/x.js which is not a file in"),
    ('<link rel="stylesheet" href="{{ asset(\'style.css\') }}" integrity="sha384-AAAA">',
     "with an integrity that is not the file's"),
])
def test_code_that_cannot_be_pinned_fails_the_build_at_the_template(tmp_path, line, says):
    templates = _template_with(tmp_path, line)
    dist = tmp_path / "dist"
    with pytest.raises(SurveyErrors) as caught:
        build([SURVEYS / "honor-code.md"], dist, templates, PYODIDE, compress=False,
              cache=tmp_path / "cache")
    (error,) = caught.value.errors
    assert error.file == str(templates / "page.html")
    assert says in error.message
    if "cdn" in line:
        lines = (templates / "page.html").read_text("utf-8").splitlines()
        assert "cdn.example.org" in lines[error.line - 1]
    assert not dist.exists()  # nothing written
