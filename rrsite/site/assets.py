"""Content-hashed asset names, references between assets, and pre-compressed copies.

Every file under ``DIST/_rr/`` carries a hash of its content in its name, so hosts may cache it
forever. A stylesheet or module that refers to another asset by a relative name (``url(coin.svg)``,
``import "./strings.js"``) gets the hashed name written in, and is hashed after that rewrite.

Compressible files larger than 1 KiB get ``.br`` (brotli, quality 11) and ``.gz`` (gzip -9, no
timestamp) copies beside them, kept only where they save at least 5 %. Brotli at quality 11 takes
about 20 s for Pyodide's 9.6 MB wasm, so compressed copies are cached by content hash in
``$RRSITE_CACHE_DIR`` (default ``~/.cache/rrsite``); every cached copy is checked by decompressing
it before use.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import os
import re
import secrets
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TypeVar

import brotli

try:
    import fcntl
except ImportError:  # Windows: the cache works unlocked
    fcntl = None  # type: ignore[assignment]

T = TypeVar("T")

#: Hex digits of SHA-256 in asset names.
HASH_LENGTH = 12
#: Files at most this large are not compressed (headers and round trips outweigh the gain).
COMPRESS_MIN_BYTES = 1024
#: A compressed copy is kept only if it is at most this fraction of the original.
COMPRESS_MAX_RATIO = 0.95
BROTLI_QUALITY = 11
GZIP_LEVEL = 9
#: Suffixes never compressed: formats that are compressed already.
INCOMPRESSIBLE = {".br", ".gz", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".woff",
                  ".woff2", ".mp4", ".webm"}
#: Text assets in which references to other assets are rewritten.
REWRITTEN = {".css", ".js", ".mjs"}

_CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")\s]+)\1\s*\)""")
_CSS_IMPORT = re.compile(r"""@import\s+(['"])([^'"]+)\1""")
_JS_RELATIVE = re.compile(r"""(['"`])(\./[^'"`\s]+)\1""")


class AssetError(Exception):
    """An asset problem: a reference cycle, an unreadable file."""


def content_hash(data: bytes, length: int = HASH_LENGTH) -> str:
    """The first ``length`` hex digits of SHA-256."""
    return hashlib.sha256(data).hexdigest()[:length]


def sri(data: bytes) -> str:
    """The Subresource Integrity value of ``data``: ``sha384-<base64 digest>`` (W3C SRI)."""
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode("ascii")


def hashed_name(name: str, data: bytes) -> str:
    """``page.js`` -> ``page.<hash>.js`` (the hash goes before the last suffix)."""
    path = PurePosixPath(name)
    stem, suffix = (path.stem, path.suffix) if path.suffix else (path.name, "")
    hashed = f"{stem}.{content_hash(data)}{suffix}"
    return str(path.with_name(hashed))


def _relative(from_name: str, to_name: str) -> str:
    """The URL of asset ``to_name`` as written in asset ``from_name`` (both relative to _rr/)."""
    start = PurePosixPath(from_name).parent
    target = PurePosixPath(to_name)
    relative = os.path.relpath(str(target), str(start))
    return relative.replace(os.sep, "/")


