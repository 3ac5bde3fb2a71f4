"""rrsite.core.blind against RFC 9474's test vectors (Appendix A), in CPython and in Pyodide.

The vectors (tests/core/rfc9474_vectors.json) were copied as data from the RFC's appendix: every
intermediate value (prepared message, PSS encoding, blinded message, blind signature, signature)
is checked, for the variant rrsite uses (RSABSSA-SHA384-PSS-Randomized) and for the three others
(zero salt, no prefix), which exercise the same code with other parameters. The blind signature
itself is computed here as the textbook RSA private operation m^d mod n with the vector's d,
independently of rrsite's collector code (tests/collect/test_blind.py checks that one).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rrsite.core import blind as rb

VECTORS = json.loads((Path(__file__).parent / "rfc9474_vectors.json").read_text("utf-8"))["vectors"]
NAMES = [v["name"] for v in VECTORS]


def _h(text: str) -> bytes:
    return bytes.fromhex(text)


def _key(v: dict[str, str]) -> rb.PublicKey:
    return rb.PublicKey(int(v["n"], 16), int(v["e"], 16))


class _Fixed(random.Random):
    """A source that hands out given bytes: feeds the vector's prefix to `prepare`."""

    def __init__(self, data: bytes) -> None:
        super().__init__()
        self.data = data

    def randbytes(self, n: int) -> bytes:
        assert n == len(self.data)
        return self.data


def test_the_vectors_are_all_there() -> None:
    assert NAMES == ["RSABSSA-SHA384-PSS-Randomized", "RSABSSA-SHA384-PSSZERO-Randomized",
                     "RSABSSA-SHA384-PSS-Deterministic", "RSABSSA-SHA384-PSSZERO-Deterministic"]
    v = VECTORS[0]
    assert int(v["p"], 16) * int(v["q"], 16) == int(v["n"], 16)


@pytest.mark.parametrize("v", VECTORS, ids=NAMES)
def test_prepare(v: dict[str, str]) -> None:
    if not v["msg_prefix"]:
        assert v["prepared_msg"] == v["msg"]  # PrepareIdentity
        return
    prepared = rb.prepare(_h(v["msg"]), _Fixed(_h(v["msg_prefix"])))
    assert prepared == _h(v["prepared_msg"])
    assert len(prepared) == len(_h(v["msg"])) + 32


@pytest.mark.parametrize("v", VECTORS, ids=NAMES)
def test_pss_encoding(v: dict[str, str]) -> None:
    key = _key(v)
    encoded = rb.pss_encode(_h(v["prepared_msg"]), key.n.bit_length() - 1, _h(v["salt"]))
    assert encoded == _h(v["encoded_msg"])
    assert rb.pss_verify(_h(v["prepared_msg"]), encoded, key.n.bit_length() - 1, len(_h(v["salt"])))


@pytest.mark.parametrize("v", VECTORS, ids=NAMES)
def test_blind_sign_finalize(v: dict[str, str]) -> None:
    key = _key(v)
    n, d = key.n, int(v["d"], 16)
    inv = int(v["inv"], 16)
    r = pow(inv, -1, n)  # the vector gives the inverse of the blind
    blinded, got_inv = rb.blind(key, _h(v["prepared_msg"]), salt=_h(v["salt"]), r=r)
    assert blinded == _h(v["blinded_msg"])
    assert got_inv == inv
    blind_sig = pow(int.from_bytes(blinded, "big"), d, n).to_bytes(key.size, "big")
    assert blind_sig == _h(v["blind_sig"])
    sig = rb.finalize(key, _h(v["prepared_msg"]), blind_sig, inv, len(_h(v["salt"])))
    assert sig == _h(v["sig"])
    assert key.verify(_h(v["prepared_msg"]), sig, len(_h(v["salt"])))


