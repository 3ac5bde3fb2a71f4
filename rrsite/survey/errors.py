"""Errors of survey files: each problem carries ``file:line``; a file's problems travel together."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import RRSiteError


@dataclass(frozen=True, order=True)
class SurveyError:
    """One problem in one file: where it is and what is wrong."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class SurveyErrors(RRSiteError):
    """Every problem found in one or more survey files (never just the first one).

    ``errors`` holds them sorted by file and line; ``str()`` gives one ``file:line: message``
    per line.
    """

    def __init__(self, errors: Iterable[SurveyError]) -> None:
        self.errors: list[SurveyError] = sorted(set(errors))
        super().__init__(self._text())

    def _text(self) -> str:
        count = len(self.errors)
        files = len({error.file for error in self.errors})
        head = f"{count} error{'s' if count != 1 else ''}" + (
            f" in {files} files" if files > 1 else ""
        )
        return head + ":\n" + "\n".join(str(error) for error in self.errors)

    @property
    def messages(self) -> list[str]:
        """Each error as ``file:line: message``."""
        return [str(error) for error in self.errors]


class Problems:
    """Collects the problems of one file while it is read; ``raise_if_any`` ends the reading."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.last_line: int | None = None
        self.errors: list[SurveyError] = []
        self.warnings: list[SurveyError] = []

    def error(self, line: int, message: str) -> None:
        """Record a problem at a 1-based line (kept within the file's lines)."""
        self.errors.append(SurveyError(self.file, self._within(line), message))

    def warn(self, line: int, message: str) -> None:
        """Record something allowed but worth telling the author."""
        self.warnings.append(SurveyError(self.file, self._within(line), message))

    def _within(self, line: int) -> int:
        """YAML reports an error at the end of input one line past the text: keep it inside."""
        if self.last_line is not None:
            line = min(line, self.last_line)
        return max(1, line)

    def __bool__(self) -> bool:
        return bool(self.errors)

    def raise_if_any(self) -> None:
        """Raise :class:`SurveyErrors` holding every error recorded so far."""
        if self.errors:
            raise SurveyErrors(self.errors)
