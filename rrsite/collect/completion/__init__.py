"""The completion record of an online panel: who completed, kept apart from what they answered.

A panel survey with ``record: true`` sends, beside the answers, the SHA-256 of the participant's
panel id (made on the device; the id itself never leaves it). ``record`` keeps those digests per
survey as one sorted set, rewritten whole at each addition, with nothing that orders them or links
one to a submission (the same technique as spent invitation codes); ``ids`` matches a panel's list
of participant ids against the set (`rrsite completions`).
"""
