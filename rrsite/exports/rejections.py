"""Rows left out of the analysis, counted by reason, with the first few places (file:row) shown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Every reason a row is excluded, in the order they are checked; the first that applies counts.
REASONS: dict[str, str] = {
    "malformed-row": "wrong number of columns",
    "malformed-json": "not a JSON object",
    "missing-field": "survey, version or respondent missing",
    "unknown-survey": "survey not among the given designs",
    "unknown-version": "version without a manifest",
    "invalid-value": "an answer or token that the version does not allow",
    "duplicate-respondent": "respondent token seen before (the first row is kept)",
}
#: How many example rows are kept per reason.
EXAMPLES = 5


@dataclass
class Example:
    """One rejected row: where it is and what is wrong."""

    file: str
    row: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.row}: {self.message}"


@dataclass
class Rejections:
    """Counts per reason and the first ``keep`` examples of each, in the order of the rows.

    Rows may be counted out of order (a reader refuses a line before the rows of its block are
    checked, and the next file is read while this one is checked); the examples kept are the
    first by file (in the order of ``files``, then first seen) and row all the same.
    """

    keep: int = EXAMPLES
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[Example]] = field(default_factory=dict)
    #: The files in the order they are read (examples are ordered by file, then row).
    files: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Rows rejected for any reason."""
        return sum(self.counts.values())

    def _rank(self, example: Example) -> tuple[int, int]:
        if example.file not in self.files:
            self.files.append(example.file)
        return self.files.index(example.file), example.row

    def _keep(self, reason: str, found: list[Example]) -> None:
        shown = self.examples.setdefault(reason, [])
        shown.extend(found)
        shown.sort(key=self._rank)
        del shown[self.keep:]

    def _wanted(self, reason: str, file: str, row: int) -> bool:
        """Whether a row would be among the examples kept (before asking for its message)."""
        shown = self.examples.get(reason, [])
        return len(shown) < self.keep or self._rank(Example(file, row, "")) < self._rank(
            shown[-1])

    def add(self, reason: str, file: str, row: int, message: str) -> None:
        """Count one rejected row."""
        assert reason in REASONS, reason
        self.counts[reason] = self.counts.get(reason, 0) + 1
        if self._wanted(reason, file, int(row)):
            self._keep(reason, [Example(file, int(row), message)])

    def add_many(
        self, reason: str, file: str, rows: np.ndarray, message: Callable[[int], str]
    ) -> None:
        """Count many rejected rows (``rows`` in increasing order).

        ``message(i)`` describes ``rows[i]``; it is asked only for the first few.
        """
        assert reason in REASONS, reason
        if len(rows) == 0:
            return
        self.counts[reason] = self.counts.get(reason, 0) + len(rows)
        found = []
        for i in range(min(self.keep, len(rows))):
            if not self._wanted(reason, file, int(rows[i])):
                break
            found.append(Example(file, int(rows[i]), message(i)))
        self._keep(reason, found)

    def set(self, reason: str, count: int, examples: list[Example]) -> None:
        """Add ``count`` rows rejected for ``reason``, of which ``examples`` are the first."""
        assert reason in REASONS, reason
        self.counts[reason] = self.counts.get(reason, 0) + count
        self._keep(reason, list(examples))

    def to_dict(self) -> dict[str, Any]:
        """{reason: {"count", "description", "examples": [{"file", "row", "message"}]}}."""
        return {
            reason: {
                "count": self.counts[reason],
                "description": REASONS[reason],
                "examples": [
                    {"file": e.file, "row": e.row, "message": e.message}
                    for e in self.examples.get(reason, [])
                ],
            }
            for reason in REASONS
            if self.counts.get(reason)
        }

    def summary(self) -> str:
        """A few lines for people: counts per reason and where to look."""
        lines = []
        for reason in REASONS:
            count = self.counts.get(reason, 0)
            if not count:
                continue
            lines.append(f"{reason}: {count:,} row{'s' if count != 1 else ''}")
            lines.extend(f"  {example}" for example in self.examples.get(reason, []))
        return "\n".join(lines)
