"""Serving a built site: MIME types, pre-compressed files, `_headers`, ETags, safe paths.

The builder writes `.br` and `.gz` beside every compressible asset and a Netlify-style `_headers`
file (docs/contracts.md); this module serves those exactly as a static host that reads `_headers`
would, so the page behaves the same under `rrsite serve` and on Netlify or Cloudflare Pages.

Nothing outside DIST is served: a path's segments must be ordinary names, and the file it names
(and each pre-compressed twin) must still lie inside DIST once every symbolic link is followed, so
a link in DIST to /etc/passwd or to the database is a 404. Private keys (`*.pem`, `*.key`) and the
files the server is told are private (its key file, its database) are never served either.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Content types by suffix; JavaScript modules and wasm must be exactly these for the browser.
MIME_TYPES = {
    ".html": "text/html",
    ".htm": "text/html",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".json": "application/json",
    ".map": "application/json",
    ".wasm": "application/wasm",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".tar": "application/x-tar",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".csv": "text/csv",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".xml": "application/xml",
    ".webmanifest": "application/manifest+json",
    ".pdf": "application/pdf",
}
#: Pre-compressed siblings, best first: (Accept-Encoding token, file suffix).
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))
#: Headers sent when DIST has no `_headers` file (an older or hand-made site).
FALLBACK_RULES = """
/*
  X-Content-Type-Options: nosniff
  Referrer-Policy: no-referrer
/_rr/*
  Cache-Control: public, max-age=31536000, immutable
"""
#: Everything not under a rule that sets Cache-Control is revalidated with its ETag.
REVALIDATE = "no-cache"
#: Suffixes never served: private keys.
PRIVATE_SUFFIXES = (".pem", ".key")


def media_type(path: str) -> str:
    """The Content-Type for a file name (text types get `; charset=utf-8` from Starlette)."""
    return MIME_TYPES.get(os.path.splitext(path)[1].lower(), "application/octet-stream")


def accepted_encodings(header: str | None) -> set[str]:
    """The content codings an Accept-Encoding header allows (q > 0), `*` expanded to ours."""
    allowed: set[str] = set()
    refused: set[str] = set()
    wildcard = False
    for item in (header or "").split(","):
        token, _, params = item.strip().partition(";")
        token = token.strip().lower()
        if not token:
            continue
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if token == "*":
            wildcard = quality > 0
        elif quality > 0:
            allowed.add(token)
        else:
            refused.add(token)
    if wildcard:
        allowed |= {name for name, _ in ENCODINGS} - refused
    if "x-gzip" in allowed:
        allowed.add("gzip")
    return allowed


@dataclass(frozen=True, slots=True)
class HeaderRule:
    """One `_headers` block: a path pattern and the headers it sets (or, with `!`, removes)."""

    pattern: str
    regex: re.Pattern[str]
    headers: tuple[tuple[str, str | None], ...]


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """Netlify path patterns: `*` matches anything (slashes too), `:name` one path segment."""
    parts: list[str] = []
    for token in re.split(r"(\*|:[A-Za-z_][A-Za-z0-9_]*)", pattern):
        if token == "*":
            parts.append(".*")
        elif token.startswith(":"):
            parts.append("[^/]+")
        else:
            parts.append(re.escape(token))
    return re.compile("".join(parts))


def parse_headers_file(text: str, where: str = "_headers") -> list[HeaderRule]:
    """Rules of a Netlify/Cloudflare `_headers` file; ValueError with `where:line` if malformed."""
    rules: list[HeaderRule] = []
    pattern: str | None = None
    headers: list[tuple[str, str | None]] = []

    def flush() -> None:
        if pattern is not None:
            rules.append(HeaderRule(pattern, _pattern_regex(pattern), tuple(headers)))

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not line[0].isspace():
            flush()
            if not stripped.startswith("/"):
                raise ValueError(f"{where}:{number}: a path pattern must start with '/', "
                                 f"got {stripped!r}")
            pattern, headers = stripped, []
            continue
        if pattern is None:
            raise ValueError(f"{where}:{number}: a header line before any path pattern")
        if stripped.startswith("!"):
            headers.append((stripped[1:].strip().lower(), None))
            continue
        name, colon, value = stripped.partition(":")
        if not colon or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name.strip()):
            raise ValueError(f"{where}:{number}: expected 'Name: value', got {stripped!r}")
        headers.append((name.strip().lower(), value.strip()))
    flush()
    return rules


class HeaderRules:
    """The `_headers` of DIST, re-read when the file changes (checked at most once a second)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._checked = 0.0
        self.error: str | None = None
        self.rules: list[HeaderRule] = parse_headers_file(FALLBACK_RULES)
        self._cache: dict[str, list[tuple[str, str]]] = {}
        self.reload(force=True)

    def reload(self, force: bool = False) -> None:
        """Read the file again if it changed; on a malformed file keep the previous rules."""
        now = time.monotonic()
        if not force and now - self._checked < 1.0:
            return
        self._checked = now
        if self.path is None:
            return
        try:
            info = self.path.stat()
        except FileNotFoundError:
            stamp = None
        else:
            stamp = (info.st_mtime_ns, info.st_size)
        if stamp == self._stamp and not force:
            return
        self._stamp = stamp
        if stamp is None:
            rules = parse_headers_file(FALLBACK_RULES)
        else:
            try:
                rules = parse_headers_file(self.path.read_text(encoding="utf-8"), str(self.path))
            except (OSError, ValueError) as error:
                self.error = str(error)
                return
        self.error = None
        self.rules = rules
        self._cache = {}

    def headers_for(self, path: str) -> list[tuple[str, str]]:
        """The headers for a URL path: every matching rule in file order, later ones winning."""
        self.reload()
        cached = self._cache.get(path)
        if cached is not None:
            return cached
        result: dict[str, str] = {}
        for rule in self.rules:
            if rule.regex.fullmatch(path):
                for name, value in rule.headers:
                    if value is None:
                        result.pop(name, None)
                    else:
                        result[name] = value
        headers = list(result.items())
        if len(self._cache) < 4096:
            self._cache[path] = headers
        return headers


class SiteHeadersMiddleware:
    """Adds the `_headers` headers to every response that does not set them itself."""

    def __init__(self, app: ASGIApp, rules: HeaderRules) -> None:
        self.app = app
        self.rules = rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI entry point."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = self.rules.headers_for(scope["path"])

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in extra:
                    if name not in headers:
                        headers.append(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _safe_segments(path: str) -> list[str] | None:
    """The URL path's segments if every one is an ordinary name, else None (refused)."""
    segments = path.split("/")[1:]
    for index, segment in enumerate(segments):
        if segment == "":
            if index == len(segments) - 1:
                continue  # a trailing slash: the folder's index
            return None
        if (segment.startswith(".") or "\\" in segment or "\x00" in segment
                or ":" in segment):
            return None
    return segments


def _etag(info: os.stat_result, encoding: str) -> str:
    tag = f"{info.st_size:x}-{info.st_mtime_ns:x}"
    return f'"{tag}-{encoding}"' if encoding else f'"{tag}"'


def _etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any(candidate.strip().removeprefix("W/") == etag for candidate in header.split(","))


def _is_file(path: Path) -> os.stat_result | None:
    try:
        info = path.stat()
    except (OSError, ValueError):
        return None
    return info if stat.S_ISREG(info.st_mode) else None


class StaticSite:
    """The endpoint serving DIST: `/<id>/` is `DIST/<id>/index.html`; nothing outside DIST."""

    def __init__(self, root: Path, rules: HeaderRules, surveys: Any = None,
                 private: Iterable[Path] = ()) -> None:
        self.root = root
        self.rules = rules
        #: A callable giving [(id, title)] for the listing at `/` when DIST has no index.html.
        self.surveys = surveys
        self._real_root = Path(os.path.realpath(root))
        #: Files never served (resolved): the key file, the database and its companions.
        self.private = {Path(os.path.realpath(path)) for path in private}

    def servable(self, path: Path) -> bool:
        """Whether a file may be served: inside DIST once links are followed, and not private."""
        real = Path(os.path.realpath(path))
        return (real.is_relative_to(self._real_root) and real not in self.private
                and not real.name.lower().endswith(PRIVATE_SUFFIXES)
                and not path.name.lower().endswith(PRIVATE_SUFFIXES))

    def not_found(self) -> Response:
        """The plain 404 page."""
        return HTMLResponse("<!doctype html><title>Not found</title><h1>Not found</h1>\n",
                            status_code=404, headers={"cache-control": "no-store"})

    async def __call__(self, request: Request) -> Response:
        """Serve one GET or HEAD request."""
        path = request.url.path
        segments = _safe_segments(path)
        if segments is None or segments[:1] == ["_headers"]:
            return self.not_found()
        names = [segment for segment in segments if segment]
        target = self.root.joinpath(*names)
        if path.endswith("/"):
            if path == "/" and _is_file(target / "index.html") is None:
                return self._listing()
            target = target / "index.html"
        elif _is_file(target) is None:
            if _is_file(target / "index.html") is not None:
                query = f"?{request.url.query}" if request.url.query else ""
                return RedirectResponse(quote(path + "/") + query, status_code=301)
            return self.not_found()
        info = _is_file(target)
        if info is None or not self.servable(target):
            return self.not_found()
        for _, suffix in ENCODINGS:  # the compressed twins are served by negotiation only
            if target.name.endswith(suffix) and _is_file(
                    target.with_name(target.name[: -len(suffix)])) is not None:
                return self.not_found()
        return self._file(request, target, info)

    def _file(self, request: Request, target: Path, info: os.stat_result) -> Response:
        accepted = accepted_encodings(request.headers.get("accept-encoding"))
        chosen, chosen_info, encoding, has_variants = target, info, "", False
        for token, suffix in ENCODINGS:
            variant = target.with_name(target.name + suffix)
            variant_info = _is_file(variant)
            if variant_info is None or not self.servable(variant):
                continue
            has_variants = True
            if not encoding and token in accepted:
                chosen, chosen_info, encoding = variant, variant_info, token
        etag = _etag(chosen_info, encoding)
        headers = {"etag": etag}
        rule_headers = dict(self.rules.headers_for(request.url.path))
        if "cache-control" not in rule_headers:
            headers["cache-control"] = REVALIDATE
        if has_variants:
            headers["vary"] = "Accept-Encoding"
        if encoding:
            headers["content-encoding"] = encoding
        if _etag_matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        return FileResponse(chosen, headers=headers, media_type=media_type(target.name),
                            stat_result=chosen_info)

    def _listing(self) -> Response:
        from html import escape

        surveys: Iterable[tuple[str, str]] = self.surveys() if self.surveys else []
        items = "".join(f'<li><a href="{escape(sid)}/">{escape(title)}</a></li>\n'
                        for sid, title in surveys)
        body = ("<!doctype html>\n<html lang=\"en\"><meta charset=\"utf-8\">"
                "<title>Surveys</title>\n<h1>Surveys</h1>\n"
                f"<ul>\n{items}</ul>\n" if items else
                "<!doctype html>\n<html lang=\"en\"><meta charset=\"utf-8\">"
                "<title>Surveys</title>\n<h1>No surveys</h1>\n")
        return HTMLResponse(body, headers={"cache-control": REVALIDATE})
