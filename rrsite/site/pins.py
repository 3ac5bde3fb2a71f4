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

from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape

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
