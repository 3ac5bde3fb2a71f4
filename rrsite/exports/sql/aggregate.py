"""The whole tally as one SQL query, whose result is a counts file that `--counts` reads back.

For exports that outgrow one machine: rrsite prints the query (``rrsite analyze --sql
DIALECT``), the researcher runs it where the rows are (Spark SQL, BigQuery, Trino, DuckDB,
PostgreSQL), saves the result as CSV and runs ``rrsite analyze --counts RESULT.csv``. The
PostgreSQL path (``rrsite analyze --db``) runs the same query in the collector's database.

The input is a table with the export's columns (text) and two that place each row: ``file``
and ``row`` (rows are taken in that order: the first row with a token is kept, the first five of
each reason are shown). The result has the counts file's columns (rrsite.exports.counts):

- per question, version, group, report and subgroup: how many accepted rows reported it
  (``report`` empty: how many did not answer); a randomized number's ``report`` is the number;
- per version (``question`` empty): how many rows were accepted;
- per rejection reason (``rejected``): how many rows were rejected for it, and its first five
  rows with ``file``, ``row`` and ``values`` (the row's fields as a JSON object), which rrsite
  reads again to say what is wrong with each.

Rows are checked as rrsite.exports.sql.checks writes it. Duplicate tokens are found with a
window (``ROW_NUMBER() OVER (PARTITION BY token ORDER BY file, row)``), which every engine
distributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..catalog import GROUP_SUFFIX, Catalog
from .checks import DUPLICATE, OK, REASON_OF, RowChecks, Source, text_field
from .dialects import Dialect

#: The columns of the result (and of a counts file).
COLUMNS = ("question", "version", "group", "report", "subgroup", "count", "rejected", "file",
           "row", "values")


@dataclass
class Query:
    """What the aggregate needs besides the checks: the order of the rows and what a row shows."""

    #: SQL of the relation of rows (with the columns ``checks`` reads and those below).
    source: str
    #: Columns that order the rows (the first is also shown as the row's file).
    order: Sequence[str]
    #: (key, SQL) of each field a shown row carries in ``values``.
    values: Sequence[tuple[str, str]]
    #: Whether duplicate tokens are looked for (the collector's table cannot hold any).
    duplicates: bool = True
    #: The value of ``file`` for every row (else the first ``order`` column).
    file: str | None = None
    #: A column of ``source`` holding how many rows each of its rows stands for (a source of
    #: rows grouped by what the checks read; counts then sum it). None: each row is one row.
    weight: str | None = None
    #: SQL of the rejected rows the first five of each reason are shown from, each with its
    #: ``rr_status`` and the columns ``order`` and ``values`` read (None: ``source``'s own
    #: rejected rows; a grouped source names the rows each rejected group stands for).
    rejected: str | None = None


def export_columns(catalog: Catalog) -> list[str]:
    """The columns of rrsite's CSV and Parquet exports of this survey (without submitted_at)."""
    columns = ["survey", "version", "respondent"]
    grouped = set(catalog.grouped_ids())
    for qid in catalog.question_ids():
        columns.append(qid)
        if qid in grouped:
            columns.append(qid + GROUP_SUFFIX)
    return columns


def table_source(catalog: Catalog, dialect: Dialect, table: str) -> tuple[Source, Query]:
    """A table with the export's columns and ``file`` and ``row``, as a source and query."""
    columns = export_columns(catalog)
    fields = {name: text_field(dialect.ident(name), dialect) for name in columns}
    query = Query(f"SELECT * FROM {table}", [dialect.ident("file"), dialect.ident("row")],
                  [(name, dialect.ident(name)) for name in columns])
    return Source(fields), query


