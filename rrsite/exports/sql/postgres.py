"""The tally counted in the collector's PostgreSQL database (`rrsite analyze --db URL --survey S`).

The query of rrsite.exports.sql.aggregate runs in the database, over the collector's tables
(rrsite/collect/pgstore.py: ``manifests`` and ``submissions``, whose ``answers`` is the JSON
object the page sent, two-group groups under ``<id>.group``). In one read-only, repeatable-read
transaction: the survey's manifests, then (for a survey with randomized numbers) the distinct
reports, which rrsite.core's designs judge possible or not, then the counts: over the rows
grouped by what the checks read where the survey's answers repeat (``source``; the server's JIT
compiler off: with a few thousand groups the query runs in less time than compiling it takes),
else row by row. What leaves the
database: counts per question, version, report and subgroup; each randomized number's distinct
reports with how many gave each (the estimator needs every report; this is all of them without
any link to a respondent); the number of rows rejected per reason and the first five rejected
rows of each, which the report shows.

A row is numbered as in ``rrsite export --survey S --format jsonl``: by respondent token (the
order the export lists them in). The collector's ``UNIQUE (survey, respondent)`` leaves no
duplicate tokens to look for. The checks are the tally's, answers read as JSON (as from a JSONL
export: a string "20" is not the number 20).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import RRSiteError, UsageError
from ...pgsnapshot import Snapshot
from ..catalog import GROUP_SUFFIX, Catalog, build_catalog
from ..counts import Filling
from ..readers import FileInfo
from ..rejections import Example, Rejections
from ..subgroups import parse_by
from ..tally import Tally
from .aggregate import COLUMNS, Aggregate, Query
from .checks import (
    OK,
    REASON_OF,
    VALID_TOKEN,
    RowChecks,
    Source,
    text_field,
    token_valid,
    uncounted_reason,
)
from .dialects import POSTGRES
from .files import json_field
from .shown import Shown

#: The key of a design cell in the stored answers (rrsite/collect/manifests.py).
CELL_KEY = "@cell"
#: Rows read to tell whether grouping rows alike pays: it does unless nearly every answers text
#: of the first SAMPLE_ROWS differs (more than GROUPED_SHARE of them distinct).
SAMPLE_ROWS = 20_000
GROUPED_SHARE = 0.9


@dataclass
class Counted:
    """What the database gave: the catalog, the filled tally and the description of the source."""

    catalog: Catalog
    tally: Tally
    info: FileInfo


class Connection(Snapshot):
    """An asyncpg connection driven from synchronous code (a loop in a thread of its own)."""

    def __init__(self, dsn: str) -> None:  # noqa: D107
        super().__init__(dsn, "rrsite-analyze-db")


def shown_dsn(dsn: str) -> str:
    """The database URL without its password (for messages and the report)."""
    head, at, tail = dsn.rpartition("@")
    if not at or ":" not in head.split("//", 1)[-1]:
        return dsn
    scheme, _, user = head.partition("//")
    return f"{scheme}//{user.split(':', 1)[0]}@{tail}"


def source(catalog: Catalog, survey: str, grouped: bool = True) -> tuple[Source, Query]:
    """The survey's stored submissions, answers read as JSON; ``grouped``: rows alike as one.

    The checks read a row's survey, version, answers and whether its token is empty, well
    formed or not: grouped, rows alike in those are checked once, as one group that counts as
    many (a survey of choices holds a few thousand distinct answers, however many respond). A
    token stands for its kind (empty, well formed, not), each JSON text is parsed once, and the
    rows of a rejected group are found again for the report. The stored answers text is
    grouped as stored: two texts of the same JSON make two groups, checked alike. Where nearly
    every answers text differs (randomized numbers), grouping would only add a sort: each row
    is then checked on its own (``grouped`` False).
    """
    d = POSTGRES
    fields = {name: text_field(name, d) for name in ("survey", "version", "respondent")}
    two_group = catalog.grouped_ids()  # questions of two-group designs: <id>.group
    for qid in catalog.question_ids():
        fields[qid] = json_field(f"jsonb_typeof(rr_a -> {d.text(qid)})",
                                 f"(rr_a ->> {d.text(qid)})", d)
    for qid in two_group:
        key = d.text(qid + GROUP_SUFFIX)
        fields[qid + GROUP_SUFFIX] = json_field(f"jsonb_typeof(rr_a -> {key})",
                                                f"(rr_a ->> {key})", d)
    allowed = [*catalog.question_ids(), *(q + GROUP_SUFFIX for q in two_group), CELL_KEY]
    strays = (f"((rr_a - CAST(ARRAY[{', '.join(d.text(k) for k in allowed)}] AS text[])) <> "
              "CAST('{}' AS jsonb))")

    def kind(token: str) -> str:  # what the checks see of a token (respondent is NOT NULL)
        return (f"(CASE WHEN {token} = '' THEN '' WHEN {token_valid(token, d)} THEN "
                f"{d.text(VALID_TOKEN)} ELSE '!' END)")

    rows = f"FROM submissions WHERE survey = {d.text(survey)}"
    values = [(k, k) for k in ("survey", "version", "respondent", "submitted_at", "answers")]
    if not grouped:
        relation = (f"SELECT survey, version, respondent, submitted_at, answers, "
                    f"CAST(answers AS jsonb) AS rr_a {rows}")
        return (Source(fields, strays=strays),
                Query(relation, ["respondent"], values, duplicates=False, file="NULL"))
    groups = (f"SELECT survey, version, {kind('respondent')} AS respondent, answers, "
              f"COUNT(*) AS rr_w {rows} GROUP BY survey, version, {kind('respondent')}, answers")
    relation = (f"SELECT survey, version, respondent, answers, CAST(answers AS jsonb) AS rr_a, "
                f"rr_w FROM ({groups}) AS rr_groups")
    # (read only when some group is rejected: the EXISTS is checked once, before the scan)
    bad = f"SELECT version, respondent, answers, rr_status FROM rr_ranked WHERE rr_status <> {OK}"
    rejected = (f"SELECT rr_s.*, rr_r.rr_status FROM (SELECT * {rows} AND EXISTS ({bad})) AS "
                f"rr_s JOIN ({bad}) AS rr_r ON rr_s.answers = rr_r.answers AND rr_s.version = "
                f"rr_r.version AND {kind('rr_s.respondent')} = rr_r.respondent")
    return (Source(fields, strays=strays),
            Query(relation, ["respondent"], values, duplicates=False, file="NULL",
                  weight="rr_w", rejected=rejected))


def _impossible(connection: Connection, checks: RowChecks,
                relation: str) -> dict[tuple[int, str], list[float]]:
    if not checks.numbers:
        return {}
    query = checks.select(relation)
    wanted = [(i, qid, m) for i, (qid, versions) in enumerate(checks.numbers) for m in versions]
    impossible: dict[tuple[int, str], list[float]] = {}
    for i, qid, m in wanted:
        rows = connection.fetch(f"SELECT DISTINCT rr_v{i} FROM ({query}) AS rr_q WHERE rr_m = {m} "
                                f"AND rr_v{i} IS NOT NULL")
        question = checks.catalog.versions[m].question(qid)
        assert question is not None and question.number_design is not None
        bad = sorted(float(r[0]) for r in rows
                     if question.number_design.impossible(float(r[0])) is not None)
        if bad:
            impossible[(m, qid)] = bad
    return impossible


def record(values: Mapping[str, Any]) -> dict[str, Any]:
    """A stored submission as the JSONL export writes it (groups apart, the design cell out)."""
    stored = json.loads(values["answers"])
    stored.pop(CELL_KEY, None)
    out: dict[str, Any] = {
        "survey": values["survey"], "version": values["version"],
        "respondent": values["respondent"], "submitted_at": values["submitted_at"],
        "answers": {k: v for k, v in stored.items() if not k.endswith(GROUP_SUFFIX)}}
    groups = {k[: -len(GROUP_SUFFIX)]: v for k, v in stored.items() if k.endswith(GROUP_SUFFIX)}
    if groups:
        out["groups"] = groups
    return out


def tally_database(dsn: str, survey: str, by: str | Sequence[str] | None = None,
                   manifests: list[dict[str, Any]] | None = None) -> Counted:
    """The tally of one survey's stored submissions, counted in the database."""
    import asyncpg

    label = shown_dsn(dsn)
    try:
        connection = Connection(dsn)
    except (TimeoutError, OSError, asyncpg.PostgresError) as error:
        raise RRSiteError(f"{label}: cannot connect: {error}") from error
    try:
        try:
            stored = [json.loads(r[0]) for r in connection.fetch(
                "SELECT manifest FROM manifests WHERE survey = $1 ORDER BY seq", survey)]
        except asyncpg.UndefinedTableError as error:
            raise RRSiteError(f"{label}: not a collector's database: {error}") from error
        if not stored and not manifests:
            known = sorted(r[0] for r in connection.fetch(
                "SELECT survey FROM manifests UNION SELECT survey FROM submissions"))
            raise RRSiteError(f"{label}: no survey {survey!r} in this database (surveys: "
                              f"{', '.join(known) or 'none'})")
        catalog = build_catalog([], [*stored, *(manifests or [])])
        reason = uncounted_reason(catalog)
        if reason is not None:
            raise UsageError(f"--db: {reason}; export the survey (rrsite export --db URL "
                             "--survey ID -o FILE.csv) and analyze the file")
        for question in parse_by(by):
            if not catalog.questions_named(question):
                raise RRSiteError(f"--by {question!r}: no such question in survey {survey!r}")
        sampled, distinct = connection.fetch(
            "SELECT COUNT(*), COUNT(DISTINCT answers) FROM (SELECT answers FROM submissions "
            "WHERE survey = $1 LIMIT $2) AS rr_sample", survey, SAMPLE_ROWS)[0]
        grouped = distinct <= GROUPED_SHARE * sampled
        if grouped:
            # The query's cost estimate (a million rows, for a few thousand groups) would have
            # the server compile it first (JIT), which takes longer than running it. (A server
            # without JIT, before PostgreSQL 11, has no such setting.)
            connection.fetch("SELECT set_config('jit', 'off', true) FROM pg_settings "
                             "WHERE name = 'jit'")
        fields, query = source(catalog, survey, grouped)
        checks = RowChecks(catalog, by, POSTGRES, fields)
        checks.impossible = _impossible(connection, checks, query.source)
        sql = Aggregate(checks, query).sql()
        try:
            rows = connection.fetch(sql)
        except asyncpg.PostgresError as error:
            raise RRSiteError(f"{label}: the count failed: {error}") from error
        results = [{c: ("" if r[i] is None else str(r[i])) for i, c in enumerate(COLUMNS)}
                   for r in rows]
        shown = [r for r in results if r["rejected"] and r["values"]]
        filling = Filling(catalog, by)
        for r in results:
            if r in shown:
                continue
            problem = filling.add(r)
            if problem:
                raise RRSiteError(f"{label}: {problem}")
        tally, info = filling.finish(label)
        info.format = "PostgreSQL"
        _show(connection, catalog, by, survey, label, shown, tally.rejections)
    finally:
        connection.close()
    return Counted(catalog, tally, info)


def _show(connection: Connection, catalog: Catalog, by: str | Sequence[str] | None, survey: str,
          label: str, rows: list[dict[str, str]], rejections: Rejections) -> None:
    """The rows shown per reason: their place in the export and their messages."""
    if not rows:
        return
    values = [json.loads(r["values"]) for r in rows]
    tokens = [v["respondent"] for v in values]
    counts = ", ".join(f"COUNT(*) FILTER (WHERE respondent <= ${i + 2})"
                       for i in range(len(tokens)))
    positions = connection.fetch(f"SELECT {counts} FROM submissions WHERE survey = $1",
                                 survey, *tokens)[0]
    describe = Shown(catalog, by)
    status_of = {reason: code for code, reason in REASON_OF.items()}
    for r, value, position in zip(rows, values, positions, strict=True):
        line = int(position)
        message = describe.record(label, line, record(value), status_of[r["rejected"]])
        rejections.set(r["rejected"], 0, [Example(label, line, message)])
