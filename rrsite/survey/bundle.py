"""The core bundle: rrsite/core as a deterministic zip for the browser, and its hash.

The zip holds ``rrsite/__init__.py`` (empty, so that the browser gets nothing but core) and every
``rrsite/core/**/*.py`` (its subpackages too), in path order, with fixed timestamps and
permissions and no compression (the site's ``.br``/``.gz`` files compress it on the wire, and
stored entries do not depend on the zlib version): the same sources always give the same
bytes, so ``core_hash`` names the code exactly.
"""

from __future__ import annotations

import functools
import hashlib
import io
import zipfile
from pathlib import Path

from .. import core

_EPOCH = (1980, 1, 1, 0, 0, 0)


def core_files() -> list[tuple[str, bytes]]:
    """(archive name, content) of every file in the bundle, in archive order."""
    folder = Path(core.__file__).resolve().parent
    files = [("rrsite/__init__.py", b"")]
    for path in sorted(folder.rglob("*.py"), key=lambda p: p.relative_to(folder).parts):
        files.append((f"rrsite/core/{path.relative_to(folder).as_posix()}", path.read_bytes()))
    return files


def build_core_zip(files: list[tuple[str, bytes]]) -> bytes:
    """A zip of ``files`` that depends on nothing but their names and contents."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, content in files:
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            info.create_system = 3
            archive.writestr(info, content)
    return buffer.getvalue()


@functools.cache
def core_zip() -> bytes:
    """The bundle of the installed rrsite/core (computed once per process)."""
    return build_core_zip(core_files())


def core_hash() -> str:
    """``sha256:<hex>`` of :func:`core_zip`: the manifest's ``core_hash``."""
    return "sha256:" + hashlib.sha256(core_zip()).hexdigest()
