"""Serving the built site: MIME types, br/gzip negotiation, _headers, caching, safe paths."""

from __future__ import annotations

import brotli
import httpx
import pytest

from rrsite.collect.static import (
    HeaderRules,
    _safe_segments,
    accepted_encodings,
    media_type,
    parse_headers_file,
)

JS = "/_rr/page.3f9a1c0d.js"
WASM = "/_rr/pyodide-314.0.7-abcd/pyodide.asm.wasm"
IMMUTABLE = "public, max-age=31536000, immutable"


@pytest.mark.parametrize(("path", "expected"), [
    (JS, "text/javascript; charset=utf-8"),
    ("/_rr/worker.1a2b3c4d.mjs", "text/javascript; charset=utf-8"),
    (WASM, "application/wasm"),
    ("/_rr/style.9f8e7d6c.css", "text/css; charset=utf-8"),
    ("/honor/", "text/html; charset=utf-8"),
    ("/honor/survey.json", "application/json"),
])
def test_mime_types(client, path, expected):
    response = client.get(path, headers={"accept-encoding": "identity"})
    assert response.status_code == 200
    assert response.headers["content-type"] == expected


def test_media_type_table():
    assert media_type("x.WASM") == "application/wasm"
    assert media_type("core.6b2e.zip") == "application/zip"
    assert media_type("python_stdlib.zip") == "application/zip"
    assert media_type("pyodide-lock.json") == "application/json"
    assert media_type("noext") == "application/octet-stream"


@pytest.mark.parametrize(("accept", "encoding", "suffix"), [
    ("br", "br", ".br"),
    ("gzip, deflate, br, zstd", "br", ".br"),
    ("gzip", "gzip", ".gz"),
    ("br;q=0, gzip;q=0.5", "gzip", ".gz"),
    ("*", "br", ".br"),
    ("*;q=1, br;q=0", "gzip", ".gz"),
    ("identity", None, ""),
    ("", None, ""),
    ("gzip;q=0, br;q=0", None, ""),
])
def test_precompressed_negotiation(client, dist, accept, encoding, suffix):
    for path in (JS, WASM):
        file = dist / path.lstrip("/")
        response = client.get(path, headers={"accept-encoding": accept})
        assert response.status_code == 200
        assert response.headers.get("content-encoding") == encoding
        assert response.headers["vary"] == "Accept-Encoding"
        expected = file.with_name(file.name + suffix).stat().st_size
        assert int(response.headers["content-length"]) == expected
        assert response.content == file.read_bytes()  # httpx decodes br and gzip


def test_no_vary_without_variants(client):
    response = client.get("/_rr/worker.1a2b3c4d.mjs", headers={"accept-encoding": "br"})
    assert "content-encoding" not in response.headers and "vary" not in response.headers


def test_compressed_twins_are_not_served_directly(client):
    assert client.get(JS + ".br").status_code == 404
    assert client.get(JS + ".gz").status_code == 404


def test_headers_file_on_every_response(client, kit):
    for path in ("/honor/", JS, "/_rr/worker.1a2b3c4d.mjs", WASM, "/honor/survey.json",
                 "/missing", "/_rr/missing.js", "/honor"):
        response = client.get(path, follow_redirects=False)
        assert response.headers["content-security-policy"] == kit.CSP, path
        assert response.headers["x-frame-options"] == "DENY", path
        assert response.headers["referrer-policy"] == "no-referrer", path


def test_caching(client):
    for path in (JS, WASM, "/_rr/worker.1a2b3c4d.mjs"):
        assert client.get(path).headers["cache-control"] == IMMUTABLE
    page = client.get("/honor/")
    assert page.headers["cache-control"] == "no-cache"
    assert client.get("/_rr/nope.js").headers["cache-control"] == "no-store"  # not a 404 forever


