"""Column values of a batch of rows, with the few vectorised questions the validator asks.

Two implementations behind one interface:

- ``ByteColumn``: fields as (start, end) offsets into a block of raw CSV bytes that holds no
  quote character (the common case for rrsite exports). Values are never turned into Python
  strings: they are gathered into fixed-width byte arrays with numpy and matched against the
  allowed values with a binary search. This is what makes large exports fast.
- ``ListColumn``: Python values (strings from the csv module, any JSON value from JSONL).

Both answer: ``codes`` (index of each value in a vocabulary; -2 empty, -1 not in it), ``numbers``,
``char_lengths``, ``objects``, ``tokens`` (respondent tokens: a 64-bit hash, validity, emptiness),
``empty`` and ``raw`` (one value as text, for messages). The token hash is the same function of
the token's bytes in both, so rows read either way are compared with each other.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from itertools import repeat
from typing import Any

import numpy as np

#: Respondent tokens (docs/contracts.md): 22 to 64 characters of [A-Za-z0-9_-].
TOKEN_MIN, TOKEN_MAX = 22, 64
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{22,64}")
#: JSON-style numbers only: no "nan", "inf", "1_000" or surrounding spaces.
NUMBER_PATTERN = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
#: Bytes of padding after a block so that an 8-byte read at any field start stays inside.
PADDING = 72
NUMBER_WIDTH = 32
#: Vocabularies up to this size are matched by comparing words directly, larger ones by search.
SMALL_VOCAB = 24

_TOKEN_BYTE = np.zeros(256, dtype=bool)
for _char in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-":
    _TOKEN_BYTE[_char] = True
#: Blocks read with numpy hold no NUL byte, so a zero byte in a gathered word is padding.
_TOKEN_BYTE_OR_PADDING = _TOKEN_BYTE.copy()
_TOKEN_BYTE_OR_PADDING[0] = True
_CONTINUATION_BYTE = np.zeros(256, dtype=bool)
_CONTINUATION_BYTE[0x80:0xC0] = True
#: MASKS[r] keeps the r low-order bytes of a little-endian 64-bit word.
MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


def hash_words(words: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash of byte strings given as zero-padded little-endian words (n x w) and lengths.

    Word j is folded in (a multiply and an xor-shift, splitmix64's finaliser) only where the
    string is longer than 8 j bytes, so the hash does not depend on how many padding words the
    caller gathered: equal strings hash equally whichever reader produced them. Not
    cryptographic: two different tokens share a hash with probability about 2^-64 per pair.
    """
    h = lengths.astype(np.uint64) * _M1
    for j in range(words.shape[1]):
        mixed = (h ^ words[:, j]) * _M2
        mixed ^= mixed >> np.uint64(31)
        h = np.where(lengths > 8 * j, mixed, h)
    h ^= h >> np.uint64(30)
    h *= _M3
    h ^= h >> np.uint64(27)
    return h


