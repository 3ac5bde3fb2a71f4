"""Replace a folder by a freshly built one in a single step.

On Linux, ``renameat2(RENAME_EXCHANGE)`` swaps the two directory entries atomically: a reader
(or a server) sees the old site or the new one, never a mix or nothing. Elsewhere two renames do
it, with a moment between them in which the folder is absent.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import secrets
import shutil
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _renameat2() -> object | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                         ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def exchange(first: Path, second: Path) -> bool:
    """Atomically swap two existing paths; False if the system cannot (then nothing changed)."""
    function = _renameat2()
    if function is None:
        return False
    result = function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second),  # type: ignore[operator]
                      _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(code, os.strerror(code), str(first))


def swap_in(built: Path, target: Path) -> None:
    """Put the folder ``built`` at ``target``, replacing what was there; ``built`` is consumed."""
    if not target.exists():
        os.rename(built, target)
        return
    if exchange(built, target):
        shutil.rmtree(built, ignore_errors=True)
        return
    old = target.with_name(f".{target.name}.rrsite-old-{secrets.token_hex(4)}")
    os.rename(target, old)
    try:
        os.rename(built, target)
    except OSError:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
