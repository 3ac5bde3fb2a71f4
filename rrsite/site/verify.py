"""`rrsite verify`: a deployed site compared, file by file, with a local build of its sources.

``rrsite build`` is reproducible (the same survey files, rrsite release, templates and Pyodide
give the same bytes), so anyone holding a survey's source can check a deployment: build it
locally, fetch every file of that build from the site, and compare byte for byte. Each file is
fetched three times, as a browser may receive it (uncompressed, brotli, gzip: a host could serve
one honest copy and another compressed one), and compared after decoding. The site's file list
(``rrsite-files.json``) and security headers are read too: a file list that disagrees is
reported, headers that differ from the build's ``_headers`` are warnings (many static hosts
cannot send headers). The deployment matches only when every file of the local build does.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import urljoin, urlsplit

import brotli

import rrsite

from ..errors import RRSiteError
from .builder import build
from .filelist import FILE_LIST, is_compressed_copy, read_file_list
from .headers import parse_headers_file

#: How each file is asked for: the encodings a browser accepts, one at a time.
ENCODINGS = ("identity", "br", "gzip")
#: Files of a build that are not fetched: the host's header rules are not served as a file.
NOT_SERVED = ("_headers",)
#: Parallel requests.
WORKERS = 6


class VerifyError(RRSiteError):
    """The check cannot be made: the site cannot be reached, or the sources do not build."""


@dataclass(frozen=True)
class Fetched:
    """One response: its status (None when no answer), headers and decoded body."""

    status: int | None
    headers: dict[str, str]
    body: bytes
    problem: str = ""


@dataclass
class Finding:
    """The outcome for one file of the local build."""

    path: str
    ok: bool
    detail: str = ""


@dataclass
class Verification:
    """What was compared, file by file, and the warnings about headers and the file list."""

    url: str
    fingerprint: str
    deployed_fingerprint: str | None
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        """Whether every file of the local build was served exactly, in every encoding."""
        return all(finding.ok for finding in self.findings) and bool(self.findings)


def fetch(url: str, encoding: str, timeout: float) -> Fetched:
    """GET ``url`` accepting only ``encoding``; the body decoded from its Content-Encoding."""
    request = urllib.request.Request(url, headers={
        "Accept-Encoding": encoding,
        "User-Agent": f"rrsite-verify/{rrsite.__version__}",
        "Cache-Control": "no-cache",
    })
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            status, headers, raw = response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as error:
        return Fetched(error.code, dict(error.headers.items()), b"", f"HTTP {error.code}")
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return Fetched(None, {}, b"", f"no answer ({reason})")
    lower = {name.lower(): value for name, value in headers.items()}
    coding = lower.get("content-encoding", "identity").strip().lower()
    try:
        if coding == "br":
            body = bytes(brotli.decompress(raw))
        elif coding in ("gzip", "x-gzip"):
            body = gzip.decompress(raw)
        elif coding in ("", "identity"):
            body = raw
        else:
            return Fetched(status, lower, b"", f"an unknown Content-Encoding {coding!r}")
    except (brotli.error, OSError, EOFError, zlib.error) as error:
        return Fetched(status, lower, b"", f"a {coding} body that does not decode ({error})")
    return Fetched(status, lower, body)


def site_base(url: str, survey_ids: Sequence[str]) -> str:
    """The site's root URL: ``url`` itself, or its parent when it is a survey's page."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise VerifyError(f"{url}: give the deployed site's address, http:// or https://")
    path = parts.path or "/"
    if not path.endswith("/"):
        path = path.rsplit("/", 1)[0] + "/" if path.endswith("index.html") else path + "/"
    segments = [segment for segment in path.split("/") if segment]
    if segments and segments[-1] in survey_ids:
        path = "/" + "/".join(segments[:-1]) + ("/" if len(segments) > 1 else "")
    return f"{parts.scheme}://{parts.netloc}{path}"


