"""rrsite.exports: reading and validating exports and report counts.

``readers`` reads CSV, JSONL and Parquet exports in blocks (rrsite's, Netlify's, any CSV with a
column mapping, its separator sniffed); ``columns`` holds a block's values; ``catalog`` the
survey's versions (from survey files and manifests); ``tally`` checks every row against its
version and counts it, per subgroup (``subgroups``: the cells of one or several crossed --by
questions); rejected rows are counted with their file:row (``rejections``); ``rows`` keeps the
accepted rows a model needs (and the records of a converted export); ``counts`` reads a counts
CSV; ``pipeline`` reads exports into a tally with two threads; ``sql/`` computes the same tally
with a SQL engine (DuckDB over files, PostgreSQL in place, a query printed for any engine).
Imports survey, core, errors and spreadsheet only (and DuckDB, asyncpg): no estimation, no
rendering.
"""
