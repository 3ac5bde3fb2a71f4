"""A progress bar on stderr for long runs (only on a terminal, only after a second)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

#: The bar appears only once a run has taken this long.
DELAY = 1.0
#: Redraw at most this often.
INTERVAL = 0.2
WIDTH = 30


class Progress:
    """Bytes read out of a known total; call ``advance`` per block and ``close`` at the end."""

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool | None = None,
                 label: str = "reading") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = max(total, 1)
        self.done = 0
        self.label = label
        self.started = time.monotonic()
        self.drawn = 0.0
        self.shown = False

    def advance(self, amount: int) -> None:
        """Count ``amount`` more bytes; redraw if due."""
        self.done += amount
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < DELAY or now - self.drawn < INTERVAL:
            return
        self.drawn = now
        fraction = min(self.done / self.total, 1.0)
        filled = int(fraction * WIDTH)
        rate = self.done / max(now - self.started, 1e-9) / 1e6
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] {fraction:4.0%} "
            f"{self.done / 1e6:,.0f} MB  {rate:,.0f} MB/s"
        )
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        """Erase the bar."""
        if self.shown:
            self.stream.write("\r" + " " * (WIDTH + 50) + "\r")
            self.stream.flush()
            self.shown = False
