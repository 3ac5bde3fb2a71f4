"""`rrsite analyze --joint q1,q2[,q3]`: the table of true-answer combinations of several questions.

from rrsite.analyze.joint import joint
result = joint(["export.csv"], survey="surveys/honor-code.md", questions=["violated", "shared"])
result.fit.estimate          # one share per combination of true answers
result.to_dict()             # the JSON of `rrsite analyze --joint ... --format json`

Rows are read and checked exactly as `rrsite analyze` does (rrsite.exports.rows); a row missing
any of the questions is left out and counted. Each row keeps its own
version's design matrices; the estimation is rrsite.estimate.joint. Randomized yes-no and choice
questions of every one-group design are accepted (crosswise, triangular and Kuk with their own
reports too); a directly asked yes-no or choice question enters with the identity matrix.
Two-group designs (unrelated-unknown, SLD, CDM, CDM-sym) have a second parameter tau (the innocuous
question's yes-rate, the carriers' honesty t, the cheaters' share gamma) estimated with the table
(rrsite.estimate.joint_groups): each row's matrix is its group's (``<id>.group``), affine in tau as
in the logistic regression of a randomized outcome (``regression.two_group_rates``).

Privacy of a combination: a respondent who answers k randomized questions is protected at
(sum of the epsilons, sum of the deltas) by basic composition (MATH.md section 3), per version.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UsageError
from ..estimate.joint import JointFit, JointPart, fit_joint
from ..estimate.joint_groups import GroupedPart, fit_joint_groups
from ..estimate.regression.logistic import NUISANCE_MEANING, NUISANCE_OF_MODEL, two_group_rates
from ..exports.catalog import Catalog, QuestionSpec, exports_and_catalog
from ..exports.readers import parse_mapping
from ..exports.rejections import Rejections
from ..exports.rows import Rows, read_rows
from .univariate import model_of

JOINT_TYPES = ("yes-no", "choice")


class JointError(UsageError):
    """A joint table that cannot be estimated (bad question list, unsupported design)."""


def question_ids(text: str | Sequence[str], flag: str, error: type[UsageError],
                 twice: str = "") -> list[str]:
    """``q1,q2[,...]`` (or a list) -> ids for ``flag``: two or more, each once (else ``error``)."""
    ids = [t.strip() for t in (text.split(",") if isinstance(text, str) else text)]
    ids = [t for t in ids if t]
    if len(ids) < 2:
        raise error(f"{flag} needs two or more question ids separated by commas, got {text!r}")
    repeated = sorted({q for q in ids if ids.count(q) > 1})
    if repeated:
        raise error(f"{flag} {','.join(ids)}: {', '.join(repeated)} appears twice{twice}")
    return ids


def parse_questions(text: str | Sequence[str]) -> list[str]:
    """``q1,q2[,q3]`` (or a list) -> ids; a question twice is refused."""
    return question_ids(text, "--joint", JointError,
                        "; a joint table is over different questions")


def check_question(catalog: Catalog, qid: str, what: str = "--joint") -> list[
        tuple[int, QuestionSpec]]:
    """Every version's spec of a question a joint table can use, or a clear error."""
    found = catalog.questions_named(qid)
    if not found:
        raise JointError(f"{what}: no question {qid!r} in {catalog.survey!r} "
                         f"(questions: {', '.join(catalog.question_ids())})")
    for _, question in found:
        if question.oracle is not None:
            raise JointError(f"{what}: {qid!r} uses the frequency oracle "
                             f"{(question.design_spec or {}).get('name')}: its reports are not "
                             "values of a design matrix, so it cannot enter a joint table or a "
                             "model; estimate its shares on their own (rrsite analyze)")
        if question.type not in JOINT_TYPES:
            raise JointError(f"{what}: {qid!r} is a {question.type} question; a joint table "
                             "takes yes-no and choice questions (randomized or asked directly)")
        if question.two_group:
            design = model_of(question)
            if (question.type != "yes-no" or design is None
                    or design.model not in NUISANCE_OF_MODEL):
                raise JointError(f"{what}: {qid!r} uses a two-group design "
                                 f"({(question.design_spec or {}).get('name')}) without a "
                                 "second parameter rrsite can estimate with the table")
    values = {q.values for _, q in found}
    if len(values) > 1:
        raise JointError(f"{what}: {qid!r} has different answers in different versions "
                         f"({sorted(values)}); analyse the versions apart")
    return found


