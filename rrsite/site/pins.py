"""Pinned code: the Subresource Integrity of every file a page loads, fixed at build time.

A page names each of its scripts and stylesheets with an ``integrity`` attribute (SHA-384, W3C
Subresource Integrity): a file swapped under the same name does not run. A module's imports of
other assets are inlined by the build (rrsite/site/bundle.py), so every script is one file with
one integrity. The worker, the Pyodide runtime and the core bundle are pinned in the page's
configuration (``integrity``): the page checks the worker's script before starting it, and the
worker fetches the runtime and the core with these values. None of them is read from the host
at run time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser

from markupsafe import Markup

from .assets import sri


class MissingAsset(Exception):
    """A template named an asset that is not in its assets folder."""


@dataclass
class Pins:
    """The hashed assets of a build, their integrity and their imports."""

    #: name -> (hashed name, final bytes), as :func:`assets.hash_assets` gives them
    assets: Mapping[str, tuple[str, bytes]]
    #: the URL prefix of the assets folder, relative to a page (``../_rr/``)
    prefix: str
    _integrity: dict[str, str] = field(default_factory=dict)

    def url(self, name: str) -> str:
        """The URL of an asset relative to the page."""
        if name not in self.assets:
            raise MissingAsset(name)
        return self.prefix + self.assets[name][0]

    def integrity(self, name: str) -> str:
        """The ``sha384-...`` value of an asset as built."""
        if name not in self.assets:
            raise MissingAsset(name)
        if name not in self._integrity:
            self._integrity[name] = sri(self.assets[name][1])
        return self._integrity[name]

    def module_script(self, name: str) -> Markup:
        """``<script type="module" src integrity>``."""
        return Markup(f'<script type="module" src="{escape(self.url(name))}" '
                      f'integrity="{self.integrity(name)}"></script>')

    def stylesheet(self, name: str) -> Markup:
        """``<link rel="stylesheet" href integrity>``."""
        return Markup(f'<link rel="stylesheet" href="{escape(self.url(name))}" '
                      f'integrity="{self.integrity(name)}">')


class UnpinnedCode(Exception):
    """A page loads a script or stylesheet that is not one of the build's assets."""

    def __init__(self, url: str, line: int, *, wrong_integrity: bool = False) -> None:
        super().__init__(url)
        self.url = url
        #: the line of the rendered page the tag is on
        self.line = line
        #: the URL is an asset's, but the tag's own ``integrity`` is not the asset's
        self.wrong_integrity = wrong_integrity


#: ``<link rel>`` values that load code or style (the others, such as ``icon``, load neither).
CODE_LINKS = ("stylesheet", "modulepreload")
#: ``<link rel="preload" as>`` values that load code or style.
CODE_PRELOADS = ("script", "style", "worker")


class _Tags(HTMLParser):
    """The start tags of a page that load code: (line, column, tag text, URL)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, int, str, str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {key: value or "" for key, value in attrs}
        url = None
        if tag == "script" and "src" in values:
            url = values["src"]
        elif tag == "link":
            rels = values.get("rel", "").lower().split()
            if any(rel in CODE_LINKS for rel in rels) or (
                    "preload" in rels and values.get("as", "").lower() in CODE_PRELOADS):
                url = values.get("href", "")
        if url is not None:
            line, column = self.getpos()
            self.found.append((line, column, self.get_starttag_text() or "", url,
                               "integrity" in values))


def pin_page(html: str, pins: Pins) -> str:
    """``html`` with every script and stylesheet that names an asset carrying its integrity.

    The pins derive from the build's assets, not from what a template remembered to ask for: a
    template that loads an asset with ``asset('x.js')`` gets its ``integrity`` here, so a new
    asset cannot be loaded unpinned. A tag that already has an ``integrity`` must carry the
    asset's; a script or stylesheet that is not an asset raises :class:`UnpinnedCode` (it
    could not be pinned, and the pages' Integrity-Policy would refuse it).
    """
    by_url = {pins.prefix + hashed: name for name, (hashed, _) in pins.assets.items()}
    parser = _Tags()
    parser.feed(html)
    parser.close()
    starts = [0]  # the offset of each line (the parser counts lines by "\n" only)
    starts.extend(match.end() for match in re.finditer("\n", html))
    edits: list[tuple[int, str, str]] = []
    for line, column, text, url, pinned in parser.found:
        name = by_url.get(url)
        if name is None:
            raise UnpinnedCode(url, line)
        value = pins.integrity(name)
        if pinned:
            if f'integrity="{value}"' not in text:
                raise UnpinnedCode(url, line, wrong_integrity=True)
            continue
        end = len(text) - (2 if text.endswith("/>") else 1)
        edits.append((starts[line - 1] + column, text, text[:end] + f' integrity="{value}"'
                      + text[end:]))
    for offset, old, new in reversed(edits):
        assert html[offset:offset + len(old)] == old
        html = html[:offset] + new + html[offset + len(old):]
    return html