class Aggregate:
    """Writes the query for one catalog, ``--by`` and source."""

    def __init__(self, checks: RowChecks, query: Query) -> None:
        self.checks = checks
        self.query = query
        self.d = checks.d
        self.catalog = checks.catalog

    def _string(self) -> str:
        return {"spark": "STRING", "bigquery": "STRING", "postgres": "text"}.get(
            self.d.name, "VARCHAR")

    def _row(self, **values: str) -> str:
        """One SELECT list of the result's columns (NULL where not given)."""
        integer = {"bigquery": "INT64", "postgres": "bigint"}.get(self.d.name, "BIGINT")
        parts = []
        for column in COLUMNS:
            kind = integer if column in ("count", "row") else self._string()
            parts.append(f"CAST({values.get(column, 'NULL')} AS {kind}) AS "
                         f"{self.d.ident(column)}")
        return ", ".join(parts)

    def _count(self) -> str:
        """The rows a group of the source's rows stands for."""
        return "COUNT(*)" if self.query.weight is None else f"SUM({self.query.weight})"

    def _case(self, expr: str, labels: Sequence[tuple[int, str]]) -> str:
        if not labels:
            return "''"
        whens = " ".join(f"WHEN {expr} = {code} THEN {self.d.text(text)}" for code, text in labels)
        return f"(CASE {whens} END)"

    def _version(self, expr: str) -> str:
        return self._case(expr, list(enumerate(self.catalog.version_ids)))

    def _subgroup_labels(self) -> list[tuple[int, str]]:
        """(cell, what the counts file's ``subgroup`` says of it).

        With one --by question its answer (none for "(no answer)": an empty ``subgroup``), with
        several the cell's name (rrsite.exports.subgroups).
        """
        subgroups = self.checks.subgroups
        if not subgroups.questions:
            return []
        if len(subgroups.questions) == 1:
            return list(enumerate(subgroups.levels[0][:-1]))
        return list(enumerate(subgroups.names))

    def _subgroup(self, expr: str) -> str:
        return self._case(expr, self._subgroup_labels())

    def _counts(self, i: int) -> str:
        """One choice question's counts: per slot, decoded into version, report, group, ..."""
        keys = self.checks.counted[i]
        groups = self.checks.groups
        versions, reports, designs, subgroups = [], [], [], []
        cells = dict(self._subgroup_labels())
        for m, (start, k, d) in keys.blocks.items():
            question = self.catalog.versions[m].question(keys.qid)
            assert question is not None
            labels = [*question.answers, ""]
            for local in range(k + 1):
                for which in range(d):
                    for g in range(groups):
                        slot = 1 + start + (local * d + which) * groups + g
                        versions.append((slot, self.catalog.versions[m].version))
                        reports.append((slot, labels[local]))
                        designs.append((slot, str(which + 1) if question.two_group
                                        and local < k else ""))
                        if g in cells:
                            subgroups.append((slot, cells[g]))
        key = f"rr_k{i}"
        inner = (f"SELECT {key}, {self._count()} AS rr_n FROM rr_ranked WHERE rr_status = {OK} "
                 f"AND {key} > 0 GROUP BY {key}")
        subgroup = self._case(key, subgroups) if subgroups else "''"
        row = self._row(question=self.d.text(keys.qid), version=self._case(key, versions),
                        group=self._case(key, designs), report=self._case(key, reports),
                        subgroup=f"COALESCE({subgroup}, '')", count="rr_n")
        return f"SELECT {row} FROM ({inner}) AS rr_c{i}"

    def _numbers(self, i: int, qid: str) -> str:
        group = f"(CASE WHEN rr_d{i} > 0 THEN CAST(rr_d{i} AS {self._string()}) ELSE '' END)"
        inner = (f"SELECT rr_m, rr_v{i}, rr_d{i}, rr_g, {self._count()} AS rr_n FROM rr_ranked "
                 f"WHERE rr_status = {OK} AND rr_v{i} IS NOT NULL GROUP BY rr_m, rr_v{i}, "
                 f"rr_d{i}, rr_g")
        subgroup = self._subgroup("rr_g")
        row = self._row(question=self.d.text(qid), version=self._version("rr_m"), group=group,
                        report=f"rr_v{i}", subgroup=f"COALESCE({subgroup}, '')", count="rr_n")
        return f"SELECT {row} FROM ({inner}) AS rr_n{i}"

    def _reason(self, expr: str) -> str:
        return self._case(expr, [(code, reason) for code, reason in REASON_OF.items()])

    def sql(self) -> str:
        """The query."""
        q = self.query
        rows = self.checks.select(q.source, number_text=True, keep_all=True)
        order = ", ".join(q.order)
        if q.duplicates and q.weight is not None:
            raise ValueError("duplicate tokens cannot be found among grouped rows")
        if q.duplicates and self.checks.token() is not None:
            status = (f"CASE WHEN rr_st = {OK} AND ROW_NUMBER() OVER (PARTITION BY rr_tok, rr_st "
                      f"ORDER BY {order}) > 1 THEN {DUPLICATE} ELSE rr_st END")
        else:
            status = "rr_st"
        accepted = self._row(question="''", version=self._version("rr_m"), count="rr_n")
        parts = [
            f"SELECT {accepted} FROM (SELECT rr_m, {self._count()} AS rr_n FROM rr_ranked WHERE "
            f"rr_status = {OK} GROUP BY rr_m) AS rr_accepted",
        ]
        parts += [self._counts(i) for i in range(len(self.checks.counted))]
        parts += [self._numbers(i, qid) for i, (qid, _) in enumerate(self.checks.numbers)]
        parts.append(
            f"SELECT {self._row(rejected=self._reason('rr_status'), count='rr_n')} FROM "
            f"(SELECT rr_status, {self._count()} AS rr_n FROM rr_ranked WHERE rr_status <> {OK} "
            "GROUP BY rr_status) AS rr_rejected")
        values = self.d.json_object([(k, v) for k, v in q.values])
        shown_file = q.file if q.file is not None else q.order[0]
        shown_row = q.order[1] if q.file is None and len(q.order) > 1 else "NULL"
        shown = self._row(rejected=self._reason("rr_status"), file=shown_file, row=shown_row,
                          values=values)
        rejected = q.rejected or f"SELECT * FROM rr_ranked WHERE rr_status <> {OK}"
        parts.append(
            f"SELECT {shown} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY rr_status "
            f"ORDER BY {order}) AS rr_rank FROM ({rejected}) AS rr_rejected_rows) AS rr_first "
            "WHERE rr_rank <= 5")
        union = "\nUNION ALL\n".join(parts)
        return (f"WITH rr_rows AS ({rows}),\nrr_ranked AS (SELECT *, {status} AS rr_status "
                f"FROM rr_rows)\n{union}")