def question_matrix(question: QuestionSpec) -> np.ndarray:
    """The matrix [truth][report] of one version's question (identity if asked directly)."""
    if not question.sensitive or question.design is None:
        return np.eye(len(question.values))
    return question.matrix


def grouped_part(ids: Sequence[str], specs: Sequence[QuestionSpec], combo: Sequence[int],
                 index: Mapping[str, int], counts: np.ndarray) -> GroupedPart:
    """The respondents in one combination of groups, as a part of the grouped likelihood.

    Each two-group question gets its group's matrix B_g + tau S_g (tau at ``index[qid]``), the
    others their known matrices.
    """
    base: list[np.ndarray] = []
    slope: list[np.ndarray | None] = []
    nuisance: list[int | None] = []
    for qid, q, g in zip(ids, specs, combo, strict=True):
        if q.two_group:
            b, s, _ = group_matrices(q, int(g))
            base.append(b)
            slope.append(s)
            nuisance.append(index[qid])
        else:
            base.append(question_matrix(q))
            slope.append(None)
            nuisance.append(None)
    return GroupedPart(tuple(base), tuple(slope), tuple(nuisance), counts)


def combinations(rows: Rows, ids: Sequence[str], specs: Sequence[QuestionSpec],
                 in_m: np.ndarray, option: str) -> tuple[np.ndarray, list[tuple[
                     tuple[int, ...], np.ndarray, np.ndarray]]]:
    """Each row's cell, and the rows by their groups, for rows ``in_m`` of one version.

    The cell is the row's combination of the questions' reports. The rows are split by the
    combination of their two-group questions' groups (the other questions count as group 0):
    (groups, which rows, counts of the cells), sorted by groups.
    """
    sizes = [len(q.answers) for q in specs]
    cell = np.zeros(len(in_m), dtype=np.int64)
    for qid, q, size in zip(ids, specs, sizes, strict=True):
        position = {label: i for i, label in enumerate(q.answers)}
        codes = []
        for i in in_m.tolist():
            value = str(rows.answers[qid][i])
            if value not in position:
                raise JointError(f"{qid!r}: answer {value!r} is none of {list(q.answers)}")
            codes.append(position[value])
        cell = cell * size + np.array(codes, dtype=np.int64)
    key = np.zeros((len(in_m), len(ids)), dtype=np.int64)
    for c, (qid, q) in enumerate(zip(ids, specs, strict=True)):
        if q.two_group:
            codes_q = rows.groups.get(qid, np.zeros(len(rows.version), dtype=np.int8))[in_m]
            if np.any((codes_q != 1) & (codes_q != 2)):
                raise JointError(f"{option}: {qid!r} is a two-group question but some rows "
                                 f"have no group 1 or 2 in {qid}.group")
            key[:, c] = codes_q
    found = []
    for combo in sorted({tuple(r) for r in key.tolist()}):
        here = np.all(key == np.array(combo), axis=1)
        counts = np.bincount(cell[here], minlength=math.prod(sizes)).astype(np.float64)
        found.append((combo, here, counts))
    return cell, found


def second_parameters(found: Mapping[str, Mapping[int, QuestionSpec]], grouped: Sequence[str],
                   option: str) -> dict[str, str]:
    """Each two-group question's second parameter (``t``, ``gamma``, ...): one in every version.

    ``found`` maps each question to its specs by version.
    """
    names: dict[str, str] = {}
    for qid in grouped:
        kinds = {NUISANCE_OF_MODEL[d.model] for q in found[qid].values() if q.two_group
                 for d in [model_of(q)] if d is not None}
        if len(kinds) > 1:
            raise JointError(f"{option}: {qid!r} uses two-group designs with different second "
                             f"parameters in different versions ({', '.join(sorted(kinds))}); "
                             "analyse the versions apart")
        names[qid] = kinds.pop()
    return names


