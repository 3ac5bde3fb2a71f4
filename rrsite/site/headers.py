"""The site's HTTP headers, computed once: the Content-Security-Policy and security headers.

`rrsite build` writes them to ``DIST/_headers`` (Netlify/Cloudflare Pages format); rrsite's
collector reads that file and sends the same headers, and may import these functions directly.

The policy is the smallest one Pyodide starts under (shared PYODIDE-NOTES.md): nothing by
default, scripts and WebAssembly compilation from the page's own origin, fetches to the own origin
and to any configured submission endpoint. No inline script or style is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: ``Cache-Control`` for content-hashed assets under ``/_rr/``.
IMMUTABLE = "public, max-age=31536000, immutable"
#: ``Integrity-Policy`` of the survey pages (W3C Subresource Integrity): a script loaded without
#: integrity metadata is refused (Chromium from 138, Firefox from 145; other engines ignore it,
#: and the page's own ``integrity`` attributes still apply). Sent on the pages only: a module
#: worker has no way to give its imports integrity metadata, so the worker checks them itself.
INTEGRITY_POLICY = "blocked-destinations=(script)"
#: Directives a ``<meta>`` CSP cannot carry (browsers ignore them there and log an error).
HEADER_ONLY_DIRECTIVES = ("frame-ancestors", "report-uri", "report-to", "sandbox")


def csp_directives(connect: Iterable[str] = ()) -> list[tuple[str, list[str]]]:
    """The policy as (directive, sources); ``connect`` adds endpoint origins to connect-src."""
    extra = sorted({origin for origin in connect if origin})
    return [
        ("default-src", ["'none'"]),
        ("script-src", ["'self'", "'wasm-unsafe-eval'"]),
        ("connect-src", ["'self'", *extra]),
        ("worker-src", ["'self'"]),
        ("style-src", ["'self'"]),
        ("img-src", ["'self'", "data:"]),
        ("form-action", ["'self'"]),
        ("base-uri", ["'none'"]),
        ("frame-ancestors", ["'none'"]),
    ]


def content_security_policy(connect: Iterable[str] = (), *, for_meta: bool = False) -> str:
    """The CSP string; ``for_meta`` leaves out what a ``<meta>`` tag cannot carry."""
    return "; ".join(
        f"{name} {' '.join(sources)}"
        for name, sources in csp_directives(connect)
        if not (for_meta and name in HEADER_ONLY_DIRECTIVES)
    )


def security_headers(csp: str) -> dict[str, str]:
    """Headers for every path: the CSP and the usual hardening headers."""
    return {
        "Content-Security-Policy": csp,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Resource-Policy": "same-origin",
        "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    }


def site_rules(connect: Iterable[str] = (),
               pages: Iterable[str] = ()) -> list[tuple[str, dict[str, str]]]:
    """The rules of ``_headers``: security headers, caching, the pages' Integrity-Policy.

    Security headers for ``/*``, immutable caching for ``/_rr/*``, and ``Integrity-Policy`` for
    each survey's folder ``/<id>/*`` (``pages``: the survey ids). The rules share no header
    name, so hosts that merge matching rules (Netlify) never join two values of one header.
    """
    return [
        ("/*", security_headers(content_security_policy(connect))),
        ("/_rr/*", {"Cache-Control": IMMUTABLE}),
        *((f"/{page}/*", {"Integrity-Policy": INTEGRITY_POLICY}) for page in pages),
    ]


def format_headers_file(rules: Iterable[tuple[str, Mapping[str, str]]]) -> str:
    """Rules in the ``_headers`` format: a path pattern, then indented ``Name: value`` lines."""
    lines = ["# Written by rrsite build. Netlify / Cloudflare Pages format; rrsite serve reads it."]
    for pattern, headers in rules:
        lines.append(pattern)
        lines.extend(f"  {name}: {value}" for name, value in headers.items())
    return "\n".join(lines) + "\n"


def parse_headers_file(text: str) -> list[tuple[str, dict[str, str]]]:
    """Read a ``_headers`` file back into rules (comments and blank lines skipped)."""
    rules: list[tuple[str, dict[str, str]]] = []
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if not raw[0].isspace():
            rules.append((raw.strip(), {}))
        elif rules and ":" in raw:
            name, value = raw.split(":", 1)
            rules[-1][1][name.strip()] = value.strip()
    return rules
