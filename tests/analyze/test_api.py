"""The Python API for notebooks, and the streaming pieces (token set, progress bar)."""

import builtins
import io

import numpy as np
import pytest

import rrsite.analyze as package
from rrsite.analyze import Analysis, analyze
from rrsite.errors import RRSiteError
from rrsite.exports.columns import Block, ByteColumn, ListColumn, Vocab
from rrsite.exports.progress import Progress
from rrsite.exports.tally import TokenSet

from .helpers import manifest, row, token, write_csv, write_manifest


@pytest.fixture
def result(tmp_path):
    path = write_manifest(tmp_path / "survey.json", manifest())
    export = write_csv(tmp_path / "export.csv",
                       [row(i, violated="yes" if i % 2 else "no",
                            year=["First", "Second"][i % 2]) for i in range(200)])
    return analyze(export, manifests=[manifest()], by="year") if path else None


def test_objects(result):
    assert isinstance(result, Analysis)
    violated = result.question("violated")
    assert violated.kind == "binary" and violated.estimate.n == 200
    assert violated.estimate.unbiased[0] == pytest.approx((0.5 - 0.25) / 0.5)
    assert set(violated.groups) == {"First", "Second", "Third or later"}
    assert violated.groups["First"].counts == {"no": 100, "yes": 0}
    assert violated.groups["Third or later"].empty  # an answer nobody gave: shown, n = 0
    assert result.to_dict()["questions"][0]["id"] == "violated"
    with pytest.raises(KeyError):
        result.question("nope")


def test_to_pandas(result):
    import pandas  # in the test extra

    frame = result.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    violated = frame[(frame.question == "violated") & (frame.group == "all")]
    assert violated.estimate.iloc[0] == pytest.approx(0.5)
    assert set(frame[frame.question == "major"].value) == {"arts", "science", "law"}
    assert set(frame.group) == {"all", "First", "Second", "Third or later"}


def test_to_pandas_without_pandas(result, monkeypatch):
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="pip install pandas"):
        result.to_pandas()


def test_errors_are_rrsite_errors(tmp_path):
    with pytest.raises(RRSiteError, match="no designs"):
        analyze([tmp_path / "x.csv"])
    with pytest.raises(RRSiteError, match="--interval"):
        analyze([tmp_path / "x.csv"], manifests=[manifest()], interval="bayes")
    with pytest.raises(AttributeError):
        package.nothing  # noqa: B018


def test_token_set_finds_repeats_in_order():
    tokens = TokenSet()
    rng = np.random.default_rng(1)
    seen: set[int] = set()
    for _ in range(40):
        batch = rng.integers(0, 5000, 300).astype(np.uint64)
        repeated = tokens.add(batch)
        expected = []
        for value in batch.tolist():
            expected.append(value in seen)
            seen.add(value)
        assert repeated.tolist() == expected
    assert len(tokens) == len(seen)
    assert len(tokens.runs) <= 8  # merged like a log-structured tree
    assert tokens.nbytes == 8 * len(seen)


def test_token_set_with_full_width_hashes():
    # realistic hashes (all 64 bits used) so the Bloom filter's probes spread out; repeats of
    # earlier batches and within a batch are found, fresh ones are not
    rng = np.random.default_rng(2)
    tokens = TokenSet()
    seen: list[np.ndarray] = []
    for index in range(30):
        batch = rng.integers(0, 2**64 - 1, 20_000, dtype=np.uint64, endpoint=True)
        expected = np.zeros(len(batch), dtype=bool)
        if seen:
            old = np.concatenate(seen)
            picks = rng.choice(len(old), 50, replace=False)
            places = rng.choice(len(batch), 50, replace=False)
            batch[places] = old[picks]
            expected[places] = True
        batch[7], expected[7] = batch[3], True  # the same token twice in one batch
        assert tokens.add(batch).tolist() == expected.tolist(), index
        seen.append(batch[~expected])
    assert len(tokens) == sum(len(s) for s in seen)


def test_byte_and_list_columns_agree():
    values = ["yes", "no", "", "maybe", "yes ", "Yes", "y" * 40, "no"]
    data = ("\n".join(values) + "\n").encode()
    block = Block(data)
    starts, ends, position = [], [], 0
    for value in values:
        starts.append(position)
        ends.append(position + len(value.encode()))
        position += len(value.encode()) + 1
    byte = ByteColumn(block, np.array(starts), np.array(ends))
    listed = ListColumn(values)
    vocab = Vocab(["no", "yes"])
    assert byte.codes(vocab).tolist() == listed.codes(vocab).tolist() == [1, 0, -2, -1, -1, -1,
                                                                          -1, 0]
    large = Vocab([f"option {i}" for i in range(40)])  # searched, not compared one by one
    assert byte.codes(large).tolist() == [-1, -1, -2, -1, -1, -1, -1, -1]
    tokens = [token(1), token(2), "", "bad token!" + "x" * 20, "é" * 22, token(1)]
    data = ("\n".join(tokens) + "\n").encode()
    starts, ends, position = [], [], 0
    for value in tokens:
        starts.append(position)
        ends.append(position + len(value.encode()))
        position += len(value.encode()) + 1
    byte = ByteColumn(Block(data), np.array(starts), np.array(ends))
    b_hash, b_valid, b_empty = byte.tokens()
    l_hash, l_valid, l_empty = ListColumn(tokens).tokens()
    assert b_valid.tolist() == l_valid.tolist() == [True, True, False, False, False, True]
    assert b_empty.tolist() == l_empty.tolist()
    assert b_hash[[0, 1, 5]].tolist() == l_hash[[0, 1, 5]].tolist()
    assert b_hash[0] == b_hash[5] != b_hash[1]
    numbers = ["12", "-3.5", "1e3", "", "nan", "1_000", " 4", "0x10"]
    data = ("\n".join(numbers) + "\n").encode()
    starts, ends, position = [], [], 0
    for value in numbers:
        starts.append(position)
        ends.append(position + len(value))
        position += len(value) + 1
    parsed, empty = ByteColumn(Block(data), np.array(starts), np.array(ends)).numbers()
    listed, listed_empty = ListColumn(numbers).numbers()
    assert np.array_equal(parsed, listed, equal_nan=True)
    assert parsed[:3].tolist() == [12.0, -3.5, 1000.0] and np.isnan(parsed[4:]).all()
    assert empty.tolist() == listed_empty.tolist()


def test_progress_bar_only_on_terminals_and_long_runs(monkeypatch):
    stream = io.StringIO()
    bar = Progress(1000, stream=stream)  # StringIO is not a terminal
    bar.advance(500)
    assert stream.getvalue() == ""
    clock = iter([0.0, 0.5, 2.0, 2.1, 3.0, 3.0])
    monkeypatch.setattr("rrsite.exports.progress.time.monotonic", lambda: next(clock))
    bar = Progress(1000, stream=stream, enabled=True)
    bar.advance(100)  # too early
    assert stream.getvalue() == ""
    bar.advance(400)
    assert "50%" in stream.getvalue()
    bar.close()
    assert stream.getvalue().endswith("\r")
