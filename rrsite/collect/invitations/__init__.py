"""Invitation codes and blind invitations: issued, traded and spent without a trail.

``frame`` plans the codes of an invitation frame (one row per invitee) and writes the cells;
``blindkey`` holds each survey's RSA key for blind signatures (RFC 9474) and signs in a worker
process; ``blindapi`` is the collector's trade endpoint and the check of a submission's token;
``blindstore`` keeps blind surveys, traded codes and redeemed tokens on both stores; ``pgspend``
is PostgreSQL's batch writer of submissions with a code or token, spending through a pool that
nothing orders finer than ``MIX`` entries (docs/explanation/threat-model.md). The stores
(``..store``, ``..pgstore``) import these; nothing here imports a store or the server.
"""
