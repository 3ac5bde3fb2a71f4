"""SQLite's spending commits: made without SQLite's own flushes, answered only once durable.

A batch that may spend a code commits with ``synchronous = OFF``; the writer flushes the log
(header and frames at once), answers the batch's requests, and then empties the log before it
takes the next batch (rrsite/collect/store.py, `unflushed`). These tests would fail if an answer
came before the flush, if the log were not emptied before the next batch, if a batch lost or
doubled a spend, or if the store left the connection without its own flushes for the commits that
follow.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rrsite.collect import store as store_module
from rrsite.collect.store import BAD_CODE, STORED, USED_CODE, Store, code_hash


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the writer did, in order: 'flush' (an fdatasync of the log, by SQLite's checkpoint
    or by the store), 'empty' (the log emptied), 'answer' (a request answered)."""
    happened: list[str] = []
    empty_log = Store.empty_log
    flush_log = Store._flush_log
    wake = Store._wake

    def emptied(connection: sqlite3.Connection) -> bool:
        result = empty_log(connection)
        happened.append("empty" if result else "not-empty")
        return result

    def flushed(self: Store) -> bool:
        happened.append("flush")
        return flush_log(self)

    def answered(job: Any) -> None:
        happened.append("answer")
        wake(job)

    monkeypatch.setattr(Store, "empty_log", staticmethod(emptied))
    monkeypatch.setattr(Store, "_flush_log", flushed)
    monkeypatch.setattr(Store, "_wake", staticmethod(answered))
    return happened


def wait_for(events: list[str], count: int) -> None:
    """Wait (10 s at most) until the writer has done `count` things (the emptying of the log
    follows the answer)."""
    deadline = time.monotonic() + 10
    while len(events) < count and time.monotonic() < deadline:
        time.sleep(0.01)


def wait_for_empty_log(wal: Path) -> None:
    """Wait (10 s at most) until the writer has emptied the log; fail if it does not."""
    deadline = time.monotonic() + 10
    while wal.stat().st_size and time.monotonic() < deadline:
        time.sleep(0.01)
    assert wal.stat().st_size == 0


def writer_pragmas(store: Store) -> tuple[int, int]:
    """The writer connection's synchronous level and automatic checkpoint, read between batches."""
    connection = store._connection
    return (connection.execute("PRAGMA synchronous").fetchone()[0],
            connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0])


def test_a_spend_is_flushed_before_its_answer_and_emptied_before_the_next_batch(
        tmp_path: Path, kit: Any, events: list[str]) -> None:
    db = tmp_path / "c.db"
    store = Store(db)
    store.add_invitations("honor", ["C" * 16, "D" * 16])
    store.add_invitations("open", [])
    store.start()
    events.clear()  # the emptying at start-up
    try:
        assert store.submit_sync("honor", kit.VERSION, "t1", {"violated": "yes"},
                                 "C" * 16) == STORED
        assert events[:2] == ["flush", "answer"]  # durable before the answer
        # the log emptied before the writer takes another batch: this one
        assert store.submit_sync("honor", kit.VERSION, "t1", {"violated": "yes"},
                                 "C" * 16) == "duplicate"
        assert events[2:] == ["empty", "flush", "answer"]
        wait_for_empty_log(db.with_name("c.db-wal"))
        with sqlite3.connect(db) as reader:  # in the database file itself, the code spent
            assert reader.execute("SELECT used FROM invitations WHERE code_hash = ?",
                                  (code_hash("C" * 16),)).fetchone() == (1,)
            assert reader.execute("SELECT count(*) FROM submissions").fetchone() == (1,)
        events.clear()
        # a batch that carries a code but spends nothing (a code never issued) is flushed by
        # the store itself before it is answered
        assert store.submit_sync("honor", kit.VERSION, "t2", {"violated": "yes"},
                                 "E" * 16) == BAD_CODE
        assert events == ["flush", "answer"]  # nothing spent: no emptying
        events.clear()
        # a submission without a code: SQLite's own flushes again, no emptying
        assert store.submit_sync("open", kit.VERSION, "t3", {"violated": "no"}) == STORED
        assert events == ["answer"]
    finally:
        store.close()


def test_the_writer_keeps_its_own_flushes_between_spending_batches(tmp_path: Path,
                                                                   kit: Any) -> None:
    """After a spending batch the connection is back to ``synchronous = FULL`` with SQLite's
    automatic checkpoint (a commit without a code relies on both)."""
    db = tmp_path / "c.db"
    store = Store(db)
    store.add_invitations("honor", ["C" * 16])
    store.start()
    assert store.submit_sync("honor", kit.VERSION, "t1", {"violated": "yes"}, "C" * 16) == STORED
    store._queue.put(None)  # stop the writer, keep the connection
    assert store._thread is not None
    store._thread.join(timeout=30)
    assert writer_pragmas(store) == (2, store_module.AUTOCHECKPOINT)
    store._thread = None
    store.close()


