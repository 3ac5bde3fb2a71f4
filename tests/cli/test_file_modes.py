"""Reports and exports are written with the mode the user's umask gives a new file.

They were written through a temporary file from mkstemp and kept its mode 0600, so a co-author
in the same group could not read them. Each writer is run under two umasks.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from rrsite.cli import main
from rrsite.collect.store import Store
from tests.analyze.helpers import manifest, row, write_csv, write_manifest


@pytest.fixture(params=[0o022, 0o007], ids=["umask-022", "umask-007"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_analyze_writes_its_report_as_open_would(umask: int, tmp_path: Path) -> None:
    export = write_csv(tmp_path / "export.csv", [row(i) for i in range(40)])
    survey = write_manifest(tmp_path / "survey.json", manifest())
    for form in ("html", "json", "markdown"):
        out = tmp_path / f"report.{form}"
        assert main(["analyze", str(export), "--manifest", str(survey), "--format", form,
                     "-o", str(out)]) == 0
        assert _mode(out) == 0o666 & ~umask, form


def test_export_writes_its_file_as_open_would(umask: int, tmp_path: Path) -> None:
    db = tmp_path / "rrsite.db"
    Store(db).close()
    for name in ("answers.csv", "answers.jsonl"):
        out = tmp_path / name
        assert main(["export", "--db", str(db), "-o", str(out)]) == 0
        assert _mode(out) == 0o666 & ~umask, name
