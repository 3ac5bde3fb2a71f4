"""Manifests and exports written by hand for the analyzer's tests (no survey parser needed)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rrsite.analyze.api import analyze_counts
from rrsite.core import design_from_spec, privacy_of
from rrsite.exports.readers import ExportError

SURVEY = "honor-code-2026"
VERSION = "3f9a1c0d2b4e5f60"
VERSION_2 = "aa11bb22cc33dd44"
FAIR = {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25}
KRR3 = {"name": "k-rr", "k": 3, "p": 0.6}


def question(qid: str, qtype: str, *, design: dict[str, Any] | None = None,
             values: list[str] | None = None, required: bool = True, **extra: Any) -> dict:
    if qtype == "yes-no":
        values = ["no", "yes"]
    entry: dict[str, Any] = {"id": qid, "text": f"Question {qid}?", "type": qtype,
                             "sensitive": design is not None, "required": required, **extra}
    if values is not None:
        entry["values"] = list(values)
        entry["options"] = [{"value": v, "label": v.title()} for v in values]
    if design is not None:
        built = design_from_spec(design)
        guarantee = privacy_of(built)
        entry["design"] = dict(design)
        entry["matrix"] = [list(row) for row in built.matrix]
        entry["epsilon"] = None if math.isinf(guarantee.epsilon) else guarantee.epsilon
        entry["delta"] = guarantee.delta
    return entry


def manifest(version: str = VERSION, questions: list[dict] | None = None,
             survey: str = SURVEY) -> dict:
    if questions is None:
        questions = standard_questions()
    return {"format": 1, "id": survey, "title": "Honor Code survey", "language": "en",
            "version": version, "core_hash": "sha256:test",
            "submit": {"to": "collector", "url": "/api/submissions"},
            "privacy": {"epsilon": 1.0986, "delta": 0.0, "budget": 3.0},
            "questions": questions}


def standard_questions(violated: dict | None = None) -> list[dict]:
    return [
        question("violated", "yes-no", design=violated or FAIR),
        question("major", "choice", design=KRR3, values=["arts", "science", "law"]),
        question("year", "choice", values=["First", "Second", "Third or later"]),
        question("age", "number", min=16, max=99, integer=True, required=False),
        question("comment", "text", max_length=20, required=False),
        question("clubs", "multi-choice", values=["chess", "rowing"], required=False),
    ]


def token(i: int) -> str:
    return f"tok{i:019d}"


HEADER = ["survey", "version", "respondent", "submitted_at",
          "violated", "major", "year", "age", "comment", "clubs"]


def row(i: int, violated: str = "yes", major: str = "arts", year: str = "First",
        version: str = VERSION, **extra: str) -> dict[str, str]:
    base = {"survey": SURVEY, "version": version, "respondent": token(i),
            "submitted_at": "2026-11-22T13:05Z", "violated": violated, "major": major,
            "year": year, "age": "20", "comment": "", "clubs": ""}
    base.update(extra)
    return base


def write_csv(path: Path, rows: list[dict[str, str]], header: list[str] = HEADER) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, lineterminator="\n",
                                extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def read_table(path: Path) -> tuple[list[str], list[list[str]]]:
    """A CSV file as its header and its rows (lists of strings)."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        return header, list(reader)


def with_design_cells(root: Path, seed: int, clusters: int, spread: tuple[float, float],
                      psus: str) -> tuple[list[str], list[list[str]], Any, Any, Any]:
    """root/plain.csv with a design cell per row, written to root/design.csv: 3 strata of
    ``clusters`` clusters each, weights (1 + stratum) x uniform(``spread``), rounded to 3
    decimals, and ``psus`` clusters per stratum in the population. The export's header and rows,
    and each row's stratum, cluster and weight (numpy arrays)."""
    header, rows = read_table(root / "plain.csv")
    rng = np.random.default_rng(seed)
    stratum = rng.integers(0, 3, len(rows))
    cluster = rng.integers(0, clusters, len(rows))
    weight = np.round((1 + stratum) * rng.uniform(*spread, len(rows)), 3)
    write_table(root / "design.csv", [*header, "stratum", "psu", "w", "psus"],
                [[*r, f"h{s}", f"c{c}", f"{w}", psus]
                 for r, s, c, w in zip(rows, stratum, cluster, weight, strict=True)])
    return header, rows, stratum, cluster, weight


def write_table(path: Path, header: list[str], rows: Any) -> Path:
    """Write a header and rows (sequences of cells) as CSV with \\n line ends."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def good_jsonl() -> dict[str, Any]:
    """One valid JSONL submission (respondent 1 says yes to violated)."""
    return {"survey": SURVEY, "version": VERSION, "respondent": token(1),
            "submitted_at": "2026-11-22T13:05Z", "answers": {"violated": "yes"}}


def bad_jsonl_lines(good: dict[str, Any]) -> list[str]:
    """Ten JSONL lines that fail in order: cut off (not JSON), a list, no version, answers a
    list, an unknown question, a number as text, a boolean age, a number for yes-no, a numeric
    respondent (respondents 2 to 7)."""
    return [
        '{"survey": "honor-code-2026", "version": ',  # cut off
        json.dumps([1, 2, 3]),
        json.dumps({k: v for k, v in good.items() if k != "version"} | {"respondent": token(2)}),
        json.dumps(good | {"respondent": token(3), "answers": ["yes"]}),
        json.dumps(good | {"respondent": token(4), "answers": {"violated": "yes", "cheat": "no"}}),
        json.dumps(good | {"respondent": token(5), "answers": {"age": "20"}}),
        json.dumps(good | {"respondent": token(6), "answers": {"age": True}}),
        json.dumps(good | {"respondent": token(7), "answers": {"violated": 1}}),
        json.dumps(good | {"respondent": 12345}),
    ]


def bad_jsonl_clubs(good: dict[str, Any]) -> list[str]:
    """Multi-choice answers: a repeated option and an unknown one are refused; a list with a
    number age and a null yes-no is accepted (respondents 8 to 10)."""
    return [
        json.dumps(good | {"respondent": token(8), "answers": {"clubs": ["chess", "chess"]}}),
        json.dumps(good | {"respondent": token(9), "answers": {"clubs": ["chess", "golf"]}}),
        json.dumps(good | {"respondent": token(10), "answers": {"clubs": ["rowing"],
                                                                 "age": 30, "violated": None}}),
    ]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for r in rows:
            answers = {k: v for k, v in r.items()
                       if k not in ("survey", "version", "respondent", "submitted_at")
                       and v not in ("", None)}
            record = {"survey": r["survey"], "version": r["version"],
                      "respondent": r["respondent"], "submitted_at": r["submitted_at"],
                      "answers": answers}
            handle.write(json.dumps(record) + "\n")
    return path


def write_manifest(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def counts_refused(path: Path, survey: Any) -> str:
    """The message of the ExportError that analyze_counts raises for the counts file ``path``."""
    with pytest.raises(ExportError) as caught:
        analyze_counts(path, survey=survey)
    return str(caught.value)
