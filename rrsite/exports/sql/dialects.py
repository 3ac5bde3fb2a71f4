"""What differs between the SQL engines the tally runs on: quoting, regular expressions, casts.

rrsite's checks are written once (``checks``) in the SQL every engine shares (CASE, IN,
COALESCE, ``length``, comparisons); the few things engines spell differently are the methods of
a ``Dialect``. DuckDB and PostgreSQL run in rrsite's tests; Spark SQL, BigQuery and Trino are
printed for the researcher to run (their text is parsed by sqlglot in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The largest finite double: a number beyond it is refused, as Python's float() makes it inf.
DOUBLE_MAX = "1.7976931348623157e308"


@dataclass(frozen=True)
class Dialect:
    """One engine's spelling of the few functions the checks need."""

    name: str
    #: Quote character of identifiers.
    ident_quote: str = '"'

    def ident(self, name: str) -> str:
        """A column or table name, quoted (``a.group`` stays one name)."""
        q = self.ident_quote
        return q + name.replace(q, q + q) + q

    def text(self, value: str) -> str:
        """A string literal."""
        escaped = value.replace("'", "''")
        if self.name in ("spark", "bigquery"):
            escaped = escaped.replace("\\", "\\\\")
        return f"'{escaped}'"

    def full_match(self, expr: str, pattern: str) -> str:
        """``expr`` matches the regular expression ``pattern`` from start to end."""
        anchored = self.text(f"^(?:{pattern})$")
        if self.name == "duckdb":
            return f"regexp_full_match({expr}, {self.text(pattern)})"
        if self.name == "postgres":
            return f"({expr} ~ {anchored})"
        if self.name == "spark":
            return f"({expr} RLIKE {anchored})"
        if self.name == "bigquery":
            return f"REGEXP_CONTAINS({expr}, {anchored})"
        return f"regexp_like({expr}, {anchored})"  # trino

    def double(self, expr: str) -> str:
        """The text of a JSON number as a double, NULL when it is not finite (``1e400``)."""
        if self.name == "duckdb":
            value = f"TRY_CAST({expr} AS DOUBLE)"
            return f"(CASE WHEN isfinite({value}) THEN {value} END)"
        if self.name == "postgres":
            # float8 refuses out-of-range text with an error: compare as numeric first
            number = f"CAST({expr} AS numeric)"
            return (f"(CASE WHEN abs({number}) > {DOUBLE_MAX} THEN NULL "
                    f"WHEN abs({number}) < 2.2250738585072014e-308 THEN CAST(0 AS float8) "
                    f"ELSE CAST({number} AS float8) END)")
        if self.name == "bigquery":
            value = f"SAFE_CAST({expr} AS FLOAT64)"
            return f"(CASE WHEN ABS({value}) <= {DOUBLE_MAX} THEN {value} END)"
        kind = "DOUBLE"
        value = f"TRY_CAST({expr} AS {kind})"
        return f"(CASE WHEN ABS({value}) <= {DOUBLE_MAX} THEN {value} END)"

    def length(self, expr: str) -> str:
        """Characters (code points) of a string."""
        return f"LENGTH({expr})" if self.name != "postgres" else f"char_length({expr})"

    def occurrences_at_most_one(self, expr: str, needle: str) -> str:
        """``needle`` occurs at most once in ``expr`` (plain text, no pattern)."""
        removed = "REPLACE(" + expr + ", " + self.text(needle) + ", '')"
        return f"({self.length(expr)} - {self.length(removed)} <= {len(needle)})"

    def double_literal(self, value: float) -> str:
        """A double constant, exactly (its shortest round-trip text, cast)."""
        kind = {"postgres": "float8", "bigquery": "FLOAT64"}.get(self.name, "DOUBLE")
        return f"CAST({self.text(repr(value))} AS {kind})"

    def fence(self) -> str:
        """What keeps a subquery's columns computed once.

        PostgreSQL would inline a column into every expression that reads it: the answers'
        JSON would be parsed once per use.
        """
        return " OFFSET 0" if self.name == "postgres" else ""

    def integer(self) -> str:
        """The type of small whole numbers."""
        return {"bigquery": "INT64", "postgres": "integer"}.get(self.name, "INTEGER")

    def json_object(self, pairs: list[tuple[str, str]]) -> str:
        """A JSON object's text from (key, text expression) pairs (NULL values as null)."""
        alternating = ", ".join(f"{self.text(k)}, {v}" for k, v in pairs)  # key, value, ...
        if self.name == "duckdb":
            return f"CAST(json_object({alternating}) AS VARCHAR)"
        if self.name == "postgres":
            return f"CAST(json_build_object({alternating}) AS text)"
        if self.name == "spark":
            return f"to_json(map({alternating}))"
        if self.name == "bigquery":
            inner = ", ".join(f"{v} AS {self.ident(k)}" for k, v in pairs)
            return f"TO_JSON_STRING(STRUCT({inner}))"
        keys = ", ".join(self.text(k) for k, _ in pairs)
        values = ", ".join(f"CAST({v} AS VARCHAR)" for _, v in pairs)
        return f"json_format(CAST(MAP(ARRAY[{keys}], ARRAY[{values}]) AS JSON))"


DUCKDB = Dialect("duckdb")
POSTGRES = Dialect("postgres")
SPARK = Dialect("spark", "`")
BIGQUERY = Dialect("bigquery", "`")
TRINO = Dialect("trino")
#: Every dialect rrsite can print, by name (``rrsite analyze --sql NAME``).
DIALECTS = {d.name: d for d in (DUCKDB, POSTGRES, SPARK, BIGQUERY, TRINO)}