def test_finalize_refuses_a_wrong_blind_signature() -> None:
    v = VECTORS[0]
    key = _key(v)
    bad = bytearray(_h(v["blind_sig"]))
    bad[-1] ^= 1
    with pytest.raises(rb.BlindError, match="invalid signature"):
        rb.finalize(key, _h(v["prepared_msg"]), bytes(bad), int(v["inv"], 16))
    with pytest.raises(rb.BlindError, match="unexpected input size"):
        rb.finalize(key, _h(v["prepared_msg"]), _h(v["blind_sig"])[1:], int(v["inv"], 16))
    # the right blind signature unblinded with another inverse does not verify either
    with pytest.raises(rb.BlindError, match="invalid signature"):
        rb.finalize(key, _h(v["prepared_msg"]), _h(v["blind_sig"]), int(v["inv"], 16) + 1)


def test_verify_refuses_another_message_or_salt_length() -> None:
    v = VECTORS[0]
    key = _key(v)
    sig = _h(v["sig"])
    assert key.verify(_h(v["prepared_msg"]), sig)
    assert not key.verify(_h(v["msg"]), sig)  # the prefix is part of what is signed
    assert not key.verify(_h(v["prepared_msg"]), sig, 0)
    assert not key.verify(_h(v["prepared_msg"]), sig[:-1])
    assert not key.verify(_h(v["prepared_msg"]), key.n.to_bytes(key.size, "big"))


def test_json_round_trip_with_fresh_randomness() -> None:
    """The worker's calls: blind a new token, sign it (m^d), finalize; each blinding is fresh."""
    v = VECTORS[0]
    key = _key(v)
    d = int(v["d"], 16)
    key_text = json.dumps({"variant": rb.VARIANT, "n": rb.b64(key.n.to_bytes(key.size, "big")),
                           "e": rb.b64(b"\x01\x00\x01")})
    first = json.loads(rb.blind_json(key_text, "honor-code"))
    second = json.loads(rb.blind_json(key_text, "honor-code"))
    assert first["key_id"] == key.key_id() and len(first["key_id"]) == 32
    assert first["msg"] != second["msg"] and first["blinded_msg"] != second["blinded_msg"]
    prepared = rb.unb64(first["msg"])
    assert prepared[32:].startswith(b"rrsite-token:honor-code:")
    assert len(rb.unb64(prepared[32:].split(b":")[2].decode())) == rb.NONCE_LEN
    blinded = int.from_bytes(rb.unb64(first["blinded_msg"]), "big")
    blind_sig = rb.b64(pow(blinded, d, key.n).to_bytes(key.size, "big"))
    token = json.loads(rb.finalize_json(key_text, first["msg"], blind_sig, first["inv"]))
    assert token["msg"] == first["msg"]
    assert key.verify(prepared, rb.unb64(token["sig"]))
    with pytest.raises(rb.BlindError):
        rb.finalize_json(key_text, second["msg"], blind_sig, second["inv"])


def test_blinded_message_is_uniform_over_draws() -> None:
    """The blinded message m * r^e mod n is a uniform residue when r is: over 1,000 blindings of
    one message its top two bits fall in 00, 01 and 10 as often as a uniform draw from [0, n)
    would (a bias would let the collector tell blinded values apart)."""
    v = VECTORS[0]
    key = _key(v)
    prepared = _h(v["prepared_msg"])
    draws = 1000
    shift = key.n.bit_length() - 2
    counts = [0, 0, 0, 0]
    for _ in range(draws):
        counts[int.from_bytes(rb.blind(key, prepared)[0], "big") >> shift] += 1
    quarter = 1 << shift
    expected = [quarter / key.n, quarter / key.n, (key.n - 2 * quarter) / key.n, 0.0]
    for count, p in zip(counts, expected, strict=True):
        sd = (p * (1 - p) / draws) ** 0.5
        assert abs(count / draws - p) <= 4.5 * sd + 1e-12, (counts, expected)


def test_public_key_checks() -> None:
    with pytest.raises(rb.BlindError):
        rb.PublicKey((1 << 1023) + 1, 65537)  # too small
    with pytest.raises(rb.BlindError):
        rb.key_from_json({"variant": "RSABSSA-SHA384-PSS-Deterministic", "n": "AQ", "e": "AQAB"})
    with pytest.raises(rb.BlindError):
        rb.unb64("not base64!")