def first_difference(expected: bytes, got: bytes) -> str:
    """Where two versions of a file part: a line for text, an offset for bytes."""
    if len(expected) == len(got):
        offset = next(i for i, (a, b) in enumerate(zip(expected, got, strict=True)) if a != b)
        where = f"{sum(a != b for a, b in zip(expected, got, strict=True))} byte(s) differ, " \
                f"the first at offset {offset}"
    else:
        where = f"{len(got):,} bytes instead of {len(expected):,}"
    try:
        old, new = expected.decode("utf-8").splitlines(), got.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return where
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"{where}; line {number} is {_short(b)!r}, built {_short(a)!r}"
    return where


def _short(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def compare_file(base: str, path: str, expected: bytes, timeout: float,
                 url_path: str | None = None) -> Finding:
    """Fetch one file in every encoding and compare each, decoded, with the local build's."""
    url = urljoin(base, url_path if url_path is not None else path)
    problems: list[str] = []
    for encoding in ENCODINGS:
        got = fetch(url, encoding, timeout)
        label = "uncompressed" if encoding == "identity" else encoding
        if got.problem:
            problems.append(f"{label}: {got.problem}")
        elif got.status != 200:
            problems.append(f"{label}: HTTP {got.status}")
        elif got.body != expected:
            problems.append(f"{label}: sha256 {_sha(got.body)}…, built {_sha(expected)}…; "
                            f"{first_difference(expected, got.body)}")
    return Finding(path, not problems, "; ".join(problems))


def _rules_for(rules: list[tuple[str, dict[str, str]]], path: str) -> dict[str, str]:
    """The headers ``_headers`` gives a URL path (patterns ending in ``*`` match a prefix)."""
    found: dict[str, str] = {}
    for pattern, values in rules:
        if pattern == path or (pattern.endswith("*") and path.startswith(pattern[:-1])):
            found.update({name.lower(): value for name, value in values.items()})
    return found


def check_headers(base: str, dist: Path, paths: Sequence[str], timeout: float) -> list[str]:
    """Warnings for the security headers that the site sends otherwise than ``_headers`` says."""
    headers_file = dist / "_headers"
    if not headers_file.is_file():
        return []
    rules = parse_headers_file(headers_file.read_text("utf-8"))
    base_path = urlsplit(base).path.rstrip("/")
    warnings = []
    for path in paths:
        expected = _rules_for(rules, "/" + path)
        wanted = {name: value for name, value in expected.items()
                  if name in ("content-security-policy", "integrity-policy")}
        if not wanted:
            continue
        got = fetch(urljoin(base, path), "identity", timeout).headers
        for name, value in wanted.items():
            sent = got.get(name)
            shown = f"{base_path}/{path}"
            if sent is None:
                warnings.append(f"{shown} is sent without {name.title()} (the build's _headers "
                                f"says {value!r}): does the host read _headers?")
            elif sent != value:
                warnings.append(_header_difference(shown, name, sent, value))
    return warnings


def _policy(text: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in text.split(";") if part.split()}


def _header_difference(where: str, name: str, sent: str, built: str) -> str:
    """A header that differs, in words: a CSP by its directives."""
    if name == "content-security-policy":
        got, want = _policy(sent), _policy(built)
        wanted = want.get("connect-src", [])
        extra = [src for src in got.get("connect-src", []) if src not in wanted]
        rest_same = ({k: v for k, v in got.items() if k != "connect-src"}
                     == {k: v for k, v in want.items() if k != "connect-src"})
        if rest_same and extra and set(want.get("connect-src", [])) <= set(got["connect-src"]):
            return (f"{where}: the Content-Security-Policy also lets the page send to "
                    f"{' '.join(extra)} (the endpoint of a survey not given with --survey?)")
        changed = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        return (f"{where}: the Content-Security-Policy differs from the build's in "
                f"{', '.join(changed)}: {sent!r}")
    return f"{where} is sent with {name.title()} {sent!r}, not the build's {built!r}"


def verify(url: str, surveys: Sequence[Path], *, templates: Path | None = None,
           pyodide: Path | None = None, full_stdlib: bool = False, timeout: float = 30.0,
           progress: Callable[[str], None] | None = None) -> Verification:
    """Build ``surveys`` locally and compare every file of that build with the site at ``url``."""
    with tempfile.TemporaryDirectory(prefix="rrsite-verify-") as folder:
        dist = Path(folder) / "dist"
        result = build(list(surveys), dist, templates, pyodide, compress=False,
                       full_stdlib=full_stdlib)
        ids = [survey.id for survey in result.surveys]
        base = site_base(url, ids)
        first = fetch(urljoin(base, f"{ids[0]}/"), "identity", timeout)
        if first.status is None:
            raise VerifyError(f"{urljoin(base, ids[0] + '/')}: {first.problem}")
        files = sorted(
            path.relative_to(dist).as_posix() for path in dist.rglob("*")
            if path.is_file() and not is_compressed_copy(path.name)
            and path.relative_to(dist).as_posix() not in (*NOT_SERVED, FILE_LIST)
        )
        verification = Verification(url, result.fingerprint, None)

        def one(path: str) -> Finding:
            served = path[: -len("index.html")] if PurePosixPath(path).name == "index.html" \
                else path
            finding = compare_file(base, path, (dist / path).read_bytes(), timeout, served)
            if progress:
                progress(path)
            return finding

        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            verification.findings = list(pool.map(one, files))
        listed = fetch(urljoin(base, FILE_LIST), "identity", timeout)
        deployed = read_file_list(listed.body) if listed.status == 200 else None
        if deployed is None:
            why = listed.problem or "not a file list"
            verification.warnings.append(f"{FILE_LIST} is not on the site ({why}): built with "
                                         "an older rrsite, or not deployed")
        else:
            verification.deployed_fingerprint = str(deployed.get("code_fingerprint") or "")
            listed_files = deployed["files"]
            for path in files:
                local = hashlib.sha256((dist / path).read_bytes()).hexdigest()
                if path in listed_files and listed_files[path] != local:
                    verification.warnings.append(f"{FILE_LIST} lists {path} with another SHA-256 "
                                                 "than the local build's")
        worker = next((path for path in files if PurePosixPath(path).name.startswith("worker.")),
                      None)
        verification.warnings.extend(check_headers(
            base, dist, [f"{survey_id}/" for survey_id in ids] + ([worker] if worker else []),
            timeout))
    return verification


def describe(verification: Verification, log: Callable[[str], None], *, every: bool = False,
             surveys: Sequence[Path] = ()) -> None:
    """Print what was compared: each file that differs (every file with ``every``), a summary."""
    names = ", ".join(path.name for path in surveys)
    log(f"rrsite verify {verification.url} against a local build of {names} "
        f"(rrsite {rrsite.__version__})")
    deployed = verification.deployed_fingerprint
    log(f"code fingerprint: {verification.fingerprint}"
        + (f" (the site's file list says {deployed})" if deployed is not None else ""))
    for finding in verification.findings:
        if not finding.ok:
            log(f"DIFFERS  {finding.path}: {finding.detail}")
        elif every:
            log(f"same     {finding.path}")
    for warning in verification.warnings:
        log(f"warning: {warning}")
    differing = sum(not finding.ok for finding in verification.findings)
    total = len(verification.findings)
    if differing:
        log(f"{differing} of {total} files differ from the build of these sources: this site is "
            "not the code and designs they make.")
    else:
        log(f"all {total} files are the same as the build of these sources, uncompressed, brotli "
            "and gzip.")


def as_json(verification: Verification) -> str:
    """The verification as JSON (``--json``)."""
    return json.dumps({
        "url": verification.url,
        "matches": verification.matches,
        "code_fingerprint": verification.fingerprint,
        "deployed_fingerprint": verification.deployed_fingerprint,
        "files": [{"path": f.path, "same": f.ok, "detail": f.detail}
                  for f in verification.findings],
        "warnings": verification.warnings,
    }, indent=2, ensure_ascii=False)