class Vocab:
    """Allowed values of a field, for matching.

    A dict for Python values, and sorted fixed-width byte strings for raw bytes.
    """

    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(words)
        self.lookup: dict[Any, int] = {word: index for index, word in enumerate(self.words)}
        self.lookup[""] = -2
        self.lookup[None] = -2
        encoded = [word.encode("utf-8") for word in self.words]
        self.max_bytes = max((len(e) for e in encoded), default=0)
        self.width = max(8, -(-self.max_bytes // 8) * 8)
        array = np.array(encoded or [b""], dtype=f"S{self.width}")
        order = np.argsort(array, kind="stable")
        self.sorted = array[order]
        self.sorted_codes = order.astype(np.int32) if encoded else np.array([-1], dtype=np.int32)
        self.lengths = [len(e) for e in encoded]
        self.words8 = [
            np.frombuffer(e.ljust(self.width, b"\0"), dtype="<u8") for e in encoded
        ]

    def __len__(self) -> int:
        return len(self.words)


class Block:
    """A block of raw CSV bytes (complete lines, no quote and no NUL characters) and views."""

    def __init__(self, data: bytes) -> None:
        self.data = data + b"\0" * PADDING
        self.array = np.frombuffer(self.data, dtype=np.uint8)
        # an unaligned view: element p is the little-endian 64-bit word starting at byte p
        self.words = np.ndarray(
            shape=(len(self.data) - 7,), dtype="<u8", buffer=self.data, offset=0, strides=(1,)
        )
        self._continuation: np.ndarray | None = None

    def continuation_bytes(self) -> np.ndarray:
        """Running count of UTF-8 continuation bytes (to count characters without decoding)."""
        if self._continuation is None:
            counts = np.zeros(len(self.array) + 1, dtype=np.int64)
            np.cumsum(_CONTINUATION_BYTE[self.array], out=counts[1:])
            self._continuation = counts
        return self._continuation


class ByteColumn:
    """One field of every row of a Block: byte offsets [start, end)."""

    def __init__(self, block: Block, starts: np.ndarray, ends: np.ndarray,
                 lengths: np.ndarray | None = None) -> None:
        self.block = block
        self.starts = starts
        self.ends = ends
        self.lengths = ends - starts if lengths is None else lengths

    def __len__(self) -> int:
        return len(self.starts)

    def raw(self, index: int) -> str:
        """One value as text."""
        data = self.block.data[self.starts[index]:self.ends[index]]
        return data.decode("utf-8", errors="replace")

    def empty(self) -> np.ndarray:
        """Rows whose cell is empty."""
        empty: np.ndarray = self.lengths == 0
        return empty

    def gather(self, width: int) -> np.ndarray:
        """The first ``width`` bytes (a multiple of 8) of each value as zero-padded words."""
        count = width // 8
        if count == 1:
            word: np.ndarray = self.block.words[self.starts] & MASKS[np.minimum(self.lengths, 8)]
            return word[:, None]
        offsets = np.arange(0, width, 8)
        words = self.block.words[self.starts[:, None] + offsets]
        remaining = self.lengths[:, None] - offsets
        np.maximum(remaining, 0, out=remaining)
        np.minimum(remaining, 8, out=remaining)
        words &= MASKS[remaining]
        return words

    def fixed(self, width: int) -> np.ndarray:
        """The values as a numpy bytes array of the given width (longer values are cut)."""
        return self.gather(width).view(f"S{width}").ravel()

    def codes(self, vocab: Vocab) -> np.ndarray:
        """Index in ``vocab`` of each value; -2 for an empty cell, -1 for a value not in it."""
        if len(vocab) <= SMALL_VOCAB:  # compare 64-bit words with each allowed value
            words = self.gather(vocab.width)
            codes = np.full(len(self), -1, dtype=np.int32)
            for code, (length, value) in enumerate(zip(vocab.lengths, vocab.words8,
                                                       strict=True)):
                hit = self.lengths == length
                for j in range(len(value)):
                    hit &= words[:, j] == value[j]
                codes[hit] = code
        else:
            values = self.fixed(vocab.width)
            position = np.searchsorted(vocab.sorted, values)
            np.minimum(position, len(vocab.sorted) - 1, out=position)
            hit = (vocab.sorted[position] == values) & (self.lengths <= vocab.max_bytes)
            codes = np.where(hit, vocab.sorted_codes[position], np.int32(-1)).astype(np.int32)
        codes[self.lengths == 0] = -2
        return codes

    def numbers(self) -> tuple[np.ndarray, np.ndarray]:
        """(value, empty): NaN where the cell is not a number."""
        if len(self) == 0:
            return np.zeros(0), np.zeros(0, dtype=bool)
        if int(self.lengths.max()) <= 8:  # short numbers: sort 64-bit words, not strings
            words = self.gather(8).ravel()
            unique, inverse = np.unique(words, return_inverse=True)
            texts = unique.view("S8")
        else:
            values = self.fixed(NUMBER_WIDTH)
            texts, inverse = np.unique(values, return_inverse=True)
        parsed = np.array([parse_number(t.decode("utf-8", errors="replace")) for t in texts])
        result = parsed[inverse.ravel()]
        result[self.lengths > NUMBER_WIDTH] = np.nan
        empty = self.lengths == 0
        return result, empty

    def char_lengths(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(characters, empty, is text) per cell, counting UTF-8 characters without decoding."""
        continuation = self.block.continuation_bytes()
        chars = self.lengths - (continuation[self.ends] - continuation[self.starts])
        empty = self.lengths == 0
        return chars, empty, np.ones(len(self), dtype=bool)

    def objects(self) -> list[Any]:
        """Every value as a Python string (None when empty)."""
        data = self.block.data
        return [
            data[s:e].decode("utf-8", errors="replace") if e > s else None
            for s, e in zip(self.starts.tolist(), self.ends.tolist(), strict=True)
        ]

    def tokens(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(hash, valid, empty) of respondent tokens."""
        lengths = np.minimum(self.lengths, TOKEN_MAX)
        longest = int(lengths.max()) if len(self) else 0
        width = max(8, -(-longest // 8) * 8)  # only the words some token reaches
        words = self.gather(width)
        characters = words.view(np.uint8).reshape(len(self), width)
        clean = np.all(_TOKEN_BYTE_OR_PADDING[characters], axis=1)
        valid = (self.lengths >= TOKEN_MIN) & (self.lengths <= TOKEN_MAX) & clean
        return hash_words(words, lengths), valid, self.lengths == 0


def parse_number(text: str) -> float:
    """A JSON-style number, or NaN."""
    if not NUMBER_PATTERN.fullmatch(text):
        return math.nan
    value = float(text)
    return value if math.isfinite(value) else math.nan


class ListColumn:
    """One field of every row as Python values: strings from CSV, any JSON value from JSONL."""

    def __init__(self, values: list[Any], from_json: bool = False) -> None:
        self.values = values
        self.from_json = from_json

    def __len__(self) -> int:
        return len(self.values)

    def raw(self, index: int) -> str:
        """One value as text (JSON text for JSON values that are not strings)."""
        value = self.values[index]
        if isinstance(value, str):
            return value
        return json.dumps(value)

    def empty(self) -> np.ndarray:
        """Rows without a value (None or the empty string)."""
        return np.fromiter(
            (value is None or value == "" for value in self.values), dtype=bool,
            count=len(self.values),
        )

    def codes(self, vocab: Vocab) -> np.ndarray:
        """Index in ``vocab`` of each value; -2 for no value, -1 for anything else."""
        try:
            found = list(map(vocab.lookup.get, self.values, repeat(-1)))
            # bools and numbers equal to nothing in the lookup stay -1; only str keys exist
        except TypeError:  # an unhashable JSON value (list, object)
            found = [
                vocab.lookup.get(value, -1) if isinstance(value, str | None) else -1
                for value in self.values
            ]
        return np.array(found, dtype=np.int32)

    def numbers(self) -> tuple[np.ndarray, np.ndarray]:
        """(value, empty): NaN for anything that is not a number (JSON: a JSON number)."""
        values = np.empty(len(self.values))
        empty = np.zeros(len(self.values), dtype=bool)
        cache: dict[str, float] = {}
        for index, value in enumerate(self.values):
            if value is None or value == "":
                empty[index] = True
                values[index] = math.nan
            elif isinstance(value, str):
                if self.from_json or len(value) > NUMBER_WIDTH:  # as ByteColumn reads them
                    values[index] = math.nan
                else:
                    number = cache.get(value)
                    if number is None:
                        number = cache[value] = parse_number(value)
                    values[index] = number
            elif isinstance(value, int | float) and not isinstance(value, bool):
                values[index] = float(value) if math.isfinite(value) else math.nan
            else:
                values[index] = math.nan
        return values, empty

    def char_lengths(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(characters, empty, is text) per value."""
        count = len(self.values)
        chars = np.zeros(count, dtype=np.int64)
        empty = np.zeros(count, dtype=bool)
        text = np.ones(count, dtype=bool)
        for index, value in enumerate(self.values):
            if value is None or value == "":
                empty[index] = True
            elif isinstance(value, str):
                chars[index] = len(value)
            else:
                text[index] = False
        return chars, empty, text

    def objects(self) -> list[Any]:
        """The values themselves ("" becomes None)."""
        return [None if value == "" else value for value in self.values]

    def tokens(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(hash, valid, empty) of respondent tokens, hashed exactly as ByteColumn does."""
        count = len(self.values)
        valid = np.zeros(count, dtype=bool)
        empty = np.zeros(count, dtype=bool)
        lengths = np.zeros(count, dtype=np.int64)
        padded = []
        for index, value in enumerate(self.values):
            if value is None or value == "":
                empty[index] = True
                padded.append(b"")
                continue
            if isinstance(value, str):
                data = value.encode("utf-8", errors="replace")
                valid[index] = TOKEN_PATTERN.fullmatch(value) is not None
                lengths[index] = min(len(data), TOKEN_MAX)
                padded.append(data[:TOKEN_MAX])
            else:
                padded.append(b"")
        buffer = b"".join(p.ljust(TOKEN_MAX, b"\0") for p in padded)
        words = np.frombuffer(buffer, dtype="<u8").reshape(count, TOKEN_MAX // 8)
        return hash_words(words, lengths), valid, empty


Column = ByteColumn | ListColumn
