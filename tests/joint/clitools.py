"""What the CLI tests of tests/joint share: a simulated export per module, and a refusal check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rrsite.cli import main


def module_export(name: str, survey: str, *options: str) -> Any:
    """A module-scoped fixture: ``survey`` simulated once with ``options``; (survey, export)."""

    @pytest.fixture(scope="module")
    def export(tmp_path_factory: pytest.TempPathFactory,
               simulate_export: Callable[..., tuple[Path, Path]]) -> tuple[Path, Path]:
        return simulate_export(tmp_path_factory.mktemp(name), survey, *options)

    return export


def refused(capsys: pytest.CaptureFixture[str], message: str, *argv: str | Path) -> None:
    """``rrsite ARGV`` exits 2 and says ``message`` on stderr."""
    assert main([str(arg) for arg in argv]) == 2
    assert message in capsys.readouterr().err
