"""What the respondent's page ships as Pyodide's ``pyodide/_package_loader.py``.

Pyodide's start imports its package loader (which unpacks wheels and archives into the file
system) and reads four names of it: ``SITE_PACKAGES`` and ``DSO_DIR`` (through ``__str__``),
``init_loaded_packages()`` and, for ``loadPackage``, ``get_install_dir``/``unpack_buffer``. The real
module imports zipfile, shutil, tempfile and pathlib for that, about 70 kB of the trimmed standard
library with brotli and a part of every start. The page installs no package, so the trimmed
library (rrsite/site/stdlib.py) ships this module in its place: the same names, nothing to unpack.
Written for Pyodide's Python; it imports only ``site``, which Python's start has imported.
"""

from site import getsitepackages


class _Folder:
    """A folder's path, read as Pyodide's start reads a ``pathlib.Path`` (``__str__``)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __str__(self) -> str:
        return self.path


SITE_PACKAGES = _Folder(getsitepackages()[0])
DSO_DIR = _Folder("/usr/lib")


def get_install_dir(target: str | None = None) -> str:
    """Where a package of the target ("site" or "dynlib") would go."""
    return str(DSO_DIR if target == "dynlib" else SITE_PACKAGES)


def init_loaded_packages() -> None:
    """Nothing is installed on the page, so nothing is recorded as loaded."""


def unpack_buffer(*args: object, **kwargs: object) -> None:
    """Installing a package: refused, the page has no package to install."""
    raise RuntimeError("rrsite's respondent page installs no packages (its trimmed standard "
                       "library has no package loader)")
