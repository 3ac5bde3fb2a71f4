"""Message catalogs: a survey's own (`messages: xx.json` beside it) and the text direction.

A catalog is a flat JSON object of message keys to text, with ``{name}`` placeholders (the page's
``t()``). rrsite ships catalogs in ``templates/messages/``; a survey in any other language brings
its own, checked key by key against the templates' ``en.json`` by the build
(:func:`compare_catalog`), every problem with the file and line to fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import SurveyError
from .source import UNWANTED, describe

#: A language code as the front matter's ``language:`` takes it (a BCP 47 tag's usual forms:
#: ``en``, ``pt-BR``, ``sr-Latn``, ``zh-Hant-TW``).
LANGUAGE_TAG = r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*"
LANGUAGE_RULE = ("a language code: two or three lowercase letters, optionally followed by a script "
                 "or region (en, fr, pt-BR, sr-Latn)")
#: Language names people write for ``language:`` (English and their own), by the code to write:
#: ``language: German`` gets "the code of German is 'de'".
LANGUAGE_NAMES: dict[str, str] = {
    name: code for code, names in {
        "en": ("english",), "es": ("spanish", "español", "espanol", "castellano"),
        "fr": ("french", "français", "francais"), "de": ("german", "deutsch"),
        "pt": ("portuguese", "português", "portugues"), "it": ("italian", "italiano"),
        "nl": ("dutch", "nederlands"), "pl": ("polish", "polski"), "sv": ("swedish", "svenska"),
        "da": ("danish", "dansk"), "nb": ("norwegian", "norsk"), "fi": ("finnish", "suomi"),
        "el": ("greek",), "tr": ("turkish", "türkçe"), "ru": ("russian",),
        "uk": ("ukrainian",), "cs": ("czech", "čeština"), "hu": ("hungarian", "magyar"),
        "ro": ("romanian", "română"), "ar": ("arabic",), "he": ("hebrew",), "fa": ("persian",),
        "hi": ("hindi",), "zh": ("chinese",), "ja": ("japanese",), "ko": ("korean",),
        "sw": ("swahili", "kiswahili"), "id": ("indonesian",), "vi": ("vietnamese",),
        "ca": ("catalan", "català"),
    }.items() for name in names
}
#: Languages written right to left by default (CLDR's character order right-to-left for the
#: language's default script), by primary subtag.
RTL_LANGUAGES = frozenset({
    "ar", "arc", "ckb", "dv", "fa", "glk", "he", "iw", "khw", "ks", "lrc", "mzn", "nqo", "ps",
    "sd", "syr", "ug", "ur", "yi",
})
#: Scripts written right to left (ISO 15924, lower case), for tags that name one (``az-Arab``).
RTL_SCRIPTS = frozenset({"adlm", "arab", "hebr", "mand", "mend", "nkoo", "rohg", "samr", "syrc",
                         "thaa"})
#: Placeholders in a message: ``{name}``, and the number of an ICU plural form
#: (``{count, plural, one {# card} other {# cards}}`` uses ``count``).
PLACEHOLDER = re.compile(r"\{(\w+)(?:\}|\s*,\s*plural\s*,)")
_KEY_LINE = re.compile(r'^\s*[{,]?\s*"((?:[^"\\]|\\.)*)"\s*:')


def primary_subtag(language: str) -> str:
    """``pt-BR`` -> ``pt``."""
    return language.split("-", 1)[0].lower()


def text_direction(language: str) -> str:
    """``rtl`` for a language written right to left, else ``ltr``."""
    parts = language.lower().split("-")
    if any(len(part) == 4 and part in RTL_SCRIPTS for part in parts[1:]):
        return "rtl"
    if any(len(part) == 4 and part.isalpha() for part in parts[1:]):
        return "ltr"  # another script named explicitly (az-Latn, ku-Latn)
    return "rtl" if parts[0] in RTL_LANGUAGES else "ltr"


@dataclass
class Catalog:
    """A catalog read from a file: its messages and the line of each key."""

    path: Path
    messages: dict[str, str]
    lines: dict[str, int] = field(default_factory=dict)

    def line(self, key: str) -> int:
        """The line of a key in the file (1 when not found)."""
        return self.lines.get(key, 1)


def key_lines(text: str) -> dict[str, int]:
    """The line of each key of a flat JSON object written one key per line (first occurrence)."""
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _KEY_LINE.match(line)
        if match:
            try:
                key = json.loads(f'"{match.group(1)}"')
            except json.JSONDecodeError:
                continue
            lines.setdefault(key, number)
    return lines


def read_catalog(path: Path) -> tuple[Catalog | None, list[SurveyError]]:
    """Read a catalog file; problems (not UTF-8, bad JSON, not texts) with the file's lines."""
    where = str(path)
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError:
        return None, [SurveyError(where, 1, "the message catalog is not UTF-8")]
    except OSError as error:
        return None, [SurveyError(where, 1, f"cannot read the message catalog: {error.strerror}")]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return None, [SurveyError(where, error.lineno, f"bad JSON: {error.msg} (column "
                                                       f"{error.colno})")]
    if not isinstance(data, dict):
        return None, [SurveyError(where, 1, "a message catalog must be a JSON object of "
                                            "\"key\": \"text\" pairs")]
    lines = key_lines(text)
    errors = [SurveyError(where, lines.get(key, 1), f"message '{key}' must be text in quotes")
              for key, value in data.items() if not isinstance(value, str)]
    messages = {key: value for key, value in data.items() if isinstance(value, str)}
    for key, value in messages.items():
        odd = UNWANTED.search(value)
        if odd:
            errors.append(SurveyError(where, lines.get(key, 1), f"message '{key}' holds "
                                      f"{describe(odd.group())}: a control or bidirectional "
                                      "character has no place in a page's text; remove it"))
    return Catalog(path, messages, lines), errors


