"""Keeping floods out without invitation codes: a per-address rate limit held only in memory.

The limiter is a token bucket per client address: `per_minute` submissions may arrive at once,
then one more every ``60 / per_minute`` seconds. Addresses are never stored, logged or kept in the
clear even in memory: each is replaced by a keyed hash (HMAC-SHA-256 under a random key drawn when
the process starts and never written anywhere), so the table in memory cannot be matched against a
list of addresses, and everything is gone when the process stops. Buckets that have refilled are
dropped, so the table holds only addresses seen in the last minute or so.

Behind a reverse proxy every request comes from the proxy's address: limit there instead (nginx
``limit_req``), see README "Keeping fake submissions out".
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time
from collections.abc import Callable

#: Above this many addresses in the table, refilled buckets are swept out.
SWEEP_AT = 10_000


class RateLimit:
    """Token buckets per (hashed) client address; `check(address)` -> seconds to wait or 0."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute < 1:
            raise ValueError(f"per_minute must be at least 1, got {per_minute}")
        self.capacity = float(per_minute)
        self.interval = 60.0 / per_minute  # seconds per token
        self._clock = clock
        self._key = secrets.token_bytes(32)
        self._buckets: dict[bytes, tuple[float, float]] = {}  # digest -> (tokens, time)

    def _digest(self, address: str) -> bytes:
        return hmac.new(self._key, address.encode("utf-8", "replace"), hashlib.sha256).digest()[:16]

    def check(self, address: str) -> int:
        """Take a token for this address: 0 if allowed, else whole seconds until one is free."""
        now = self._clock()
        if len(self._buckets) >= SWEEP_AT:
            self._sweep(now)
        digest = self._digest(address)
        tokens, then = self._buckets.get(digest, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - then) / self.interval)
        if tokens >= 1.0:
            self._buckets[digest] = (tokens - 1.0, now)
            return 0
        self._buckets[digest] = (tokens, now)
        return max(1, math.ceil((1.0 - tokens) * self.interval))

    def _sweep(self, now: float) -> None:
        full = [digest for digest, (tokens, then) in self._buckets.items()
                if tokens + (now - then) / self.interval >= self.capacity]
        for digest in full:
            del self._buckets[digest]

    def __len__(self) -> int:
        return len(self._buckets)