def test_etag_and_304(client, kit):
    page = client.get("/honor/")
    etag = page.headers["etag"]
    again = client.get("/honor/", headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag
    assert again.headers["content-security-policy"] == kit.CSP
    assert client.get("/honor/", headers={"if-none-match": '"other"'}).status_code == 200
    assert client.get("/honor/", headers={"if-none-match": f'"x", W/{etag}'}).status_code == 304
    br = client.get(JS, headers={"accept-encoding": "br"}).headers["etag"]
    plain = client.get(JS, headers={"accept-encoding": "identity"}).headers["etag"]
    assert br != plain
    assert client.get(JS, headers={"accept-encoding": "identity",
                                   "if-none-match": br}).status_code == 200


def test_etag_changes_with_the_file(client, dist):
    etag = client.get("/honor/").headers["etag"]
    (dist / "honor" / "index.html").write_text("<!doctype html><title>rebuilt</title>\n")
    response = client.get("/honor/", headers={"if-none-match": etag})
    assert response.status_code == 200 and "rebuilt" in response.text


def test_head(client):
    head = client.head(JS, headers={"accept-encoding": "br"})
    get = client.get(JS, headers={"accept-encoding": "br"})
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == get.headers["content-length"]
    assert head.headers["content-encoding"] == "br"


def test_directories(client):
    redirect = client.get("/honor", follow_redirects=False)
    assert redirect.status_code == 301 and redirect.headers["location"] == "/honor/"
    assert client.get("/honor?x=1", follow_redirects=False).headers["location"] == "/honor/?x=1"
    assert client.get("/honor/index.html").text == client.get("/honor/").text
    assert client.get("/_rr/").status_code == 404  # a folder without index.html
    listing = client.get("/")
    assert listing.status_code == 200 and 'href="honor/"' in listing.text
    assert "Honor Code" in listing.text


def test_refused_paths(client):
    for path in ("/_headers", "/.git/config", "/honor/.secret", "/nope/", "/honor/x/"):
        assert client.get(path).status_code == 404, path
    assert client.post("/honor/", content=b"x").status_code == 405


def test_fallback_headers_without_headers_file(tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist", headers=False)
    with kit.make_client(dist, tmp_path / "c.db") as client:
        response = client.get(JS)
        assert response.headers["cache-control"] == IMMUTABLE
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "content-security-policy" not in response.headers
        # the builder writes _headers later: picked up without a restart
        (dist / "_headers").write_text("/*\n  Content-Security-Policy: default-src 'self'\n")
        import time  # the app re-reads the file at most once a second

        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if client.get("/honor/").headers.get("content-security-policy") == \
                    "default-src 'self'":
                break
            time.sleep(0.2)
        else:
            pytest.fail("the new _headers was not picked up")


def test_parse_headers_file():
    rules = parse_headers_file(
        "# comment\n/*\n  X-A: 1\n  Cache-Control: no-cache\n/_rr/*\n  Cache-Control: immutable\n"
        "  ! X-A\n/:survey/survey.json\n  X-Manifest: yes\n")
    assert [rule.pattern for rule in rules] == ["/*", "/_rr/*", "/:survey/survey.json"]
    table = HeaderRules(None)
    table.rules = rules
    assert dict(table.headers_for("/honor/")) == {"x-a": "1", "cache-control": "no-cache"}
    assert dict(table.headers_for("/_rr/x.js")) == {"cache-control": "immutable"}
    assert dict(table.headers_for("/honor/survey.json"))["x-manifest"] == "yes"
    assert "x-manifest" not in dict(table.headers_for("/a/b/survey.json"))
    with pytest.raises(ValueError, match=r"_headers:2: expected 'Name: value'"):
        parse_headers_file("/*\n  no colon here\n")
    with pytest.raises(ValueError, match=r"_headers:1: a header line before"):
        parse_headers_file("  X-A: 1\n")
    with pytest.raises(ValueError, match=r"_headers:1: a path pattern must start with '/'"):
        parse_headers_file("*.js\n  X-A: 1\n")


def test_accepted_encodings():
    assert accepted_encodings("gzip, deflate, br") == {"gzip", "deflate", "br"}
    assert accepted_encodings("br;q=0.0, gzip;q=0.8") == {"gzip"}
    assert accepted_encodings("*") == {"br", "gzip"}
    assert accepted_encodings("*, gzip;q=0") == {"br"}
    assert accepted_encodings("x-gzip") == {"x-gzip", "gzip"}
    assert accepted_encodings("br;q=bogus") == set()
    assert accepted_encodings(None) == set()


def test_safe_segments():
    assert _safe_segments("/honor/") == ["honor", ""]
    assert _safe_segments("/_rr/a/b.js") == ["_rr", "a", "b.js"]
    for bad in ("/../x", "/a/../b", "/a/./b", "/a//b", "/.env", "/a\\..\\b", "/a\x00b",
                "/c:/windows"):
        assert _safe_segments(bad) is None, bad


def raw_request(url: str, target: str) -> tuple[int, bytes]:
    """Send a request line exactly as given (no client-side normalization)."""
    import socket

    host, port = httpx.URL(url).host, httpx.URL(url).port
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data


def test_path_traversal_on_a_real_server(tmp_path, kit):
    secret = b"TOP-SECRET-MARKER"
    (tmp_path / "secret.txt").write_bytes(secret)
    dist = kit.write_dist(tmp_path / "site" / "dist")
    (tmp_path / "site" / "secret.txt").write_bytes(secret)
    with kit.Server(dist, tmp_path / "c.db") as server:
        for target in ("/../secret.txt", "/../../secret.txt", "/%2e%2e/secret.txt",
                       "/honor/..%2f..%2fsecret.txt", "/_rr/%2e%2e/%2e%2e/secret.txt",
                       "/..%5csecret.txt", "/honor/%2e%2e%2f%2e%2e%2fsecret.txt",
                       "//etc/passwd", "/%00", "/_headers", "/honor/%2e/survey.json"):
            status, data = raw_request(server.url, target)
            assert status in (400, 404), (target, status)
            assert secret not in data and b"root:" not in data
        status, data = raw_request(server.url, "/honor/survey.json")
        assert status == 200 and b'"honor"' in data
        # raw bytes on the wire: the brotli file itself, its length in Content-Length
        with httpx.Client() as http, http.stream(
                "GET", server.url + JS, headers={"accept-encoding": "br"}) as response:
            raw = b"".join(response.iter_raw())
        assert response.headers["content-encoding"] == "br"
        assert int(response.headers["content-length"]) == len(raw)
        assert brotli.decompress(raw) == kit.PAGE_JS.encode()


def test_no_link_out_of_the_site_is_followed(tmp_path, kit):
    """A symbolic link inside DIST to a file or folder outside it (the system's passwords, the
    database, a private key) is a 404, as is its pre-compressed twin; a link that stays inside
    DIST is served; private keys (*.pem, *.key) are never served, wherever they lie."""
    secret = b"TOP-SECRET-MARKER"
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_bytes(secret)
    dist = kit.write_dist(tmp_path / "dist")
    (dist / "passwd").symlink_to("/etc/passwd")
    (dist / "secret.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (dist / "folder").symlink_to(tmp_path / "outside", target_is_directory=True)
    (dist / "honor" / "copy.json").symlink_to(dist / "honor" / "survey.json")
    (dist / "honor" / "note.txt").write_text("a plain note\n")
    (dist / "honor" / "note.txt.gz").symlink_to(tmp_path / "outside" / "secret.txt")
    (dist / "honor" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (dist / "honor" / "server.key").write_text("-----BEGIN PRIVATE KEY-----\n")
    with kit.make_client(dist, tmp_path / "c.db") as client:
        for path in ("/passwd", "/secret.txt", "/folder/secret.txt", "/folder/",
                     "/honor/server.pem", "/honor/server.key"):
            answer = client.get(path)
            assert answer.status_code == 404, (path, answer.status_code)
            assert secret not in answer.content and b"root:" not in answer.content
        assert client.get("/honor/copy.json").json()["id"] == "honor"
        note = client.get("/honor/note.txt", headers={"accept-encoding": "gzip"})
        assert note.status_code == 200 and note.text == "a plain note\n"
        assert "content-encoding" not in note.headers  # the linked twin is not used
