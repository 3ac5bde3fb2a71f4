"""rrsite.exports.sql: the tally computed by a SQL engine, where the data is.

``dialects`` spells the few functions engines differ in; ``checks`` writes the tally's checks
as SQL (each row's status, version, subgroup and report codes); ``codes`` reduces each row to
the few codes those checks need, so that they run once per distinct codes; ``files`` runs both
in DuckDB over CSV, JSONL and Parquet exports and counts in numpy; ``lines`` finds the rows shown as
rejected in their files; ``shown`` writes their messages with the tally's own checks;
``aggregate`` writes the whole tally as one SQL query whose result is a counts file (printed for
Spark SQL, BigQuery, Trino; run in PostgreSQL by ``postgres``); ``fill`` puts such counts into
a tally.
"""
