"""RSA blind signatures (RFC 9474, variant RSABSSA-SHA384-PSS-Randomized): the respondent's side.

With blind invitations the page trades its invitation code for a token the collector signs without
seeing it: `prepare` adds a random 32-byte prefix to a fresh message, `blind` PSS-encodes it
(SHA-384, MGF1-SHA-384, 48-byte salt) and multiplies it by r^e for a random r, the collector signs
the blinded value (rrsite/collect/invitations/blindkey.py), and `finalize` divides r out and checks
the signature. The collector later sees (message, signature) and cannot tell which blinded value it
came from. Randomness: random.SystemRandom (os.urandom, crypto.getRandomValues in a browser). Pure
standard library: this runs in Pyodide. `salt_len` and an empty prefix exist only so the RFC's other
variants' test vectors can be checked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
from math import gcd

VARIANT = "RSABSSA-SHA384-PSS-Randomized"
HASH_LEN = 48
SALT_LEN = 48
PREFIX_LEN = 32
#: Random bytes in a token's message (after "rrsite-token:<survey>:").
NONCE_LEN = 32


class BlindError(ValueError):
    """A blinding step failed (the RFC's error names: "invalid input", "invalid signature", ...)."""


def _sha384(data: bytes) -> bytes:
    return hashlib.sha384(data).digest()


def int_to_bytes(value: int, length: int) -> bytes:
    """I2OSP: big-endian, exactly `length` bytes; BlindError if it does not fit."""
    if value < 0 or value >= 1 << (8 * length):
        raise BlindError("integer too large")
    return value.to_bytes(length, "big")


def bytes_to_int(data: bytes) -> int:
    """OS2IP: a big-endian byte string as an integer."""
    return int.from_bytes(data, "big")


def mgf1(seed: bytes, length: int) -> bytes:
    """MGF1 with SHA-384 (RFC 8017, B.2.1)."""
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += _sha384(seed + counter.to_bytes(4, "big"))
        counter += 1
    return bytes(out[:length])


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def pss_encode(message: bytes, em_bits: int, salt: bytes) -> bytes:
    """EMSA-PSS-ENCODE (RFC 8017, 9.1.1) with SHA-384 and MGF1-SHA-384."""
    em_len = (em_bits + 7) // 8
    if em_len < HASH_LEN + len(salt) + 2:
        raise BlindError("encoding error")
    digest = _sha384(bytes(8) + _sha384(message) + salt)
    db = bytes(em_len - len(salt) - HASH_LEN - 2) + b"\x01" + salt
    masked = bytearray(_xor(db, mgf1(digest, em_len - HASH_LEN - 1)))
    masked[0] &= 0xFF >> (8 * em_len - em_bits)
    return bytes(masked) + digest + b"\xbc"


def pss_verify(message: bytes, encoded: bytes, em_bits: int, salt_len: int = SALT_LEN) -> bool:
    """EMSA-PSS-VERIFY (RFC 8017, 9.1.2): True if `encoded` is a PSS encoding of `message`."""
    em_len = (em_bits + 7) // 8
    if len(encoded) != em_len or em_len < HASH_LEN + salt_len + 2 or encoded[-1] != 0xBC:
        return False
    masked, digest = encoded[:em_len - HASH_LEN - 1], encoded[em_len - HASH_LEN - 1:-1]
    top = 0xFF >> (8 * em_len - em_bits)
    if masked[0] & ~top & 0xFF:
        return False
    db = bytearray(_xor(masked, mgf1(digest, len(masked))))
    db[0] &= top
    zeros = em_len - HASH_LEN - salt_len - 2
    if any(db[:zeros]) or db[zeros] != 1:
        return False
    salt = bytes(db[len(db) - salt_len:]) if salt_len else b""
    return _sha384(bytes(8) + _sha384(message) + salt) == digest


class PublicKey:
    """The collector's RSA public key (n, e)."""

    def __init__(self, n: int, e: int) -> None:
        if n < 1 << 2047 or n % 2 == 0 or e < 3 or e % 2 == 0 or e >= n:
            raise BlindError("invalid input: not an RSA public key of at least 2048 bits")
        self.n = n
        self.e = e
        self.size = (n.bit_length() + 7) // 8

    def key_id(self) -> str:
        """16 bytes of SHA-256 over n and e, hex: what `rrsite invite` puts in the links."""
        e_bytes = self.e.to_bytes((self.e.bit_length() + 7) // 8, "big")
        data = b"rrsite-blind-key\n" + int_to_bytes(self.n, self.size) + b"\n" + e_bytes
        return hashlib.sha256(data).hexdigest()[:32]

    def verify(self, message: bytes, signature: bytes, salt_len: int = SALT_LEN) -> bool:
        """RSASSA-PSS-VERIFY of a prepared message (RFC 8017, 8.1.2)."""
        if len(signature) != self.size:
            return False
        s = bytes_to_int(signature)
        if s >= self.n:
            return False
        em_bits = self.n.bit_length() - 1
        m = pow(s, self.e, self.n)
        if m >= 1 << (8 * ((em_bits + 7) // 8)):
            return False
        return pss_verify(message, int_to_bytes(m, (em_bits + 7) // 8), em_bits, salt_len)


def prepare(msg: bytes, rng: random.Random | None = None) -> bytes:
    """PrepareRandomize: a fresh 32-byte random prefix, then `msg`."""
    return (rng or random.SystemRandom()).randbytes(PREFIX_LEN) + msg


def blind(key: PublicKey, prepared: bytes, rng: random.Random | None = None, *,
          salt: bytes | None = None, r: int | None = None) -> tuple[bytes, int]:
    """Blind(pk, msg): (blinded_msg, inv). `salt` and `r` are drawn unless given (test vectors)."""
    source = rng or random.SystemRandom()
    if salt is None:
        salt = source.randbytes(SALT_LEN)
    m = bytes_to_int(pss_encode(prepared, key.n.bit_length() - 1, salt))
    if gcd(m, key.n) != 1:
        raise BlindError("invalid input")
    if r is None:
        r = source.randrange(1, key.n)  # uniform in [1, n), by rejection sampling
    try:
        inv = pow(r, -1, key.n)
    except ValueError:
        raise BlindError("blinding error") from None
    return int_to_bytes(m * pow(r, key.e, key.n) % key.n, key.size), inv


def finalize(key: PublicKey, prepared: bytes, blind_sig: bytes, inv: int,
             salt_len: int = SALT_LEN) -> bytes:
    """Finalize: unblind the collector's answer and verify it; the signature, or BlindError."""
    if len(blind_sig) != key.size:
        raise BlindError("unexpected input size")
    z = bytes_to_int(blind_sig)
    if z >= key.n:
        raise BlindError("invalid signature")
    signature = int_to_bytes(z * inv % key.n, key.size)
    if not key.verify(prepared, signature, salt_len):
        raise BlindError("invalid signature")
    return signature


# ---- what the page's worker calls (JSON in, JSON out) --------------------------------------

def b64(data: bytes) -> str:
    """base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    """The bytes of base64url text with or without padding; BlindError if it is not base64url."""
    if not isinstance(text, str) or not text.isascii():
        raise BlindError("not base64url text")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        raise BlindError("not base64url text") from None


def key_from_json(key: dict[str, object]) -> PublicKey:
    """The public key of `GET /api/blind-key`'s body; BlindError if it is not one."""
    n, e = key.get("n"), key.get("e")
    if key.get("variant") != VARIANT or not isinstance(n, str) or not isinstance(e, str):
        raise BlindError(f"not a {VARIANT} public key")
    return PublicKey(bytes_to_int(unb64(n)), bytes_to_int(unb64(e)))


def token_message(survey: str, rng: random.Random | None = None) -> bytes:
    """A new token's message: ``rrsite-token:<survey>:`` and 32 random bytes (base64url)."""
    nonce = (rng or random.SystemRandom()).randbytes(NONCE_LEN)
    return f"rrsite-token:{survey}:{b64(nonce)}".encode()


def blind_json(key_text: str, survey: str) -> str:
    """A new token blinded for the key: JSON {key_id, msg (prepared), blinded_msg, inv (hex)}."""
    key = key_from_json(json.loads(key_text))
    prepared = prepare(token_message(survey))
    blinded, inv = blind(key, prepared)
    return json.dumps({"key_id": key.key_id(), "msg": b64(prepared), "blinded_msg": b64(blinded),
                       "inv": format(inv, "x")})


def finalize_json(key_text: str, msg: str, blind_sig: str, inv: str) -> str:
    """The token {msg, sig} (JSON) from the collector's blind signature; BlindError if invalid."""
    key = key_from_json(json.loads(key_text))
    signature = finalize(key, unb64(msg), unb64(blind_sig), int(inv, 16))
    return json.dumps({"msg": msg, "sig": b64(signature)})