def version_design(catalog: Catalog, m: int, n: int, ids: Sequence[str],
                   specs: Sequence[QuestionSpec]) -> dict[str, Any]:
    """One version's entry of ``designs``: its name, respondents, each question's design."""
    return {"version": catalog.versions[m].version, "n": n,
            "questions": {qid: (q.design_spec or {}).get("name", "direct")
                          if q.sensitive else "direct" for qid, q in zip(ids, specs, strict=True)}}


def group_matrices(question: QuestionSpec, group: int) -> tuple[np.ndarray, np.ndarray, str]:
    """A two-group yes-no question's matrix in ``group`` at tau = 0, its slope in tau, tau's name.

    P(yes | truth t) = a0 + a1 tau + (b0 + b1 tau) t (``regression.two_group_rates``; rows and
    columns in the order of the question's values).
    """
    design = model_of(question)
    assert design is not None
    a0, a1, b0, b1 = (float(c[0]) for c in two_group_rates(design, np.array([group])))
    yes = question.values.index("yes") if "yes" in question.values else 1
    base, slope = np.zeros((2, 2)), np.zeros((2, 2))
    for truth in (0, 1):
        row = yes if truth else 1 - yes
        base[row, yes], base[row, 1 - yes] = a0 + b0 * truth, 1 - a0 - b0 * truth
        slope[row, yes], slope[row, 1 - yes] = a1 + b1 * truth, -(a1 + b1 * truth)
    return base, slope, NUISANCE_OF_MODEL[design.model]


