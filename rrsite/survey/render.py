"""Markdown to HTML for survey prose, question text and option labels (Python-Markdown).

Raw HTML is shown as text, and links keep only safe destinations: http, https and mailto
addresses, and addresses without a scheme (a page beside the survey, an anchor). A link or image
to anything else (``javascript:``, ``data:``, ``vbscript:``, however its letters are cased,
spaced or written as HTML entities) loses its address and keeps its text; the page's
Content-Security-Policy would stop such a script, but a host that sends no headers sends none.
`unsafe_links` finds them in a survey's text, line by line, for the author's warning.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable
from html.parser import HTMLParser
from urllib.parse import urlsplit

import markdown
from markdown.treeprocessors import Treeprocessor

from .source import Prose

#: The schemes a link or image may name (an address without a scheme is relative: kept).
SAFE_SCHEMES = {"http", "https", "mailto"}
#: What a browser drops from an address before it reads its scheme: ASCII whitespace, controls.
_IGNORED = re.compile(r"[\x00-\x20\x7f]")
#: Link destinations in Markdown: inline ``](dest``, and reference definitions ``[x]: dest``.
_DESTINATIONS = re.compile(r"\]\(\s*<?([^)>\n]+)|^ {0,3}\[[^\]\n]+\]:\s*<?([^>\n]+)",
                           re.MULTILINE)
#: A link's title after its address (``[a](url "title")``).
_TITLE = re.compile(r"\s+[\"'(].*$")

#: Python-Markdown extensions for survey prose: tables, fenced code, footnotes, definition lists,
#: abbreviations, and lists that do not need a blank line. Raw HTML is not passed through: it is
#: shown as text, so a survey file cannot put markup, forms or scripts on the page.
EXTENSIONS = ["tables", "fenced_code", "footnotes", "def_list", "abbr", "sane_lists"]

_PARAGRAPH = re.compile(r"\A<p>(.*)</p>\Z", re.DOTALL)


def is_safe_address(address: str) -> bool:
    """Whether a link's address is http, https, mailto or relative, as a browser would read it."""
    cleaned = _IGNORED.sub("", html.unescape(address.replace("\x02amp\x03", "&")))
    try:
        scheme = urlsplit(cleaned).scheme.lower()
    except ValueError:
        return False
    return scheme == "" or scheme in SAFE_SCHEMES


def unsafe_links(text: str) -> list[tuple[int, str]]:
    """(1-based line, address) of each Markdown link or image whose address is not safe."""
    found = []
    for match in _DESTINATIONS.finditer(text):
        address = _TITLE.sub("", (match.group(1) or match.group(2)).strip())
        if not is_safe_address(address):
            found.append((text.count("\n", 0, match.start()) + 1, address))
    return found


class _SafeLinks(Treeprocessor):  # type: ignore[misc]
    """Drops the address of every link and image that is not safe (`is_safe_address`)."""

    def run(self, root: ElementTree.Element) -> None:
        for element in root.iter():
            for attribute in ("href", "src"):
                value = element.get(attribute)
                if value is not None and not is_safe_address(value):
                    del element.attrib[attribute]


class _Renderer:
    """One Markdown instance, reset between documents (creating one per call is slow)."""

    def __init__(self) -> None:
        self._markdown = markdown.Markdown(extensions=EXTENSIONS, output_format="html")
        self._markdown.preprocessors.deregister("html_block")
        self._markdown.inlinePatterns.deregister("html")
        # after every other tree step (the last, "unescape", is at 0): the final addresses
        self._markdown.treeprocessors.register(_SafeLinks(self._markdown), "safe_links", -10)

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