def test_a_reader_holding_the_log_lets_a_later_batch_empty_it(
        tmp_path: Path, kit: Any, events: list[str]) -> None:
    """The checkpoint gives way to a reader on an older snapshot; the batch was flushed and
    answered before, the submission and the spend are there, and a later commit empties the log
    once the reader is gone."""
    db = tmp_path / "c.db"
    store = Store(db)
    store.add_invitations("honor", ["C" * 16])
    store.start()
    events.clear()  # the emptying at start-up
    reader = sqlite3.connect(db, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM submissions").fetchone()  # holds a snapshot
        assert store.submit_sync("honor", kit.VERSION, "t1", {"violated": "yes"},
                                 "C" * 16) == STORED
        wait_for(events, 3)
        assert events == ["flush", "answer", "not-empty"]
        assert store.log_holds_codes
        reader.execute("COMMIT")
        events.clear()
        assert store.submit_sync("honor", kit.VERSION, "t2", {"violated": "yes"},
                                 "D" * 16) == BAD_CODE
        wait_for(events, 3)
        assert events == ["flush", "answer", "empty"]  # the log held codes: emptied now
        assert not store.log_holds_codes
    finally:
        reader.close()
        store.close()
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM submissions").fetchone() == (1,)
        assert connection.execute("SELECT count(*) FROM invitations WHERE used = 1"
                                  ).fetchone() == (1,)


def test_a_failed_flush_answers_every_request_of_the_batch_unavailable(
        tmp_path: Path, kit: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "c.db"
    store = Store(db)
    store.add_invitations("honor", ["C" * 16])
    store.start()
    def fails(descriptor: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", fails)
    try:
        with pytest.raises(store_module.StoreUnavailable, match="could not be flushed"):
            store.submit_sync("honor", kit.VERSION, "t1", {"violated": "yes"}, "C" * 16)
        assert store.last_error is not None and "flushed" in store.last_error
    finally:
        monkeypatch.undo()
        store.close()


def test_concurrent_batches_spend_each_code_once_and_keep_every_answer(tmp_path: Path,
                                                                        kit: Any) -> None:
    """Many threads send 300 codes, each code twice (by two respondents) and some submissions
    twice: the batches hold both uses of a code, but each code is stored exactly once, every
    acknowledged submission is in the file, and the log is empty once the writer is idle."""
    db = tmp_path / "c.db"
    codes = [f"code-{i:04d}-{kit.token()[:6]}" for i in range(300)]
    store = Store(db, max_batch=64)
    store.add_invitations("honor", codes)
    store.start()
    rng = random.Random(7)
    sends = [(code, kit.token()) for code in codes for _ in range(2)]
    rng.shuffle(sends)
    resends = rng.sample(range(len(sends)), 50)
    sends += [sends[i] for i in resends]
    outcomes: dict[tuple[str, str], list[str]] = {}
    lock = threading.Lock()
    pending = iter(sends)

    def worker() -> None:
        while True:
            with lock:
                item = next(pending, None)
            if item is None:
                return
            code, respondent = item
            outcome = store.submit_sync("honor", kit.VERSION, respondent,
                                        {"violated": "yes"}, code)
            with lock:
                outcomes.setdefault(item, []).append(outcome)

    threads = [threading.Thread(target=worker) for _ in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    batches = store.commits
    store.close()
    stored = {item for item, seen in outcomes.items() if STORED in seen}
    assert batches < len(sends)  # some batches held several requests
    for code in codes:  # each code stored by exactly one of its two respondents
        winners = [item for item in stored if item[0] == code]
        assert len(winners) == 1
        losers = [item for item in outcomes if item[0] == code and item not in stored]
        assert all(seen == [USED_CODE] * len(seen) for item in losers
                   for seen in [outcomes[item]])
    for item in stored:  # a resend of a stored submission is a duplicate, never a second row
        assert sorted(outcomes[item]) == sorted([STORED] + ["duplicate"] * (
            len(outcomes[item]) - 1))
    with sqlite3.connect(db) as connection:
        rows = set(connection.execute("SELECT respondent FROM submissions"))
        assert rows == {(respondent,) for _, respondent in stored}
        assert connection.execute("SELECT count(*) FROM invitations WHERE used = 1"
                                  ).fetchone() == (len(codes),)
    assert not db.with_name("c.db-wal").exists() or db.with_name("c.db-wal").stat().st_size == 0
