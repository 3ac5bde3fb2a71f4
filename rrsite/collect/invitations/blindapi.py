"""The collector's endpoints for blind invitations and the check of a submission's `token`.

`GET /api/blind-key?survey=ID`, `POST /api/blind-sign` (docs/explanation/blind-tokens.md).

The page trades its invitation code for a blind signature when the survey opens; its submission
later carries only the unblinded token `{"msg", "sig"}` (base64url). The code is spent in the
trade (its own transaction), the token with the submission: the collector sees a code spent at
one moment and a token it cannot relate to any code redeemed at another. Each survey has its own
key (blindkey.py), so a token is worth something in its own survey only. The signature is computed
in a worker process (blindkey.SigningPool), never on the event loop, and one code's trades are
limited (`TRADES_PER_MINUTE`): replaying an identical trade cannot keep the collector busy. A
malformed token is a 400, never a 500. Nothing about the request but its body is read, as in
rrsite/collect/server.py (the client address only with `--rate-limit`).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from ...core.blind import BlindError, b64, unb64
from ..edge import RateLimit
from ..manifests import INVITATION_RE, SURVEY_ID_RE, SubmissionError
from ..storebase import BAD_CODE, USED_CODE, StoreUnavailable, code_hash
from .blindkey import BlindKeyError, BlindSigner, KeyRing, SigningPool, read_ring
from .blindstore import (
    BAD_TOKEN,
    BLIND_ONLY,
    NOT_BLIND,
    SIGN,
    USED_TOKEN,
    exchange,
    sha256,
    survey_keys,
    survey_keys_now,
)

#: 403 answers of a submission (field "token" or "invitation"), beside the code's own.
TOKEN_ERRORS = {
    USED_TOKEN: "this token has already been used: each invitation accepts one set of answers",
    BAD_TOKEN: "this survey does not take blind tokens; open the link you were sent",
    BLIND_ONLY: "this survey trades invitation codes for blind tokens when it opens; reload the "
                "page from the link you were sent",
}
#: Largest body of a trade (a 4096-bit blinded message is 683 characters of base64url).
MAX_SIGN_BODY = 4096
SIGN_FIELDS = ("survey", "invitation", "blinded_msg")
#: Trades of one code (identical resends included) answered a minute at most: a burst of this
#: many, then one every 60 / TRADES_PER_MINUTE seconds (429 + Retry-After beyond).
TRADES_PER_MINUTE = 3
#: Seconds between two readings of the database's blind surveys for a survey not known yet.
REFRESH_EVERY = 1.0
B64URL_RE = re.compile(r"[A-Za-z0-9_-]+={0,2}")
API_HEADERS = {"cache-control": "no-store"}


def _error(status: int, error: str, field: str | None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": error, "field": field}, status_code=status,
                        headers={**API_HEADERS, **(headers or {})})


class BlindKeys:
    """The collector's blind keys: the key file's keys, and which one signs which survey.

    Which key signs which survey is the database's `blind_surveys`, read at start and again (at
    most once a second) when a survey is not known yet; the key file is read again when a
    survey's key is not in it (`rrsite invite --blind` added it while the collector ran).
    BlindKeyError at start if two surveys share one key (a token of one would be accepted by the
    other).
    """

    def __init__(self, keys: KeyRing | BlindSigner, store: Any) -> None:
        if isinstance(keys, BlindSigner):  # one key, from no file (tests, tools)
            keys = KeyRing(path=None, signers={keys.key_id: keys})
        self.ring = keys
        self.store = store
        self.surveys = survey_keys_now(store)
        self._read_at = time.monotonic()
        self._lock = asyncio.Lock()
        shared: dict[str, list[str]] = {}
        for survey, key_id in self.surveys.items():
            shared.setdefault(key_id, []).append(survey)
        for key_id, surveys in shared.items():
            if len(surveys) > 1:
                raise BlindKeyError(
                    f"surveys {', '.join(sorted(surveys))} are signed by one key ({key_id}): a "
                    "token traded for a code of one would be accepted by the others; each "
                    "survey needs its own key (run `rrsite invite --blind` with a database "
                    "where the survey is not blind yet)")

    def missing(self) -> list[str]:
        """The blind surveys whose key the key file does not hold (said at start)."""
        return sorted(survey for survey, key_id in self.surveys.items()
                      if self.ring.signer(key_id) is None)

    async def signer_for(self, survey: str) -> BlindSigner | None:
        """The key of a blind survey; None if the survey is not blind.

        StoreUnavailable if the database cannot be read, or if the key file lacks the survey's
        key (the collector then answers 503).
        """
        key_id = self.surveys.get(survey)
        if key_id is None and time.monotonic() - self._read_at >= REFRESH_EVERY:
            async with self._lock:
                self._read_at = time.monotonic()
                self.surveys = await survey_keys(self.store)
            key_id = self.surveys.get(survey)
        if key_id is None:
            return None
        signer = self.ring.signer(key_id)
        if signer is None and self.ring.path is not None:
            try:
                self.ring = await asyncio.to_thread(read_ring, self.ring.path)
            except BlindKeyError:
                pass
            signer = self.ring.signer(key_id)
        if signer is None:
            raise StoreUnavailable(f"the collector does not hold the key of survey {survey!r}; "
                                   "its operator must restart it with the key file")
        return signer


async def token_hash(keys: BlindKeys | None, survey: str, data: dict[str, Any]) -> str | None:
    """The SHA-256 of a submission's verified token, None without one; SubmissionError if bad.

    A token is `{"msg": <prepared message>, "sig": <signature>}`, both base64url; its message
    (after the 32-byte random prefix) is ``rrsite-token:<survey>:<nonce>`` for this survey, and
    its signature verifies with this survey's key (RSASSA-PSS, SHA-384, salt 48 bytes). A token
    that is not even that shape (not base64url, a message too short) is a 400.
    StoreUnavailable if the survey's key cannot be looked up.
    """
    token = data.get("token")
    if token is None:
        return None
    if "invitation" in data:
        raise SubmissionError("send either 'invitation' or 'token', not both", "token", 400)
    shape = SubmissionError("'token' must be {\"msg\": ..., \"sig\": ...}, both base64url",
                            "token", 400)
    if not (isinstance(token, dict) and set(token) == {"msg", "sig"}
            and all(isinstance(v, str) and B64URL_RE.fullmatch(v) and len(v) <= 1024
                    for v in token.values())):
        raise shape
    try:
        msg, sig = unb64(token["msg"]), unb64(token["sig"])
    except BlindError:
        raise shape from None
    if keys is None:
        raise SubmissionError(TOKEN_ERRORS[BAD_TOKEN], "token", 403)
    if not msg[32:].startswith(f"rrsite-token:{survey}:".encode()):
        raise SubmissionError("this token was made for another survey", "token", 403)
    signer = await keys.signer_for(survey)
    if signer is None:
        raise SubmissionError(TOKEN_ERRORS[BAD_TOKEN], "token", 403)
    if not signer.verify(msg, sig):
        raise SubmissionError("this token's signature is not the collector's: it was not "
                              "issued for an invitation", "token", 403)
    return sha256(msg)


async def _read_body(request: Request, limit: int) -> bytes | None:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


class BlindEndpoints:
    """`GET /api/blind-key` and `POST /api/blind-sign` for one collector."""

    def __init__(self, keys: BlindKeys, store: Any, invitation_errors: dict[str, str],
                 rate_limit: Any = None, *, known: Callable[[str], bool] | None = None,
                 signing: SigningPool | None = None) -> None:
        self.keys = keys
        self.store = store
        self.invitation_errors = invitation_errors
        self.rate_limit = rate_limit
        #: Whether a survey id is one of the collector's surveys (others are not looked up).
        self.known = known or (lambda survey: True)
        self.signing = signing or SigningPool()
        #: Trades per code (keyed hashes in memory only, as edge.RateLimit keeps addresses).
        self.trades = RateLimit(TRADES_PER_MINUTE)

    async def _signer(self, survey: object) -> BlindSigner | Response:
        """The survey's key, or the error answer (unknown survey, not blind, database down)."""
        if not isinstance(survey, str) or not SURVEY_ID_RE.fullmatch(survey):
            return _error(400, "'survey' is not a survey id", "survey")
        not_blind = _error(403, f"survey {survey!r} does not trade invitation codes for blind "
                           "tokens", "survey")
        if not self.known(survey):
            return not_blind
        try:
            signer = await self.keys.signer_for(survey)
        except StoreUnavailable as error:
            return _error(503, str(error), None, {"retry-after": "1"})
        return not_blind if signer is None else signer

    async def key(self, request: Request) -> Response:
        """A survey's public key and its id (the same for every respondent of the survey).

        `?survey=ID`; without it, the key of the only blind survey (pages built before keys
        were per survey).
        """
        if request.method not in ("GET", "HEAD"):
            return _error(405, f"{request.method} is not allowed here", None,
                          {"allow": "GET, HEAD"})
        survey = request.query_params.get("survey")
        if survey is None:
            if len(self.keys.surveys) != 1:
                return _error(400, "name the survey: /api/blind-key?survey=ID", "survey")
            survey = next(iter(self.keys.surveys))
        signer = await self._signer(survey)
        if isinstance(signer, Response):
            return signer
        return JSONResponse(signer.public_json(), headers=API_HEADERS)

    async def sign(self, request: Request) -> Response:
        """Spend an invitation code for one blind signature: 200 `{"blind_sig"}`, or why not."""
        if request.method != "POST":
            return _error(405, f"{request.method} is not allowed here", None, {"allow": "POST"})
        if self.rate_limit is not None:
            wait = self.rate_limit.check(request.client.host if request.client else "")
            if wait:
                return _error(429, f"too many requests from this address; retry in {wait} s",
                              None, {"retry-after": str(wait)})
        media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media != "application/json":
            return _error(415, "Content-Type must be application/json (UTF-8)", "content-type")
        try:
            body = await _read_body(request, MAX_SIGN_BODY)
        except ClientDisconnect:
            return Response(status_code=400)
        if body is None:
            return _error(413, f"the body is larger than {MAX_SIGN_BODY} bytes", None,
                          {"connection": "close"})
        try:
            data = json.loads(body)
        except ValueError:
            return _error(400, "the body is not valid JSON", None)
        if not isinstance(data, dict) or set(data) != set(SIGN_FIELDS):
            return _error(400, f"the body must be a JSON object with {list(SIGN_FIELDS)}", None)
        survey, code, blinded_text = (data[k] for k in SIGN_FIELDS)
        if not isinstance(code, str) or not INVITATION_RE.fullmatch(code):
            return _error(400, "an invitation code is 16 to 64 characters of A-Z, a-z, 0-9, "
                          "'_' and '-'", "invitation")
        signer = await self._signer(survey)
        if isinstance(signer, Response):
            return signer
        key = signer.public
        try:
            if not isinstance(blinded_text, str) or not B64URL_RE.fullmatch(blinded_text):
                raise BlindError("not base64url")
            blinded = unb64(blinded_text)
            if len(blinded) != key.size or int.from_bytes(blinded, "big") >= key.n:
                raise BlindError("out of range")
        except BlindError:
            return _error(400, f"'blinded_msg' must be {key.size} bytes (base64url), a number "
                          "below the key's modulus", "blinded_msg")
        hashed = code_hash(code)
        wait = self.trades.check(hashed)
        if wait:
            return _error(429, f"this invitation code was sent too often; retry in {wait} s",
                          "invitation", {"retry-after": str(wait)})
        try:
            outcome = await exchange(self.store, survey, hashed, sha256(blinded))
        except StoreUnavailable as error:
            return _error(503, str(error), None, {"retry-after": "1"})
        if outcome == NOT_BLIND:
            return _error(403, f"survey {survey!r} does not trade invitation codes for blind "
                          "tokens", "survey")
        if outcome in (BAD_CODE, USED_CODE):
            return _error(403, self.invitation_errors[outcome], "invitation")
        if outcome != SIGN:  # pragma: no cover - every outcome is handled above
            return _error(500, f"unexpected outcome {outcome}", None)
        blind_sig = await self.signing.sign(signer, blinded)
        return JSONResponse({"blind_sig": b64(blind_sig), "key_id": signer.key_id},
                            headers=API_HEADERS)
