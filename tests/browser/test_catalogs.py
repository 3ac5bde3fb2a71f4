"""The message catalogs: every string the page shows, complete in English and Spanish."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# Keys page.js (and its modules) builds from a name: runtime_<stage>.
DYNAMIC = {f"runtime_{stage}" for stage in ("loading", "downloading", "starting", "ready")}
# page.js: explain_<design>, action_card_<colour>;
# page.html: report_<report>, combined_intro_<design>.
DYNAMIC |= {"explain_crosswise", "explain_triangular", "action_card_red", "action_card_black",
            "combined_intro_crosswise", "combined_intro_triangular"}
DYNAMIC |= {f"report_{r}" for r in ("same", "different", "circle", "triangle")}
# numbers.js (issue 21): explain_number_<design>, number_action_<action>.
DYNAMIC |= {f"explain_number_{d}" for d in ("laplace", "duchi", "piecewise")}
DYNAMIC |= {f"number_action_{a}" for a in ("mask", "multiply", "high", "low", "centre", "tails",
                                           "innocuous")}


def catalog(lang: str) -> dict[str, str]:
    return json.loads((TEMPLATES / "messages" / f"{lang}.json").read_text(encoding="utf-8"))


def page_modules() -> list[Path]:
    """page.js and the modules it imports, transitively (the page split by concern)."""
    found: list[Path] = []
    todo = [TEMPLATES / "assets" / "page.js"]
    while todo:
        path = todo.pop()
        if path in found:
            continue
        found.append(path)
        text = path.read_text(encoding="utf-8")
        imported = re.findall(r"""from\s+["']\./([\w.-]+)["']""", text)
        todo += [path.parent / name for name in imported]
    return found


def used_keys() -> set[str]:
    script = "\n".join(path.read_text(encoding="utf-8")
                        for path in sorted((TEMPLATES / "assets").glob("*.js")))
    page = (TEMPLATES / "page.html").read_text(encoding="utf-8")
    keys = set(re.findall(r"""\bt\(\s*["']([\w-]+)["']""", script))
    keys |= set(re.findall(r"""["']([a-z]+_[\w-]+)["']""", script)) & set(catalog("en"))
    keys |= set(re.findall(r"\bm\.(\w+)", page))
    return keys | DYNAMIC


@pytest.mark.parametrize("lang", ["en", "es"])
def test_catalog_is_complete(lang: str) -> None:
    messages = catalog(lang)
    english = catalog("en")
    assert set(messages) == set(english)
    for key, text in messages.items():
        assert isinstance(text, str) and text.strip(), key
        assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(english[key])), key


def test_every_key_used_exists_and_every_key_is_used() -> None:
    messages = catalog("en")
    used = used_keys()
    assert used - set(messages) == set()
    assert set(messages) - used == set()


def test_spanish_is_translated() -> None:
    english, spanish = catalog("en"), catalog("es")
    same = [key for key in english if english[key] == spanish[key]
            and PLACEHOLDER.sub("", english[key]).strip()]
    assert same == []
