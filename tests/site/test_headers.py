"""The CSP and the `_headers` file, as the collector may import them."""

from __future__ import annotations

from rrsite.site.headers import (
    HEADER_ONLY_DIRECTIVES,
    IMMUTABLE,
    content_security_policy,
    format_headers_file,
    parse_headers_file,
    security_headers,
    site_rules,
)


def directives(policy: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in policy.split("; ")}


def test_minimal_policy_pyodide_starts_under():
    policy = directives(content_security_policy())
    assert policy["default-src"] == ["'none'"]
    assert policy["script-src"] == ["'self'", "'wasm-unsafe-eval'"]
    assert policy["connect-src"] == ["'self'"]
    assert policy["worker-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["img-src"] == ["'self'", "data:"]
    assert policy["form-action"] == ["'self'"]
    assert policy["base-uri"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    sources = [source for values in policy.values() for source in values]
    assert "'unsafe-inline'" not in sources and "'unsafe-eval'" not in sources


def test_endpoints_join_connect_src_sorted_and_once():
    policy = directives(content_security_policy(
        ["https://b.example", "https://a.example:8443", "https://b.example", ""]))
    assert policy["connect-src"] == ["'self'", "https://a.example:8443", "https://b.example"]


def test_meta_policy_leaves_out_header_only_directives():
    meta = directives(content_security_policy(["https://x.example"], for_meta=True))
    assert not set(HEADER_ONLY_DIRECTIVES) & set(meta)
    assert meta["connect-src"] == ["'self'", "https://x.example"]
    full = directives(content_security_policy(["https://x.example"]))
    assert {k: v for k, v in full.items() if k not in HEADER_ONLY_DIRECTIVES} == meta


def test_headers_file_round_trip():
    rules = site_rules(["https://x.example"])
    text = format_headers_file(rules)
    assert text.splitlines()[0].startswith("#")
    assert text.splitlines()[1] == "/*"
    assert "\n/_rr/*\n  Cache-Control: public, max-age=31536000, immutable\n" in text
    assert parse_headers_file(text) == rules
    names = [set(headers) for _, headers in rules]
    assert not names[0] & names[1]  # hosts that merge matching rules never join two values
    with_pages = site_rules([], pages=["a", "b"])
    assert [pattern for pattern, _ in with_pages] == ["/*", "/_rr/*", "/a/*", "/b/*"]
    assert with_pages[2][1] == {"Integrity-Policy": "blocked-destinations=(script)"}
    assert not set(with_pages[2][1]) & (names[0] | names[1])
    assert parse_headers_file(format_headers_file(with_pages)) == with_pages


def test_security_headers():
    headers = security_headers("default-src 'none'")
    assert headers["Content-Security-Policy"] == "default-src 'none'"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["X-Frame-Options"] == "DENY"
    assert IMMUTABLE.endswith("immutable")
