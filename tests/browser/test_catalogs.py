"""The message catalogs: every string the page shows, complete in every shipped language.

rrsite ships en, es, fr, de, pt and it: each catalog has every key of en.json, with the
same placeholders, and is translated (no text left in English but the few words that are the same
in both languages).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
# A placeholder: {name}, or the number of an ICU plural form, {count, plural, one {…} other {…}}.
PLACEHOLDER = re.compile(r"\{(\w+)(?:\}|\s*,\s*plural\s*,)")
PLURAL = re.compile(r"\{(\w+)\s*,\s*plural\s*,((?:[^{}]|\{[^{}]*\})*)\}")
CATEGORIES = {"zero", "one", "two", "few", "many", "other"}
# Keys page.js (and its modules) builds from a name: runtime_<stage>.
DYNAMIC = {f"runtime_{stage}" for stage in ("loading", "downloading", "starting", "ready")}
# page.js: explain_<design>, action_card_<colour>;
# page.html: report_<report>, combined_intro_<design>.
DYNAMIC |= {"explain_crosswise", "explain_triangular", "action_card_red", "action_card_black",
            "combined_intro_crosswise", "combined_intro_triangular"}
DYNAMIC |= {f"report_{r}" for r in ("same", "different", "circle", "triangle")}
# numbers.js: explain_number_<design>, number_action_<action>.
DYNAMIC |= {f"explain_number_{d}" for d in ("laplace", "duchi", "piecewise")}
DYNAMIC |= {f"number_action_{a}" for a in ("mask", "multiply", "high", "low", "centre", "tails",
                                           "innocuous")}
# oracles.js: explain_<frequency oracle>.
DYNAMIC |= {f"explain_{d}" for d in ("oue", "sue", "subset")}
# The survey loader (not the page): the answers of a yes-no question in the survey's language.
DYNAMIC |= {"answer_yes", "answer_no"}
# The survey loader: the questions it adds (rrsite.survey.fielding.words.KEYS).
DYNAMIC |= {"language_name", "language_variable", "arm_variable", "arm_randomized", "arm_direct",
            "check_question", "check_yes", "check_truth", "check_no", "direct_help"}
SHIPPED = ("en", "es", "fr", "de", "pt", "it")
# Texts that are the same word in English: Spanish and Italian "No".
SAME_AS_ENGLISH = {"es": {"answer_no"}, "it": {"answer_no"},
                   # Portuguese quotes as English does: "“{no}”" (the comprehension check)
                   "pt": {"check_no"}}


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
        imports = re.findall(r"""from\s+["']\./([\w.-]+)["']""", text)
        todo += [path.parent / name for name in imports]
    return found


def used_keys() -> set[str]:
    script = "\n".join(path.read_text(encoding="utf-8")
                        for path in sorted((TEMPLATES / "assets").glob("*.js")))
    page = (TEMPLATES / "page.html").read_text(encoding="utf-8")
    keys = set(re.findall(r"""\bt\(\s*["']([\w-]+)["']""", script))
    keys |= set(re.findall(r"""["']([a-z]+_[\w-]+)["']""", script)) & set(catalog("en"))
    keys |= set(re.findall(r"\bm\.(\w+)", page))
    return keys | DYNAMIC


def test_the_shipped_catalogs() -> None:
    assert sorted(p.stem for p in (TEMPLATES / "messages").glob("*.json")) == sorted(SHIPPED)


@pytest.mark.parametrize("lang", SHIPPED)
def test_catalog_is_complete(lang: str) -> None:
    messages = catalog(lang)
    english = catalog("en")
    assert set(messages) == set(english)
    for key, text in messages.items():
        assert isinstance(text, str) and text.strip(), key
        assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(english[key])), key


@pytest.mark.parametrize("lang", SHIPPED)
def test_plural_forms_are_well_formed(lang: str) -> None:
    """Every ICU plural form has an `other` branch and only CLDR categories or `=n`."""
    found = 0
    for key, text in catalog(lang).items():
        for _name, branches in PLURAL.findall(text):
            forms = re.findall(r"(=\d+|\w+)\s*\{", branches)
            assert "other" in forms, (key, text)
            assert all(form in CATEGORIES or form.startswith("=") for form in forms), (key, forms)
            found += 1
        assert text.count("{") == text.count("}"), key
    assert found >= 4  # counts that take a plural: cards (twice), characters, seconds


def test_every_key_used_exists_and_every_key_is_used() -> None:
    messages = catalog("en")
    used = used_keys()
    assert used - set(messages) == set()
    assert set(messages) - used == set()


@pytest.mark.parametrize("lang", [lang for lang in SHIPPED if lang != "en"])
def test_catalog_is_translated(lang: str) -> None:
    english, other = catalog("en"), catalog(lang)
    same = {key for key in english if english[key] == other[key]
            and PLACEHOLDER.sub("", english[key]).strip()}
    assert same == SAME_AS_ENGLISH.get(lang, set())


@pytest.mark.parametrize("lang", SHIPPED)
def test_answer_words_match_the_loader(lang: str) -> None:
    """The loader's yes-no words (rrsite.survey.schema.LANGUAGES) are the catalog's."""
    from rrsite.survey.schema import LANGUAGES

    messages = catalog(lang)
    assert LANGUAGES[lang] == {"yes": messages["answer_yes"], "no": messages["answer_no"]}



@pytest.mark.parametrize("lang", SHIPPED)
def test_added_questions_words_match_the_loader(lang: str) -> None:
    """The loader's words of the questions it adds (rrsite.survey.fielding.words) are the
    catalog's, and every one of them is in DYNAMIC above."""
    from rrsite.survey.fielding.words import KEYS, WORDS

    messages = catalog(lang)
    assert WORDS[lang] == {key: messages[key] for key in KEYS}
    assert set(KEYS) <= DYNAMIC


@pytest.mark.parametrize("lang", SHIPPED)
def test_quoted_labels_are_the_labels(lang: str) -> None:
    """A message that quotes a badge or a heading of the page quotes it word for word."""
    m = catalog(lang)
    assert m["sensitive_badge"] in m["review_intro"]
    assert m["sensitive_badge"] in m["submit_note"]  # said before "Randomize and review"
    assert m["sensitive_badge"].lower() in m["privacy_text"].lower()
    assert m["combined_badge"] in m["privacy_text_combined"]
