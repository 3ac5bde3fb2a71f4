"""The collector's RSA key for blind invitations (RFC 9474, RSABSSA-SHA384-PSS-Randomized).

The key pair is made by `rrsite invite --blind` (`cryptography`: 2048-bit RSA, e = 65537) and kept
in one file, `--blind-key` (default ``rrsite-blind.pem`` in the folder the command runs in):
PKCS#8 PEM, unencrypted, created with mode 0600 (owner read/write only) and never overwritten.
2048 bits: a token only has to resist forgery while the survey is open, and each signature is a
private-key operation in Python (benchmarks/blind.py; 3072 bits costs about 3 times as much).
`rrsite serve --blind-key` reads it and refuses a file that others can read. Every process of a
PostgreSQL collector needs a copy of the same file.

Signing a blinded message is RSA's private operation on a number the client chose (RSASP1), which
`cryptography` does not offer without padding: it is done here with the key's private numbers
(CRT, and base blinding so its time does not depend on the input), and, as RFC 9474 (BlindSign
step 3-4) asks, the result is checked with the public key before it is returned. Tokens are
verified with `cryptography`'s RSASSA-PSS (SHA-384, MGF1-SHA-384, salt 48 bytes).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from ..core.blind import SALT_LEN, VARIANT, BlindError, PublicKey, b64, int_to_bytes
from ..errors import RRSiteError

DEFAULT_PATH = "rrsite-blind.pem"
KEY_BITS = 2048
PUBLIC_EXPONENT = 65537


class BlindKeyError(RRSiteError):
    """The key file cannot be made or used (path and reason)."""


class BlindSigner:
    """The collector's private key: its public half, blind signing, token verification."""

    def __init__(self, private_key: rsa.RSAPrivateKey) -> None:
        numbers = private_key.private_numbers()
        self._private_key = private_key
        self._numbers = numbers
        self.public = PublicKey(numbers.public_numbers.n, numbers.public_numbers.e)
        self.key_id = self.public.key_id()
        self._pss = padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=SALT_LEN)

    def public_json(self) -> dict[str, Any]:
        """The body of `GET /api/blind-key`."""
        e = self.public.e
        return {"variant": VARIANT, "n": b64(int_to_bytes(self.public.n, self.public.size)),
                "e": b64(e.to_bytes((e.bit_length() + 7) // 8, "big")), "key_id": self.key_id}

    def blind_sign(self, blinded_msg: bytes) -> bytes:
        """BlindSign(sk, blinded_msg) of RFC 9474; BlindError for a wrong size or range."""
        key = self.public
        if len(blinded_msg) != key.size:
            raise BlindError("unexpected input size")
        m = int.from_bytes(blinded_msg, "big")
        if m >= key.n:
            raise BlindError("message representative out of range")
        p, q = self._numbers.p, self._numbers.q
        # base blinding: sign m * b^e, divide by b (the time of pow no longer follows m)
        b = secrets.randbelow(key.n - 2) + 2
        blinded = m * pow(b, key.e, key.n) % key.n
        s1 = pow(blinded, self._numbers.dmp1, p)
        s2 = pow(blinded, self._numbers.dmq1, q)
        s = (s2 + q * (self._numbers.iqmp * (s1 - s2) % p)) * pow(b, -1, key.n) % key.n
        if pow(s, key.e, key.n) != m:
            raise BlindError("signing failure")
        return int_to_bytes(s, key.size)

    def verify(self, prepared_msg: bytes, signature: bytes) -> bool:
        """RSASSA-PSS-VERIFY of a token (cryptography); True if the signature is this key's."""
        try:
            self._private_key.public_key().verify(signature, prepared_msg, self._pss,
                                                  hashes.SHA384())
        except InvalidSignature:
            return False
        return True


def create_key(path: Path) -> BlindSigner:
    """A new key pair written to `path` (mode 0600, never overwriting); BlindKeyError if not."""
    key = rsa.generate_private_key(public_exponent=PUBLIC_EXPONENT, key_size=KEY_BITS)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise BlindKeyError(f"{path}: exists already; it is not replaced") from None
    except OSError as error:
        raise BlindKeyError(f"{path}: cannot create the key file: {error.strerror}") from error
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
        handle.flush()
        os.fsync(handle.fileno())
    return BlindSigner(key)


def load_key(path: Path) -> BlindSigner:
    """The key in `path`; BlindKeyError if missing, readable by others, or not an RSA key."""
    try:
        info = path.stat()
        data = path.read_bytes()
    except FileNotFoundError:
        raise BlindKeyError(f"{path}: no such key file (`rrsite invite --blind` makes "
                            "it)") from None
    except OSError as error:
        raise BlindKeyError(f"{path}: cannot read the key file: {error.strerror}") from error
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise BlindKeyError(f"{path}: group or others may read the private key (mode "
                            f"{stat.S_IMODE(info.st_mode):o}); run: chmod 600 {path}")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as error:
        raise BlindKeyError(f"{path}: not an unencrypted PEM private key ({error})") from error
    if not isinstance(key, rsa.RSAPrivateKey) or key.key_size < 2048:
        raise BlindKeyError(f"{path}: not an RSA private key of at least 2048 bits")
    return BlindSigner(key)


def load_or_create(path: Path) -> tuple[BlindSigner, bool]:
    """The key in `path`, made first if the file does not exist; (signer, made now)."""
    if path.exists():
        return load_key(path), False
    return create_key(path), True