@dataclass
class Comparison:
    """What a catalog lacks or has wrong against the reference catalog (en.json)."""

    missing: list[str] = field(default_factory=list)
    errors: list[SurveyError] = field(default_factory=list)
    warnings: list[SurveyError] = field(default_factory=list)


def compare_catalog(catalog: Catalog, reference: dict[str, str]) -> Comparison:
    """Check a catalog against the reference: keys, placeholders, empty and untranslated texts."""
    result = Comparison()
    where = str(catalog.path)
    result.missing = [key for key in reference if key not in catalog.messages]
    untranslated = 0
    for key, text in catalog.messages.items():
        line = catalog.line(key)
        if key not in reference:
            result.warnings.append(SurveyError(where, line, f"message '{key}' is not one the page "
                                               "uses (a typo, or a key of another rrsite "
                                               "version?): it is ignored"))
            continue
        if not text.strip():
            result.errors.append(SurveyError(where, line, f"message '{key}' is empty: translate "
                                             f"en.json's {json.dumps(reference[key])}"))
            continue
        want = set(PLACEHOLDER.findall(reference[key]))
        have = set(PLACEHOLDER.findall(text))
        if want != have:
            parts = []
            if want - have:
                parts.append("lacks " + ", ".join(f"{{{name}}}" for name in sorted(want - have)))
            if have - want:
                parts.append("has unknown " + ", ".join(f"{{{name}}}" for name in
                                                        sorted(have - want)))
            result.errors.append(SurveyError(where, line, f"message '{key}' {' and '.join(parts)}"
                                             f": it must use the placeholders of en.json's "
                                             f"{json.dumps(reference[key])}"))
        if text == reference[key] and PLACEHOLDER.sub("", text).strip():
            untranslated += 1
    if untranslated:
        result.warnings.append(SurveyError(where, 1, f"{untranslated} of {len(reference)} "
                                           "messages are still en.json's English text: translate "
                                           "them"))
    return result
