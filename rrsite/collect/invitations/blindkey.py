"""The collector's RSA keys for blind invitations (RFC 9474, RSABSSA-SHA384-PSS-Randomized).

One key per survey: a blind signature cannot say which survey it was asked for (the collector never
sees the message), so with one key for every survey a code of survey A would buy a token that
survey B accepts, spending none of B's codes. `rrsite invite --blind` makes a survey's key pair
(`cryptography`: 2048-bit RSA, e = 65537) the first time the survey goes blind and adds it to one
file, `--blind-key` (default ``rrsite-blind.pem`` in the folder the command runs in): PKCS#8 PEM
blocks, unencrypted, each after a line ``survey: ID``, in a file created with mode 0600 (owner
read/write only). A key once written is never changed: a new survey's key is added by writing the
old content and the new block to a new file (mode 0600, fsynced) that replaces the old one
atomically. 2048 bits: a token only has to resist forgery while the survey is open, and each
signature is a private-key operation in Python (benchmarks/blind.py; 3072 bits costs about 3
times as much). `rrsite serve --blind-key` reads it and refuses a file that others can read or
that lies inside the site folder (it would be served); `rrsite invite` refuses to write one
inside a built site. Every process of a PostgreSQL collector needs a copy of the same file.

Signing a blinded message is RSA's private operation on a number the client chose (RSASP1), which
`cryptography` does not offer without padding: it is done here with the key's private numbers
(CRT, and base blinding so its time does not depend on the input), and, as RFC 9474 (BlindSign
step 3-4) asks, the result is checked with the public key before it is returned. In Python that
operation holds the interpreter for about 14 ms, so the collector runs it in a worker process
(`SigningPool`), never on its event loop. Tokens are verified with `cryptography`'s RSASSA-PSS
(SHA-384, MGF1-SHA-384, salt 48 bytes).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from ...core.blind import SALT_LEN, VARIANT, BlindError, PublicKey, b64, int_to_bytes
from ...errors import RRSiteError

DEFAULT_PATH = "rrsite-blind.pem"
#: The first line of a key file.
FILE_HEADER = ("# rrsite blind invitations: one RSA private key per survey (RFC 9474). Keep this "
               "file private (mode 0600), backed up, and outside the site folder.\n")
#: A key's block: its survey's label line, then the PEM block.
BLOCK_RE = re.compile(r"(?:^survey: (?P<survey>\S+)\n)?"
                      r"(?P<pem>-----BEGIN PRIVATE KEY-----\n.*?\n-----END PRIVATE KEY-----\n?)",
                      re.MULTILINE | re.DOTALL)
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
        #: What `rsasp1` needs, picklable for the signing process: n, e, p, q, dP, dQ, qInv.
        self.numbers = (self.public.n, self.public.e, numbers.p, numbers.q, numbers.dmp1,
                        numbers.dmq1, numbers.iqmp)

    def pem(self) -> bytes:
        """The private key as an unencrypted PKCS#8 PEM block."""
        return self._private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption())

    def public_json(self) -> dict[str, Any]:
        """The body of `GET /api/blind-key`."""
        e = self.public.e
        return {"variant": VARIANT, "n": b64(int_to_bytes(self.public.n, self.public.size)),
                "e": b64(e.to_bytes((e.bit_length() + 7) // 8, "big")), "key_id": self.key_id}

    def blind_sign(self, blinded_msg: bytes) -> bytes:
        """BlindSign(sk, blinded_msg) of RFC 9474, here; BlindError for a wrong size or range."""
        return rsasp1(self.numbers, blinded_msg)

    def verify(self, prepared_msg: bytes, signature: bytes) -> bool:
        """RSASSA-PSS-VERIFY of a token (cryptography); True if the signature is this key's."""
        try:
            self._private_key.public_key().verify(signature, prepared_msg, self._pss,
                                                  hashes.SHA384())
        except InvalidSignature:
            return False
        return True


def rsasp1(numbers: tuple[int, int, int, int, int, int, int], blinded_msg: bytes) -> bytes:
    """BlindSign(sk, blinded_msg) of RFC 9474 with a key's numbers (n, e, p, q, dP, dQ, qInv).

    A module-level function so that `SigningPool`'s worker process can run it. BlindError for a
    wrong size or range, or if the result does not verify with the public key.
    """
    n, e, p, q, dmp1, dmq1, iqmp = numbers
    size = (n.bit_length() + 7) // 8
    if len(blinded_msg) != size:
        raise BlindError("unexpected input size")
    m = int.from_bytes(blinded_msg, "big")
    if m >= n:
        raise BlindError("message representative out of range")
    # base blinding: sign m * b^e, divide by b (the time of pow no longer follows m)
    b = secrets.randbelow(n - 2) + 2
    blinded = m * pow(b, e, n) % n
    s1 = pow(blinded, dmp1, p)
    s2 = pow(blinded, dmq1, q)
    signature = (s2 + q * (iqmp * (s1 - s2) % p)) * pow(b, -1, n) % n
    if pow(signature, e, n) != m:
        raise BlindError("signing failure")
    return int_to_bytes(signature, size)


class SigningPool:
    """Blind signatures computed away from the event loop, in a worker process.

    RSA's private operation in pure Python holds the interpreter's lock for its whole length
    (about 14 ms for 2048 bits): a thread would still stop the event loop, a process does not.
    The worker starts with the first signature (a fresh interpreter: "spawn"); `executor` replaces
    it (tests).
    """

    def __init__(self, executor: concurrent.futures.Executor | None = None) -> None:
        self._executor = executor
        self._own = executor is None

    async def sign(self, signer: BlindSigner, blinded_msg: bytes) -> bytes:
        """`signer`'s blind signature of `blinded_msg`; BlindError as `rsasp1`."""
        if self._executor is None:
            self._executor = concurrent.futures.ProcessPoolExecutor(
                1, mp_context=multiprocessing.get_context("spawn"))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, rsasp1, signer.numbers, blinded_msg)

    def close(self) -> None:
        """Stop the worker process (if this pool started it)."""
        if self._own and self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


@dataclass
class KeyRing:
    """The keys of one key file: each by its id, and the survey each was made for."""

    #: The file (None for keys held in memory only: tests, tools).
    path: Path | None
    signers: dict[str, BlindSigner] = field(default_factory=dict)
    #: survey -> key id, from the file's labels.
    labels: dict[str, str] = field(default_factory=dict)

    def signer(self, key_id: str) -> BlindSigner | None:
        """The key with this id, or None."""
        return self.signers.get(key_id)


def site_folder_of(path: Path) -> Path | None:
    """The built site folder (one with `_headers` or `_rr/`) that holds `path`, or None."""
    for folder in path.resolve().parents:
        if (folder / "_headers").is_file() or (folder / "_rr").is_dir():
            return folder
    return None


def _private_file(path: Path) -> bytes:
    """The bytes of a key file; BlindKeyError if missing or readable by group or others."""
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
    return data


def _signer_of(path: Path, pem: bytes) -> BlindSigner:
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as error:
        raise BlindKeyError(f"{path}: not an unencrypted PEM private key ({error})") from error
    if not isinstance(key, rsa.RSAPrivateKey) or key.key_size < 2048:
        raise BlindKeyError(f"{path}: not an RSA private key of at least 2048 bits")
    return BlindSigner(key)


def read_ring(path: Path) -> KeyRing:
    """Every key in a key file; BlindKeyError if missing, readable by others, or not RSA keys."""
    text = _private_file(path).decode("ascii", "replace")
    ring = KeyRing(path)
    for match in BLOCK_RE.finditer(text):
        signer = _signer_of(path, match["pem"].encode("ascii"))
        ring.signers[signer.key_id] = signer
        if match["survey"]:
            ring.labels[match["survey"]] = signer.key_id
    if not ring.signers:
        try:  # a PEM file in another form (an RSA PRIVATE KEY block, say): one key, no label
            signer = _signer_of(path, text.encode("ascii", "replace"))
        except BlindKeyError:
            raise BlindKeyError(f"{path}: no private key in the file") from None
        ring.signers[signer.key_id] = signer
    return ring


def _write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` as a new file of mode 0600, replacing it atomically if it exists."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise BlindKeyError(f"{path}: cannot write the key file: {error.strerror}") from error
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def add_key(path: Path, survey: str) -> BlindSigner:
    """A new key pair for `survey`, added to the key file `path` (made if missing, mode 0600).

    The keys already there are kept byte for byte; BlindKeyError if the file cannot be read or
    written, or is readable by others.
    """
    before = _private_file(path) if path.exists() else FILE_HEADER.encode("ascii")
    key = rsa.generate_private_key(public_exponent=PUBLIC_EXPONENT, key_size=KEY_BITS)
    signer = BlindSigner(key)
    if before and not before.endswith(b"\n"):
        before += b"\n"
    _write_private(path, before + f"survey: {survey}\n".encode("ascii") + signer.pem())
    return signer


def create_key(path: Path) -> BlindSigner:
    """A new key pair alone in a new file `path` (mode 0600); BlindKeyError if it exists."""
    if path.exists():
        raise BlindKeyError(f"{path}: exists already; it is not replaced")
    key = rsa.generate_private_key(public_exponent=PUBLIC_EXPONENT, key_size=KEY_BITS)
    signer = BlindSigner(key)
    _write_private(path, signer.pem())
    return signer


def load_key(path: Path) -> BlindSigner:
    """The first key in `path`; BlindKeyError if missing, readable by others, or not an RSA key."""
    return next(iter(read_ring(path).signers.values()))


def key_for_survey(path: Path, survey: str, recorded: str | None) -> tuple[BlindSigner, bool]:
    """The key of `survey` in the key file `path`, made and added first if it has none.

    `recorded`: the key id the database holds for the survey (None if it is not blind yet); that
    key must be in the file. (signer, made now); BlindKeyError if the file lacks the recorded key
    or cannot be written.
    """
    ring = read_ring(path) if path.exists() else KeyRing(path)
    if recorded is not None:
        signer = ring.signer(recorded)
        if signer is None:
            raise BlindKeyError(f"{path}: survey {survey!r} is signed by key {recorded}, which "
                                "is not in this file; give the key file it was made with")
        return signer, False
    return add_key(path, survey), True