@dataclass
class JointResult:
    """The joint table, with what it was estimated from."""

    questions: list[str]
    values: list[tuple[str, ...]]
    fit: JointFit
    rows_accepted: int
    left_out: dict[str, int]
    privacy: list[dict[str, Any]]
    designs: list[dict[str, Any]]
    rejected: Rejections = field(default_factory=Rejections)

    @property
    def margins(self) -> dict[str, dict[str, float]]:
        """Each question's shares, summed from the table."""
        table = self.fit.estimate.reshape([len(v) for v in self.values])
        out = {}
        for q, (qid, values) in enumerate(zip(self.questions, self.values, strict=True)):
            axes = tuple(a for a in range(len(self.values)) if a != q)
            shares = table.sum(axis=axes)
            out[qid] = {v: float(s) for v, s in zip(values, shares, strict=True)}
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys of docs/contracts.md ("analyze --joint")."""
        return {
            "questions": self.questions,
            "values": [list(v) for v in self.values],
            **self.fit.to_dict(),
            "margins": self.margins,
            "rows_accepted": self.rows_accepted,
            "left_out": self.left_out,
            "rows_rejected": self.rejected.total,
            "privacy": self.privacy,
            "designs": self.designs,
        }


def combination_privacy(catalog: Catalog, ids: Sequence[str],
                        versions: Iterable[int]) -> list[dict[str, Any]]:
    """Per version: the combination's privacy by basic composition, and each question's."""
    out = []
    for m in versions:
        version = catalog.versions[m]
        epsilon, delta, parts = 0.0, 0.0, []
        for qid in ids:
            question = version.question(qid)
            assert question is not None
            if question.sensitive and question.privacy is not None:
                epsilon += question.privacy.epsilon
                delta += question.privacy.delta
                parts.append(f"{qid}: {question.privacy.describe()}")
            else:
                parts.append(f"{qid}: asked directly (not protected)")
        if math.isinf(epsilon):
            text = "not differentially private for any epsilon (a question is not)"
        elif delta:
            text = f"({epsilon:.6g}, {min(delta, 1.0):.6g})-differentially private"
        else:
            text = f"{epsilon:.6g}-differentially private"
        out.append({"version": version.version, "epsilon": epsilon if math.isfinite(epsilon)
                    else None, "delta": min(delta, 1.0), "combination": text,
                    "questions": parts})
    return out


def estimate_joint(catalog: Catalog, rows: Rows, ids: Sequence[str],
                   confidence: float) -> JointResult:
    """Count each version's report combinations and fit the table."""
    found = {qid: dict(check_question(catalog, qid)) for qid in ids}
    if len(rows.version) == 0:
        raise JointError(f"no row was accepted ({rows.rejections.total:,} rejected):\n"
                         + rows.rejections.summary())
    n = len(rows.version)
    missing = np.zeros(n, dtype=bool)
    left_out: dict[str, int] = {}
    for qid in ids:
        miss = np.array([v is None or v == "" for v in rows.answers[qid]], dtype=bool)
        in_version = np.array([m in found[qid] for m in rows.version.tolist()], dtype=bool)
        miss |= ~in_version
        left_out[qid] = int(np.count_nonzero(miss & ~missing))
        missing |= miss
    used = np.flatnonzero(~missing)
    if len(used) == 0:
        raise JointError(f"no accepted row answered all of {', '.join(ids)}")
    values = [next(iter(found[qid].values())).values for qid in ids]
    grouped = [qid for qid in ids if any(q.two_group for q in found[qid].values())]
    index = {qid: j for j, qid in enumerate(grouped)}
    names = second_parameters(found, grouped, "--joint")
    parts: list[JointPart] = []
    grouped_parts: list[GroupedPart] = []
    designs = []
    for m in sorted(set(rows.version[used].tolist())):
        specs = [found[qid][m] for qid in ids]
        in_m = used[rows.version[used] == m]
        _, found_here = combinations(rows, ids, specs, in_m, "--joint")
        for combo, _, counts in found_here:
            if not grouped:
                parts.append(JointPart(tuple(question_matrix(q) for q in specs), counts))
                continue
            grouped_parts.append(grouped_part(ids, specs, combo, index, counts))
        designs.append(version_design(catalog, m, int(len(in_m)), ids, specs))
    try:
        if grouped:
            nuisance_names = [(qid, names[qid], NUISANCE_MEANING.get(names[qid], names[qid]))
                              for qid in grouped]
            result = fit_joint_groups(grouped_parts, values, nuisance_names, confidence)
            if any(names[qid] == "gamma" for qid in grouped):
                result.messages.append(
                    "CDM: a true answer is the answer of every respondent, cheaters included, "
                    "assuming that cheating (saying 'no' whatever the instruction) is independent "
                    "of the true answers and of the other questions' reports; gamma is the "
                    "cheaters' share")
        else:
            result = fit_joint(parts, values, confidence)
    except ValueError as error:
        raise JointError(f"--joint {','.join(ids)}: {error}") from error
    privacy = combination_privacy(catalog, ids, sorted(set(rows.version[used].tolist())))
    return JointResult(list(ids), [tuple(v) for v in values], result, n, left_out, privacy,
                       designs, rows.rejections)


def joint(
    exports: str | Path | Iterable[str | Path],
    survey: str | Path | Iterable[str | Path] | None = None,
    manifests: Iterable[str | Path | Mapping[str, Any]] = (),
    questions: str | Sequence[str] = (),
    confidence: float = 0.95,
    mapping: Sequence[str] | None = None,
) -> JointResult:
    """The joint table of ``questions`` from the exports (see the module docstring)."""
    paths, catalog = exports_and_catalog(exports, survey, manifests, confidence)
    ids = parse_questions(questions)
    for qid in ids:
        check_question(catalog, qid)
    column_map = parse_mapping(list(mapping or ()), catalog)
    rows = read_rows(paths, catalog, column_map, ids)
    return estimate_joint(catalog, rows, ids, confidence)