def _resolve(from_name: str, reference: str) -> str | None:
    """The asset name a relative reference points to (None for absolute or outside references)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:|^/|^#", reference, re.IGNORECASE):
        return None
    clean = reference.split("?", 1)[0].split("#", 1)[0]
    joined = os.path.normpath(str(PurePosixPath(from_name).parent / clean)).replace(os.sep, "/")
    return None if joined.startswith("..") else joined


def hash_assets(sources: dict[str, bytes]) -> dict[str, tuple[str, bytes]]:
    """``{name: (hashed name, final bytes)}`` for a folder of assets, references rewritten."""
    done: dict[str, tuple[str, bytes]] = {}
    visiting: set[str] = set()

    def finish(name: str) -> tuple[str, bytes]:
        if name in done:
            return done[name]
        if name in visiting:
            raise AssetError(f"assets refer to each other in a cycle through {name}")
        visiting.add(name)
        data = sources[name]
        if PurePosixPath(name).suffix in REWRITTEN:
            data = _rewrite(name, data, sources, finish)
        visiting.discard(name)
        done[name] = (hashed_name(name, data), data)
        return done[name]

    for name in sorted(sources):
        finish(name)
    return done


def _rewrite(
    name: str,
    data: bytes,
    sources: dict[str, bytes],
    finish: Callable[[str], tuple[str, bytes]],
) -> bytes:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data

    def replace(match: re.Match[str], group: int) -> str:
        reference = match.group(group)
        target = _resolve(name, reference)
        if target is None or target not in sources or target == name:
            return match.group(0)
        hashed = finish(target)[0]
        new = _relative(name, hashed)
        if reference.startswith("./") and not new.startswith("."):
            new = "./" + new
        start, end = match.span(group)
        whole_start = match.start(0)
        whole = match.group(0)
        return whole[: start - whole_start] + new + whole[end - whole_start :]

    if name.endswith(".css"):
        text = _CSS_URL.sub(lambda m: replace(m, 2), text)
        text = _CSS_IMPORT.sub(lambda m: replace(m, 2), text)
    else:
        text = _JS_RELATIVE.sub(lambda m: replace(m, 2), text)
    return text.encode("utf-8")


# --------------------------------------------------------------------------------------------
# Pre-compression


def default_cache_dir() -> Path | None:
    """``$RRSITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/rrsite``, else ``~/.cache/rrsite``."""
    if os.environ.get("RRSITE_CACHE_DIR"):
        return Path(os.environ["RRSITE_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or (Path.home() / ".cache")
    return Path(base) / "rrsite"


@dataclass(frozen=True)
class Compressed:
    """The outcome for one file: its compressed copies (empty when not worth it)."""

    path: Path
    size: int
    brotli_size: int | None
    gzip_size: int | None


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)


def _brotli(data: bytes) -> bytes:
    return bytes(brotli.compress(data, quality=BROTLI_QUALITY))


_CODECS: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    "br": (_brotli, lambda data: bytes(brotli.decompress(data))),
    "gz": (_gzip, gzip.decompress),
}


def _cached(cache: Path | None, digest: str, codec: str, data: bytes) -> bytes | None:
    """A compressed copy of ``data``: from the cache if present and correct, else made (and cached).

    Returns None when compressing is not worth it (the cache remembers that too). Two builds
    that miss the same entry at once (two test workers on a fresh machine) compress it once: the
    second waits for the first's entry (:func:`cache_lock`).
    """
    compress, decompress = _CODECS[codec]
    tag = f"q{BROTLI_QUALITY}" if codec == "br" else f"l{GZIP_LEVEL}"
    entry = cache / digest[:2] / f"{digest}.{tag}.{codec}" if cache else None
    skip = entry.with_suffix(entry.suffix + ".skip") if entry else None

    def look() -> tuple[bytes | None] | None:
        """``(copy,)`` from the cache, ``(None,)`` if not worth it, None if not there (or bad)."""
        if entry is None or skip is None:
            return None
        if skip.exists():
            return (None,)
        if entry.exists():
            try:
                blob = entry.read_bytes()
                if hashlib.sha256(decompress(blob)).hexdigest() == digest:
                    return (blob,)
            except (OSError, brotli.error, zlib.error, EOFError, gzip.BadGzipFile):
                pass
        return None

    def make() -> tuple[bytes | None]:
        made = compress(data)
        worth = len(made) <= COMPRESS_MAX_RATIO * len(data)
        if entry is not None and skip is not None:
            store_cache_entry(skip if not worth else entry, b"" if not worth else made)
        return (made if worth else None,)

    return made_once(entry, look, make)[0]


def made_once(entry: Path | None, look: Callable[[], T | None], make: Callable[[], T]) -> T:
    """What ``look`` finds of the cache entry ``entry``, else what ``make`` makes (and stores).

    ``make`` runs under :func:`cache_lock`, after looking once more: a build that waited for
    another making the same entry reads the other's result instead of making it again.
    """
    found = look()
    if found is not None:
        return found
    with cache_lock(entry):
        found = look()  # made meanwhile by the build that held the lock
        return found if found is not None else make()


@contextmanager
def cache_lock(entry: Path | None) -> Iterator[None]:
    """Hold an exclusive lock for making the cache entry ``entry``.

    The lock is a hidden ``.lock`` file beside the entry (removed once the entry is made), so
    that builds running at once make an expensive entry once. Where no lock can be taken (no
    ``fcntl``, a cache that cannot be written) nothing is locked: each build then makes the entry
    itself, as without a cache.
    """
    if entry is None or fcntl is None:
        yield
        return
    lock = entry.with_name(f".{entry.name}.lock")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock, "a+b")  # noqa: SIM115
    except OSError:
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:
            pass
        try:
            yield
        finally:
            # Removed while held: a build waiting on it looks for the entry again once it has
            # the lock (and finds it); a later one finds the entry before it locks anything.
            with suppress(OSError):
                lock.unlink()


def store_cache_entry(path: Path, data: bytes) -> None:
    """Write a cache entry atomically; a cache that cannot be written is simply not used."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        pass


def compressible(path: Path) -> bool:
    """Worth trying: larger than 1 KiB and not a compressed format."""
    return path.suffix.lower() not in INCOMPRESSIBLE and path.stat().st_size > COMPRESS_MIN_BYTES


def _compress_one(path: Path, cache: Path | None) -> Compressed:
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    # A fast probe first: data that gzip -1 cannot shrink (zips, packed binaries) is left alone.
    if len(zlib.compress(data, 1)) > COMPRESS_MAX_RATIO * len(data):
        return Compressed(path, len(data), None, None)
    sizes: dict[str, int | None] = {}
    for codec in ("br", "gz"):
        blob = _cached(cache, digest, codec, data)
        sizes[codec] = None if blob is None else len(blob)
        if blob is not None:
            path.with_name(f"{path.name}.{codec}").write_bytes(blob)
    return Compressed(path, len(data), sizes["br"], sizes["gz"])


def precompress(paths: Iterable[Path], cache: Path | None, workers: int = 0) -> list[Compressed]:
    """Write ``.br`` and ``.gz`` beside each compressible file, largest first, in parallel."""
    chosen = sorted((p for p in paths if compressible(p)), key=lambda p: -p.stat().st_size)
    workers = workers or max(1, min(4, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda path: _compress_one(path, cache), chosen))
