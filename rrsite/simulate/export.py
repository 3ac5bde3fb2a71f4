"""Simulated exports: respondents with known true answers, randomized through the same designs.

Each sensitive question's true answers are drawn with the given rates and then reported through
the design matrix from rrsite.core: report j with probability matrix[truth][j]. Questions asked
directly get plausible answers. Everything is vectorised with numpy and written in chunks, so
10 million rows take seconds and little memory. The output has the collector's export format
(docs/contracts.md), CSV or JSONL by the file's extension.
"""

from __future__ import annotations

import base64
import csv
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..core import TwoGroupDesign
from ..errors import UsageError
from ..estimate.numbers import simulate_reports
from ..exports.catalog import CHOICE_TYPES, QuestionSpec, VersionSpec, version_from_manifest
from .cor import cor_answers
from .draws import (
    GROUP_SUFFIX,
    draw,
    probability,
    randomize,
    randomize_in_groups,
    sensitive_reports,
)
from .joint import joint_answers
from .logit import LogitModel
from .numbers import NumberTruth
from .oracles import draw_sets, encode, max_ticks_of, parse_set_rates, sample
from .predictor import predictor_answers

CHUNK = 200_000
#: Share of optional questions left unanswered (sensitive ones: a tenth of this).
SKIP_RATE = 0.04
#: First submission time, and the span over which submissions arrive.
START = np.datetime64("2026-11-02T09:00")
SPAN_MINUTES = 14 * 24 * 60
TEXT_ANSWERS = ("no comment", "fine", "n/a", "see above", "thanks")


def parse_truths(items: Sequence[str], version: VersionSpec) -> dict[str, np.ndarray]:
    """``QID=RATE`` (yes-no: the "yes" rate) or ``QID=value:share,value:share`` (choice).

    Shares of a choice must not exceed 1 in total; values left out share the rest equally. A
    randomized multi-choice question takes each box's tick rate (``value:rate``; others 1/k).
    """
    truths: dict[str, np.ndarray] = {}
    for item in items:
        qid, sep, text = item.partition("=")
        if not sep or not qid or not text:
            raise UsageError(f"--truth {item!r}: write QID=RATE or QID=value:share,...")
        question = version.question(qid)
        if question is None:
            known = ", ".join(q.id for q in version.questions if q.type in CHOICE_TYPES)
            raise UsageError(f"--truth {item!r}: no question {qid!r} (questions: {known})")
        if qid in truths:
            raise UsageError(f"--truth: {qid} is given twice")
        if question.oracle is not None and question.oracle.sets:  # each box's tick rate
            truths[qid] = parse_set_rates(text, question, item)
            continue
        if question.type not in CHOICE_TYPES:
            raise UsageError(f"--truth {item!r}: {qid} is a {question.type} question; truths are "
                             "for yes-no, choice, randomized multi-choice and number questions")
        truths[qid] = _shares(item, text, question)
    return truths


def _shares(item: str, text: str, question: QuestionSpec) -> np.ndarray:
    values = list(question.values)
    if ":" not in text:
        if question.type != "yes-no":
            raise UsageError(f"--truth {item!r}: give shares per answer, e.g. "
                             f"{question.id}={values[0]}:0.3,{values[1]}:0.7")
        rate = probability(item, text)
        return np.array([1.0 - rate, rate]) if values == ["no", "yes"] else \
            np.array([rate if v == "yes" else 1.0 - rate for v in values])
    shares = np.full(len(values), np.nan)
    for piece in text.split(","):
        value, sep, number = piece.rpartition(":")
        if not sep or value not in values:
            raise UsageError(f"--truth {item!r}: {value!r} is not an answer of {question.id} "
                             f"({', '.join(values)})")
        shares[values.index(value)] = probability(item, number)
    given = float(np.nansum(shares))
    left = np.isnan(shares)
    if given > 1.0 + 1e-9 or (not left.any() and abs(given - 1.0) > 1e-9):
        raise UsageError(f"--truth {item!r}: the shares add up to {given:g}, not 1")
    if left.any():
        shares[left] = max(1.0 - given, 0.0) / int(left.sum())
    normalised: np.ndarray = shares / shares.sum()
    return normalised


