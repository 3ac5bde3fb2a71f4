"""Reading every export into a tally: one thread checks a block while the next is parsed."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from .catalog import Catalog
from .progress import Progress
from .readers import Batch, FileInfo, read_export
from .rejections import Rejections
from .tally import Checked, Tally

#: Blocks read ahead of the one being committed (bounds memory: a few blocks of 4 MB).
PIPELINE = 3


def read_into(
    paths: list[str | Path], catalog: Catalog, column_map: dict[str, str],
    rejections: Rejections, tally: Tally, files: list[FileInfo], block_size: int,
    bar: Progress, threads: int | None, extra: Sequence[str] = (),
) -> None:
    """Read every file, check its blocks and commit them in order.

    With two threads a worker checks one block (numpy releases the GIL) while the main thread
    parses the next; at most PIPELINE blocks are in flight.
    """
    if threads is None:
        threads = 2 if (os.cpu_count() or 1) > 1 else 1
    rejections.files.extend(str(path) for path in paths)

    def batches() -> Iterator[Batch]:
        for path in paths:
            info = FileInfo(str(path), "?")
            files.append(info)
            yield from read_export(path, catalog, column_map, rejections, info, block_size,
                                   bar.advance, extra)

    if threads <= 1:
        for batch in batches():
            tally.commit(tally.check(batch))
        return
    with ThreadPoolExecutor(max_workers=threads - 1) as pool:
        pending: deque[Future[Checked]] = deque()
        for batch in batches():
            pending.append(pool.submit(tally.check, batch))
            while len(pending) >= PIPELINE or (pending and pending[0].done()):
                tally.commit(pending.popleft().result())
        while pending:
            tally.commit(pending.popleft().result())
