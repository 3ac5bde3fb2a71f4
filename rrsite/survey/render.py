"""Markdown to HTML for survey prose, question text and option labels (Python-Markdown)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from html.parser import HTMLParser

import markdown

from .source import Prose

#: Python-Markdown extensions for survey prose: tables, fenced code, footnotes, definition lists,
#: abbreviations, and lists that do not need a blank line. Raw HTML is not passed through: it is
#: shown as text, so a survey file cannot put markup, forms or scripts on the page.
EXTENSIONS = ["tables", "fenced_code", "footnotes", "def_list", "abbr", "sane_lists"]

_PARAGRAPH = re.compile(r"\A<p>(.*)</p>\Z", re.DOTALL)


class _Renderer:
    """One Markdown instance, reset between documents (creating one per call is slow)."""

    def __init__(self) -> None:
        self._markdown = markdown.Markdown(extensions=EXTENSIONS, output_format="html")
        self._markdown.preprocessors.deregister("html_block")
        self._markdown.inlinePatterns.deregister("html")

    def block(self, text: str) -> str:
        """Block-level Markdown (paragraphs, lists, tables) to HTML."""
        self._markdown.reset()
        return str(self._markdown.convert(text)).strip()

    def inline(self, text: str) -> str:
        """Markdown for one line (a heading or a label): the HTML without its ``<p>`` wrapper."""
        converted = self.block(text)
        match = _PARAGRAPH.match(converted)
        if match and "<p>" not in match.group(1):
            return match.group(1)
        return converted


_renderer: _Renderer | None = None


def _get() -> _Renderer:
    global _renderer
    if _renderer is None:
        _renderer = _Renderer()
    return _renderer


def render_block(text: str) -> str:
    """Markdown prose to HTML ("" for blank text)."""
    return _get().block(text) if text.strip() else ""


def render_inline(text: str) -> str:
    """Inline Markdown (question text, option labels) to HTML without a paragraph around it."""
    return _get().inline(text) if text.strip() else ""


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def plain_text(rendered_html: str) -> str:
    """The text of rendered HTML, tags dropped and whitespace collapsed (for the manifest)."""
    parser = _TextOnly()
    parser.feed(rendered_html)
    parser.close()
    return " ".join(html.unescape("".join(parser.parts)).split())


def render_prose(parts: Iterable[Prose]) -> str:
    """The Markdown of the prose parts that hold text, rendered as one block of HTML."""
    return render_block("\n\n".join(part.text for part in parts if part.text.strip()))
