"""Model formulas for the randomized-response logit: a small grammar and the covariate coding.

The grammar (hand-written, documented in README.md; patsy/formulaic are not used because
the coding depends on the survey's question types, not on the data's dtypes)::

    formula  := NAME "~" term ("+" term)*
    term     := "(" "1" "|" NAME ")"                 a random intercept per level of NAME
    term     := factor ((":" | "*") factor)*        a:b interaction only; a*b = a + b + a:b
    factor   := NAME                                 coded by the question's type
              | "C(" NAME ["," "ref" "=" STRING] ")"  choice / yes-no, reference level given
              | "scale(" NAME ")"                    number, standardised (mean 0, sd 1)

Coding by question type: ``choice`` and direct ``yes-no`` become one indicator per value but the
reference (the first value, or ``ref``); ``number`` is numeric (``scale()`` standardises over the
rows used); ``multi-choice`` is one indicator per option ("chosen"). An interaction is the product
of every pair (tuple) of its factors' columns. Names look like ``year[Second]``,
``scale(courses)``, ``year[Second]:gender[woman]``.

A row missing any covariate of the model (or the outcome) is left out and counted.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .logistic import RegressionError

_TOKEN = re.compile(r"""\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)|(?P<string>"[^"]*"|'[^']*')
                        |(?P<number>[0-9]+)|(?P<op>[~+:*(),=|]))""", re.VERBOSE)


class FormulaError(RegressionError):
    """A formula that does not parse or names something the survey does not have."""


@dataclass(frozen=True)
class Factor:
    """One covariate as written: its question id and how it is coded."""

    name: str
    scale: bool = False
    ref: str | None = None
    explicit: bool = False        # written as C(...)

    @property
    def label(self) -> str:
        """The factor as it appears in column names."""
        if self.scale:
            return f"scale({self.name})"
        return self.name


@dataclass(frozen=True)
class Term:
    """A main effect (one factor) or an interaction (several)."""

    factors: tuple[Factor, ...]

    @property
    def label(self) -> str:
        """a, scale(b) or a:b."""
        return ":".join(f.label for f in self.factors)


@dataclass
class Formula:
    """``outcome ~ terms`` (an intercept is always included)."""

    outcome: str
    terms: list[Term] = field(default_factory=list)
    text: str = ""
    #: ``(1 | g)``: the questions whose levels get a random intercept (regression.mixed).
    groups: list[str] = field(default_factory=list)

    @property
    def questions(self) -> list[str]:
        """Every covariate question id, in order of first appearance."""
        return list(dict.fromkeys(factor.name for term in self.terms for factor in term.factors))


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out, position = [], 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise FormulaError(f"formula {text!r}: cannot read {text[position:].strip()!r} "
                               f"at character {position + 1}")
        kind = match.lastgroup or "op"
        out.append((kind, match.group(kind), match.start(kind) + 1))
        position = match.end()
    return out


def parse_formula(text: str) -> Formula:
    """Parse ``outcome ~ a + C(b, ref="x") + scale(c) + a:b + a*c`` (see the module docstring)."""
    tokens = _tokens(text)
    index = 0

    def peek() -> tuple[str, str, int] | None:
        return tokens[index] if index < len(tokens) else None

    def expect(kind: str, value: str | None = None) -> str:
        nonlocal index
        token = peek()
        if token is None or token[0] != kind or (value is not None and token[1] != value):
            wanted = repr(value) if value else kind
            found = f"{token[1]!r} at character {token[2]}" if token else "the end"
            raise FormulaError(f"formula {text!r}: expected {wanted}, found {found}")
        index += 1
        return token[1]

    def factor() -> Factor:
        name = expect("name")
        token = peek()
        if name in ("C", "scale") and token is not None and token[1] == "(":
            expect("op", "(")
            inner = expect("name")
            ref = None
            if name == "C" and (t := peek()) is not None and t[1] == ",":
                expect("op", ",")
                if expect("name") != "ref":
                    raise FormulaError(f"formula {text!r}: C() takes only ref=\"level\"")
                expect("op", "=")
                ref = expect("string")[1:-1]
            expect("op", ")")
            return Factor(inner, scale=name == "scale", ref=ref, explicit=name == "C")
        return Factor(name)

    outcome = expect("name")
    expect("op", "~")
    terms: list[Term] = []
    groups: list[str] = []
    while True:
        if (t := peek()) is not None and t[1] == "(":
            expect("op", "(")
            if expect("number") != "1":
                raise FormulaError(f"formula {text!r}: only a random intercept (1 | group) is "
                                   "supported")
            expect("op", "|")
            groups.append(expect("name"))
            expect("op", ")")
            if peek() is None:
                break
            expect("op", "+")
            continue
        factors = [factor()]
        star = False
        while (t := peek()) is not None and t[1] in (":", "*"):
            star = star or t[1] == "*"
            index += 1
            factors.append(factor())
        if star:   # a*b*c: every non-empty subset, in order of size
            for size in range(1, len(factors) + 1):
                for combo in itertools.combinations(factors, size):
                    terms.append(Term(tuple(combo)))
        else:
            terms.append(Term(tuple(factors)))
        token = peek()
        if token is None:
            break
        expect("op", "+")
    unique: dict[tuple[Factor, ...], Term] = {}
    for term in terms:
        unique.setdefault(term.factors, term)
    formula = Formula(outcome, list(unique.values()), text, groups)
    if len(set(groups)) != len(groups):
        raise FormulaError(f"formula {text!r}: a random intercept is repeated")
    both = sorted(set(groups) & set(formula.questions))
    if both:
        raise FormulaError(f"formula {text!r}: {', '.join(both)} is both a covariate and a "
                           "random-intercept group")
    for term in formula.terms:
        if len({f.name for f in term.factors}) != len(term.factors):
            raise FormulaError(f"formula {text!r}: {term.label} repeats a question")
    return formula


@dataclass
class Covariate:
    """A directly asked question's answers, one per row (None = not answered)."""

    type: str                       # yes-no, choice, number or multi-choice
    values: tuple[str, ...] = ()
    data: Sequence[object] = ()


