"""Subgroups of `rrsite analyze --by`: one question, or several crossed into cells.

``--by year --by sex`` (or ``--by year,sex``) crosses the answers of the directly asked questions
into cells, every combination of their answers (the last question varying fastest), each answer
list ending in ``(no answer)``. A cell is named by its answers joined with :data:`SEPARATOR`
(``second × women``); with one ``--by`` the names are the answers themselves, as they always
were. Without ``--by`` there is one cell, ``all``.

This is the one place that turns the by-questions' answers into each row's cell: the tally
(rrsite.exports.tally) counts per cell through :meth:`Subgroups.codes`, the counts reader
(rrsite.exports.counts) finds a row's cell with :meth:`Subgroups.index`, and the design-based
estimates name each row's cell with :meth:`Subgroups.names_of`. A tally written on another engine
(SQL) computes the same index: the mixed-radix number of the answers' positions.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

NO_ANSWER = "(no answer)"
#: Joins the answers of a crossed cell's name.
SEPARATOR = " × "
#: The one cell without --by.
ALL = "all"


def parse_by(by: str | Iterable[str] | None) -> tuple[str, ...]:
    """``--by`` as given (None, ``"a"``, ``"a,b"``, or a list of those) -> the question ids.

    A question named twice is an error (ValueError): crossing a question with itself adds
    nothing.
    """
    if by is None:
        return ()
    items = [by] if isinstance(by, str) else list(by)
    ids = [part.strip() for item in items for part in str(item).split(",")]
    ids = [qid for qid in ids if qid]
    repeated = sorted({qid for qid in ids if ids.count(qid) > 1})
    if repeated:
        raise ValueError(f"--by {','.join(ids)}: {', '.join(repeated)} is given twice; each "
                         "question crosses the others once")
    return tuple(ids)


@dataclass(frozen=True)
class Subgroups:
    """The cells of the by-questions: their answers' lists and every combination of them."""

    questions: tuple[str, ...]
    #: Per question: its answers (every version's, in order), then NO_ANSWER.
    levels: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, questions: Sequence[str], answers: Mapping[str, Sequence[str]]) -> Subgroups:
        """The cells of ``questions``, each with its ``answers`` (NO_ANSWER is added)."""
        return cls(tuple(questions),
                   tuple((*answers[q], NO_ANSWER) for q in questions))

    @property
    def label(self) -> str | None:
        """The by-questions as ``--by`` takes them (``year,sex``), or None without --by."""
        return ",".join(self.questions) if self.questions else None

    @property
    def cells(self) -> list[tuple[str, ...]]:
        """Every combination of answers, the last varying fastest (``[()]`` without --by)."""
        return list(itertools.product(*self.levels))

    @property
    def names(self) -> list[str]:
        """The cells' names, in the order of :attr:`cells` (``["all"]`` without --by)."""
        if not self.questions:
            return [ALL]
        return [SEPARATOR.join(cell) for cell in self.cells]

    def cell_of(self, name: str) -> dict[str, str]:
        """``{question: answer}`` of a cell name (ValueError for a name that is not a cell)."""
        return dict(zip(self.questions, self.cells[self.names.index(name)], strict=True))

    def unanswered(self, name: str) -> bool:
        """Whether the cell has NO_ANSWER for some by-question."""
        return NO_ANSWER in self.cell_of(name).values() if self.questions else False

    def index(self, answers: Sequence[str]) -> int:
        """The cell of one answer per by-question (``""`` = unanswered); ValueError if unknown."""
        position = 0
        for question, level, answer in zip(self.questions, self.levels, answers, strict=True):
            value = answer or NO_ANSWER
            if value not in level:
                raise ValueError(f"{value!r} is not an answer of --by {question!r} "
                                 f"({', '.join(level[:-1])})")
            position = position * len(level) + level.index(value)
        return position

    def codes(self, union_codes: Mapping[str, np.ndarray], rows: int) -> np.ndarray:
        """Each row's cell: the mixed-radix number of its answers' positions.

        ``union_codes[q]``: per row, the answer's position in ``levels[q]`` (negative when
        unanswered or not a known answer; those count as NO_ANSWER). A by-question the block
        does not have is unanswered in every row.
        """
        cell = np.zeros(rows, dtype=np.int64)
        for question, level in zip(self.questions, self.levels, strict=True):
            size = len(level)
            found = union_codes.get(question)
            position = (np.full(rows, size - 1, dtype=np.int64) if found is None
                        else np.where(found >= 0, found, size - 1).astype(np.int64))
            cell = cell * size + position
        return cell

    def names_of(self, answers: Mapping[str, np.ndarray]) -> np.ndarray:
        """Each row's cell name from its answers per by-question (NO_ANSWER where none)."""
        columns = [np.asarray(answers[q], dtype=object) for q in self.questions]
        if len(columns) == 1:
            return columns[0]
        joined = np.empty(len(columns[0]), dtype=object)
        joined[:] = [SEPARATOR.join(parts) for parts in zip(*columns, strict=True)]
        return joined
