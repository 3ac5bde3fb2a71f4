"""rrsite.collect: the collector server, its stores, invitation codes, the export of submissions.

``rrsite serve`` (rrsite.commands.serve) runs ``server`` (Starlette: the static site and the
submission API) over a store: SQLite (``store``) or PostgreSQL (``pgstore``), both behind
``storebase``'s contract (an acknowledged submission is never lost). Invitation codes and blind
invitations are kept so that nothing in a store orders the spent codes (``invitations/``: the
frame, blind keys and trades, PostgreSQL's spending pool); ``completion/`` keeps panels'
completion records; ``export`` writes the stored submissions as CSV or JSONL. Imports survey,
core, errors and spreadsheet only.
"""
