"""The build's list of every file it wrote, with its SHA-256, and the code fingerprint.

``rrsite build`` is reproducible: the same survey files, rrsite version, page templates and
Pyodide runtime give the same bytes in every file. ``DIST/rrsite-files.json`` records them all
(the compressed copies and ``_headers`` included, itself excepted), so that anyone holding the
sources can rebuild and compare (``rrsite verify``), and a host's copy can be checked with
``sha256sum``. The *code fingerprint* is a short hash of everything under ``DIST/_rr/`` (the
page's scripts, styles, the randomizer's worker, the core bundle and the runtime): it depends on
the rrsite release, the templates and the runtime only, never on a survey, and the page shows it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import rrsite

#: The file list's name at the top of DIST.
FILE_LIST = "rrsite-files.json"
#: The format of the file list (its ``format`` key).
FILE_LIST_FORMAT = 1
#: Hex digits of the code fingerprint (64 bits), shown in groups of four.
FINGERPRINT_DIGITS = 16
#: Suffixes of the pre-compressed copies, which the fingerprint leaves out (they follow from
#: the files they compress).
COMPRESSED_SUFFIXES = (".br", ".gz")


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex."""
    return hashlib.sha256(data).hexdigest()


def code_fingerprint(files: Iterable[tuple[str, bytes]]) -> str:
    r"""``xxxx-xxxx-xxxx-xxxx``: SHA-256 over ``"<path>\\t<sha256 hex>\\n"`` of every file.

    ``files`` are (path under ``_rr/``, content) pairs, compressed copies excluded; the lines
    are sorted by path, so the order they come in does not matter.
    """
    lines = sorted(f"{name}\t{sha256_hex(data)}\n" for name, data in files)
    digest = sha256_hex("".join(lines).encode("utf-8"))[:FINGERPRINT_DIGITS]
    return "-".join(digest[i:i + 4] for i in range(0, FINGERPRINT_DIGITS, 4))


def is_compressed_copy(path: str) -> bool:
    """Whether ``path`` is a ``.br`` or ``.gz`` copy written by the build."""
    return PurePosixPath(path).suffix in COMPRESSED_SUFFIXES


def file_list(root: Path, fingerprint: str) -> dict[str, Any]:
    """The file list of the site under ``root``: every file but the list itself, sorted."""
    files = {
        path.relative_to(root).as_posix(): sha256_hex(path.read_bytes())
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.relative_to(root).as_posix() != FILE_LIST
    }
    return {
        "format": FILE_LIST_FORMAT,
        "generator": f"rrsite {rrsite.__version__}",
        "code_fingerprint": fingerprint,
        "files": dict(sorted(files.items())),
    }


def write_file_list(root: Path, fingerprint: str) -> None:
    """Write ``root/rrsite-files.json`` (sorted keys, two-space indent, a final newline)."""
    text = json.dumps(file_list(root, fingerprint), indent=2, ensure_ascii=False) + "\n"
    (root / FILE_LIST).write_text(text, encoding="utf-8")


def read_file_list(data: bytes) -> Mapping[str, Any] | None:
    """A file list's JSON, or None when ``data`` is not one (missing keys, not JSON)."""
    try:
        parsed = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("files"), dict):
        return None
    return parsed