@dataclass
class DesignMatrix:
    """The model's columns over the rows used."""

    X: np.ndarray
    names: list[str]
    term_columns: list[tuple[str, list[int]]]
    used: np.ndarray                     # bool per input row
    missing: dict[str, int]              # question id -> rows left out because it is missing
    levels: dict[str, list[str]]         # factor label -> its levels (reference first)
    scaling: dict[str, tuple[float, float]] = field(default_factory=dict)


def _as_list(value: object) -> list[str] | None:
    if value is None or value == "":
        return None
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [v for v in value.split(";") if v]
        if isinstance(parsed, list):
            return [str(v) for v in parsed]
    return None


def number_or_nan(value: object) -> float:
    """An answer as a float; NaN when it is empty or not a number."""
    if value is None or value == "":
        return math.nan
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def design_matrix(formula: Formula, covariates: Mapping[str, Covariate],
                  outcome_missing: np.ndarray | None = None) -> DesignMatrix:
    """Code every factor, leave out rows missing any covariate, build the interactions.

    Raises FormulaError for an unknown question or a type that cannot be a covariate, and
    RegressionError for a category with no respondent among the rows used.
    """
    sizes = {len(c.data) for c in covariates.values()}
    n = sizes.pop() if sizes else (0 if outcome_missing is None else len(outcome_missing))
    present = np.ones(n, dtype=bool) if outcome_missing is None else ~outcome_missing
    missing: dict[str, int] = {}
    for name in formula.questions:
        if name not in covariates:
            known = ", ".join(sorted(covariates)) or "none"
            raise FormulaError(f"formula {formula.text!r}: no directly asked question {name!r} "
                               f"(covariates available: {known})")
        cov = covariates[name]
        if cov.type == "number":
            miss = np.isnan(np.array([number_or_nan(v) for v in cov.data], dtype=np.float64))
        elif cov.type == "multi-choice":
            miss = np.array([_as_list(v) is None for v in cov.data], dtype=bool)
        elif cov.type in ("yes-no", "choice"):
            miss = np.array([v is None or v == "" for v in cov.data], dtype=bool)
        else:
            raise FormulaError(f"formula {formula.text!r}: {name!r} is a {cov.type} question; "
                               "covariates are yes-no, choice, number or multi-choice")
        missing[name] = int(np.count_nonzero(miss & present))
        present &= ~miss
    used = present
    rows = int(np.count_nonzero(used))

    blocks: dict[Factor, tuple[list[str], np.ndarray]] = {}
    levels: dict[str, list[str]] = {}
    scaling: dict[str, tuple[float, float]] = {}
    for term in formula.terms:
        for factor in term.factors:
            if factor in blocks:
                continue
            cov = covariates[factor.name]
            data = [v for v, keep in zip(cov.data, used, strict=True) if keep]
            if cov.type == "number":
                if factor.ref is not None or factor.explicit:
                    raise FormulaError(f"formula {formula.text!r}: C({factor.name}) needs a "
                                       "choice or yes-no question; it is a number")
                x = np.array([number_or_nan(v) for v in data], dtype=np.float64)
                if factor.scale:
                    mean = float(x.mean()) if rows else 0.0
                    sd = float(x.std(ddof=1)) if rows > 1 else 0.0
                    if sd == 0:
                        raise RegressionError(f"scale({factor.name}): every row used has the same "
                                              "value, nothing to standardise")
                    x = (x - mean) / sd
                    scaling[factor.label] = (mean, sd)
                blocks[factor] = ([factor.label], x[:, None])
                continue
            if factor.scale:
                raise FormulaError(f"formula {formula.text!r}: scale({factor.name}) needs a "
                                   f"number question; it is {cov.type}")
            if cov.type == "multi-choice":
                lists = [set(_as_list(v) or ()) for v in data]
                names, cols = [], []
                for option in cov.values:
                    col = np.array([option in chosen for chosen in lists], dtype=np.float64)
                    _nonempty(col, f"{factor.name}[{option}]", "chose", rows)
                    names.append(f"{factor.name}[{option}]")
                    cols.append(col)
                levels[factor.label] = list(cov.values)
                blocks[factor] = (names, np.column_stack(cols) if cols else np.zeros((rows, 0)))
                continue
            reference = factor.ref if factor.ref is not None else cov.values[0]
            if reference not in cov.values:
                raise FormulaError(f"formula {formula.text!r}: {factor.name} has no level "
                                   f"{reference!r} (levels: {', '.join(cov.values)})")
            codes = np.array(data, dtype=object)
            for value in cov.values:
                _nonempty((codes == value).astype(np.float64), f"{factor.name}[{value}]",
                          "answered", rows)
            others = [v for v in cov.values if v != reference]
            levels[factor.label] = [reference, *others]
            blocks[factor] = (
                [f"{factor.name}[{v}]" for v in others],
                np.column_stack([(codes == v).astype(np.float64) for v in others])
                if others else np.zeros((rows, 0)),
            )

    names = ["(Intercept)"]
    columns = [np.ones((rows, 1))]
    term_columns: list[tuple[str, list[int]]] = []
    for term in formula.terms:
        parts = [blocks[f] for f in term.factors]
        own: list[int] = []
        for combo in itertools.product(*[range(len(p[0])) for p in parts]):
            col = np.ones(rows)
            for (_, part_cols), j in zip(parts, combo, strict=True):
                col = col * part_cols[:, j]
            label = ":".join(p[0][j] for p, j in zip(parts, combo, strict=True))
            if len(term.factors) > 1:
                _nonempty(np.abs(col), label, "falls in", rows)
            own.append(len(names))
            names.append(label)
            columns.append(col[:, None])
        term_columns.append((term.label, own))
    X = np.hstack(columns) if rows else np.zeros((0, len(names)))
    return DesignMatrix(X, names, term_columns, used, missing, levels, scaling)


def _nonempty(column: np.ndarray, label: str, verb: str, rows: int) -> None:
    if rows and not np.any(column != 0):
        raise RegressionError(
            f"empty category: no respondent {verb} {label} among the {rows:,} rows used; "
            "merge it with another level (or choose another reference) or drop the term"
        )