def _tokens(rng: np.random.Generator, count: int) -> list[str]:
    """Random respondent tokens: 22 base64url characters (132 random bits) each."""
    text = base64.urlsafe_b64encode(rng.bytes(18 * count)).decode("ascii")
    return [text[i:i + 22] for i in range(0, 24 * count, 24)]


def _times(rng: np.random.Generator, offset: int, count: int, total: int) -> list[str]:
    low = SPAN_MINUTES * offset // max(total, 1)
    high = max(SPAN_MINUTES * (offset + count) // max(total, 1), low + 1)
    minutes = np.sort(rng.integers(low, high, count))
    stamps = np.datetime_as_string(START + minutes.astype("timedelta64[m]"), unit="m")
    return [f"{stamp}Z" for stamp in stamps.tolist()]


def _direct_shares(rng: np.random.Generator, question: QuestionSpec) -> np.ndarray:
    return rng.dirichlet(np.full(len(question.values), 3.0))


def _answers(
    rng: np.random.Generator, question: QuestionSpec, shares: np.ndarray | None, count: int,
    number: NumberTruth | None = None,
) -> tuple[list[Any], list[int] | None]:
    """Answers (reported values) of one question for ``count`` respondents; None = unanswered.

    The second item is the group of each respondent for a two-group design (None elsewhere;
    an unanswered question has no group). A number question's true values come from
    ``number`` (``--truth``), else uniformly from its range.
    """
    groups: list[Any] | None = None
    if question.oracle is not None:  # a frequency oracle (rrsite.simulate.oracles)
        assert shares is not None
        oracle = question.oracle
        if oracle.sets:
            truth = draw_sets(rng, shares, max_ticks_of(oracle), count)
        else:
            truth = draw(rng, shares, count)
        answers = encode(oracle, sample(rng, oracle, truth), question.values)
    elif question.type in CHOICE_TYPES:
        assert shares is not None
        index = draw(rng, shares, count)
        if question.sensitive:
            answers, groups = sensitive_reports(rng, question, index)
        else:
            answers = np.array(question.values, dtype=object)[index].tolist()
    elif question.type == "number":
        low = question.minimum if question.minimum is not None else 0.0
        high = question.maximum if question.maximum is not None else max(low + 100.0, 100.0)
        if number is not None:
            drawn_truth = number.draw(rng, count)
            answers = drawn_truth.astype(int).tolist() if question.integer else \
                drawn_truth.tolist()
        elif question.integer:
            numbers = rng.integers(math.ceil(low), math.floor(high) + 1, count)
            answers = numbers.tolist()
        else:
            answers = np.round(rng.uniform(low, high, count), 1).clip(low, high).tolist()
        if question.number_design is not None:  # randomized on the device
            other = rng.uniform(low, high, count)
            reports, drawn = simulate_reports(rng, question.number_design,
                                              np.asarray(answers, dtype=np.float64), other)
            answers = [float(v) for v in reports.tolist()]
            if question.integer and question.number_design.name in ("mixture",
                                                                     "mixture-unknown"):
                answers = [int(v) if float(v).is_integer() else v for v in answers]
            groups = None if drawn is None else drawn.tolist()
    elif question.type == "text":
        picks = rng.integers(0, len(TEXT_ANSWERS), count)
        answers = [TEXT_ANSWERS[i][: question.max_length] for i in picks.tolist()]
    else:
        chosen = rng.random((count, len(question.values))) < 0.35
        options = question.values
        answers = [[options[j] for j in np.flatnonzero(row)] for row in chosen]
    if not question.required:
        skip_rate = SKIP_RATE / 10 if question.sensitive else SKIP_RATE
        for i in np.flatnonzero(rng.random(count) < skip_rate).tolist():
            answers[i] = None
            if groups is not None:
                groups[i] = None
    return answers, groups


def simulate_rows(
    manifest: Mapping[str, Any], respondents: int, truths: Mapping[str, np.ndarray],
    seed: int | None = None, chunk: int = CHUNK, logits: Sequence[LogitModel] = (),
    joints: Sequence[Any] = (), predictors: Sequence[Any] = (), cors: Sequence[Any] = (),
    numbers: Mapping[str, NumberTruth] | None = None,
) -> Iterator[tuple[list[str], dict[str, list[Any]]]]:
    """Chunks of simulated submissions.

    Each is (tokens, {field: values}) with survey, version, respondent, submitted_at and every
    question id, and ``<id>.group`` after each two-group question.
    """
    version = version_from_manifest(manifest, "survey")
    rng = np.random.default_rng(seed)
    numbers = numbers or {}
    shares = {
        q.id: truths[q.id] if q.id in truths else _direct_shares(rng, q) if not q.sensitive
        else np.array([float(v == "no") for v in q.values]) if q.anchor  # false for everyone
        else np.full(len(q.values), 1.0 / len(q.values))
        for q in version.questions if q.type in CHOICE_TYPES or q.oracle is not None
    }
    shares.update(_fielded_shares(version, shares))
    for offset in range(0, respondents, chunk):
        count = min(chunk, respondents - offset)
        columns: dict[str, list[Any]] = {
            "survey": [version.survey] * count,
            "version": [version.version] * count,
            "respondent": _tokens(rng, count),
            "submitted_at": _times(rng, offset, count, respondents),
        }
        for question in version.questions:
            answers, groups = _answers(rng, question, shares.get(question.id), count,
                                       numbers.get(question.id))
            columns[question.id] = answers
            if groups is not None:
                columns[question.id + GROUP_SUFFIX] = groups
        for model in logits:        # true answers from a logistic model
            columns[model.outcome] = _logit_answers(rng, version, model, columns, count)
        for joint in joints:        # several questions' true answers drawn together
            joint_answers(rng, version, joint, columns, count)
        for cor in cors:            # true values correlated through a Gaussian copula
            cor_answers(rng, version, cor, columns, shares, count, numbers)
        for predictor in predictors:   # a direct outcome on randomized true answers
            predictor.clipped += predictor_answers(rng, version, predictor, columns, shares,
                                                   count)
        _hide_unshown(version, columns)
        for qid, number in numbers.items():  # the true numbers of those who answered
            number.record(np.array([v is not None for v in columns[qid]], dtype=bool))
        yield columns["respondent"], columns


def _fielded_shares(version: VersionSpec, shares: Mapping[str, np.ndarray]
                    ) -> dict[str, np.ndarray]:
    """The answers' chances of the variables the page adds when fielding a split ballot.

    ``arm``: the direct arm with the manifest's ``direct_share``; a direct-arm question: the true
    answers of the randomized question it asks directly (the same population); a comprehension
    check: every respondent answers it right (as the instructions say).
    """
    out: dict[str, np.ndarray] = {}
    share = float(version.validation.get("direct_share") or 0.0)
    for q in version.questions:
        if q.role == "arm" and len(q.values) == 2:
            out[q.id] = np.array([share if v == "direct" else 1.0 - share for v in q.values])
        elif q.role == "direct" and q.direct_of is not None and q.direct_of in shares:
            truth = version.question(q.direct_of)
            if truth is not None and list(truth.values) == list(q.values):
                out[q.id] = np.asarray(shares[q.direct_of])
        elif q.role == "check" and q.check and q.check.get("correct") in q.values:
            out[q.id] = np.array([float(v == q.check["correct"]) for v in q.values])
    return out


def _hide_unshown(version: VersionSpec, columns: dict[str, list[Any]]) -> None:
    """Unanswered (None) where a question's ``show_if`` hides it, as the page leaves it out."""
    for question in version.questions:
        condition = question.manifest.get("show_if")
        if not isinstance(condition, Mapping) or condition.get("question") not in columns:
            continue
        allowed = set(condition.get("is") or ())
        shown = columns[str(condition["question"])]
        for key in (question.id, question.id + GROUP_SUFFIX):
            if key in columns:
                columns[key] = [v if s in allowed else None
                                for v, s in zip(columns[key], shown, strict=True)]


def _logit_answers(rng: np.random.Generator, version: VersionSpec, model: LogitModel,
                   columns: dict[str, list[Any]], count: int) -> list[Any]:
    """A yes/no question's answers with truth ~ logistic(x'beta), randomized by its design."""
    question = version.question(model.outcome)
    assert question is not None
    eta = model.linear_predictor(version, columns, count)
    yes = question.values.index("yes") if "yes" in question.values else 1
    truth = np.where(rng.random(count) < 1.0 / (1.0 + np.exp(-eta)), yes, 1 - yes)
    if isinstance(question.design, TwoGroupDesign):
        group = np.array([g or 1 for g in columns[model.outcome + GROUP_SUFFIX]])
        index = randomize_in_groups(rng, question.design, truth, group)
    else:
        index = randomize(rng, question.matrix, truth) if question.sensitive else truth
    skipped = columns[model.outcome]
    values = np.array(question.answers, dtype=object)[index].tolist()
    return [None if old is None else new for old, new in zip(skipped, values, strict=True)]


def write_export(
    path: str | Path, manifest: Mapping[str, Any], respondents: int,
    truths: Mapping[str, np.ndarray], seed: int | None = None, chunk: int = CHUNK,
    logits: Sequence[LogitModel] = (), joints: Sequence[Any] = (),
    predictors: Sequence[Any] = (), cors: Sequence[Any] = (),
    numbers: Mapping[str, NumberTruth] | None = None,
) -> int:
    """Write a simulated export (CSV, or JSONL for .jsonl); returns the number of rows."""
    path = Path(path)
    version = version_from_manifest(manifest, "survey")
    qids = [q.id for q in version.questions]
    grouped = [q.id for q in version.questions
               if isinstance(q.design, TwoGroupDesign) or q.two_group]
    columns_out = [c for q in qids for c in ([q, q + GROUP_SUFFIX] if q in grouped else [q])]
    jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    rows = 0
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        if not jsonl:
            writer.writerow(["survey", "version", "respondent", "submitted_at", *columns_out])
        for _, columns in simulate_rows(manifest, respondents, truths, seed, chunk, logits,
                                        joints, predictors, cors, numbers):
            count = len(columns["respondent"])
            rows += count
            if jsonl:
                handle.write(_jsonl_lines(columns, qids, version, grouped))
            else:
                cells = [columns[name] for name in ("survey", "version", "respondent",
                                                    "submitted_at")]
                for qid in columns_out:
                    cells.append([cell(v) for v in columns[qid]])
                writer.writerows(zip(*cells, strict=True))
    return rows


def cell(value: Any) -> Any:
    """CSV cell of an answer: empty when unanswered, JSON text for a list."""
    if value is None:
        return ""
    if isinstance(value, list):
        return json.dumps(value, separators=(",", ":"))
    return value


def _jsonl_lines(
    columns: dict[str, list[Any]], qids: list[str], version: VersionSpec,
    grouped: Sequence[str] = (),
) -> str:
    head = (f'{{"survey": {json.dumps(version.survey)}, "version": '
            f'{json.dumps(version.version)}, "respondent": "')
    encoded = {qid: [None if v is None else json.dumps(v) for v in columns[qid]] for qid in qids}
    keys = {qid: json.dumps(qid) for qid in qids}
    lines = []
    for i, (token, when) in enumerate(zip(columns["respondent"], columns["submitted_at"],
                                          strict=True)):
        answers = ", ".join(f"{keys[q]}: {encoded[q][i]}" for q in qids
                            if encoded[q][i] is not None)
        groups = ", ".join(f"{keys[q]}: {columns[q + GROUP_SUFFIX][i]}" for q in grouped
                           if columns[q + GROUP_SUFFIX][i] is not None)
        tail = f', "groups": {{{groups}}}' if groups else ""
        lines.append(f'{head}{token}", "submitted_at": "{when}", "answers": {{{answers}}}'
                     f'{tail}}}\n')
    return "".join(lines)
