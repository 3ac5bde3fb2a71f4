"""The collector's endpoints for blind invitations and the check of a submission's `token`.

`GET /api/blind-key`, `POST /api/blind-sign` (docs/explanation/blind-tokens.md).

The page trades its invitation code for a blind signature when the survey opens; its submission
later carries only the unblinded token `{"msg", "sig"}` (base64url). The code is spent in the
trade (its own transaction), the token with the submission: the collector sees a code spent at
one moment and a token it cannot relate to any code redeemed at another. Nothing about the
request but its body is read, as in rrsite/collect/server.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from ..core.blind import BlindError, b64, unb64
from .blindkey import BlindSigner
from .blindstore import BAD_TOKEN, BLIND_ONLY, NOT_BLIND, SIGN, USED_TOKEN, exchange, sha256
from .manifests import INVITATION_RE, SURVEY_ID_RE, SubmissionError
from .storebase import BAD_CODE, USED_CODE, StoreUnavailable, code_hash

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
B64URL_RE = re.compile(r"[A-Za-z0-9_-]+={0,2}")
API_HEADERS = {"cache-control": "no-store"}


def _error(status: int, error: str, field: str | None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": error, "field": field}, status_code=status,
                        headers={**API_HEADERS, **(headers or {})})


def token_hash(signer: BlindSigner | None, survey: str, data: dict[str, Any]) -> str | None:
    """The SHA-256 of a submission's verified token, None without one; SubmissionError if bad.

    A token is `{"msg": <prepared message>, "sig": <signature>}`, both base64url; its message
    (after the 32-byte random prefix) is ``rrsite-token:<survey>:<nonce>`` for this survey, and
    its signature verifies with the collector's key (RSASSA-PSS, SHA-384, salt 48 bytes).
    """
    token = data.get("token")
    if token is None:
        return None
    if "invitation" in data:
        raise SubmissionError("send either 'invitation' or 'token', not both", "token", 400)
    if not (isinstance(token, dict) and set(token) == {"msg", "sig"}
            and all(isinstance(v, str) and B64URL_RE.fullmatch(v) and len(v) <= 1024
                    for v in token.values())):
        raise SubmissionError("'token' must be {\"msg\": ..., \"sig\": ...}, both base64url",
                              "token", 400)
    if signer is None:
        raise SubmissionError(TOKEN_ERRORS[BAD_TOKEN], "token", 403)
    msg, sig = unb64(token["msg"]), unb64(token["sig"])
    if not msg[32:].startswith(f"rrsite-token:{survey}:".encode()):
        raise SubmissionError("this token was made for another survey", "token", 403)
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

    def __init__(self, signer: BlindSigner, store: Any, invitation_errors: dict[str, str],
                 rate_limit: Any = None) -> None:
        self.signer = signer
        self.store = store
        self.invitation_errors = invitation_errors
        self.rate_limit = rate_limit

    async def key(self, request: Request) -> Response:
        """The public key and its id (the same for every survey and every respondent)."""
        if request.method not in ("GET", "HEAD"):
            return _error(405, f"{request.method} is not allowed here", None,
                          {"allow": "GET, HEAD"})
        return JSONResponse(self.signer.public_json(), headers=API_HEADERS)

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
        if not isinstance(survey, str) or not SURVEY_ID_RE.fullmatch(survey):
            return _error(400, "'survey' is not a survey id", "survey")
        if not isinstance(code, str) or not INVITATION_RE.fullmatch(code):
            return _error(400, "an invitation code is 16 to 64 characters of A-Z, a-z, 0-9, "
                          "'_' and '-'", "invitation")
        key = self.signer.public
        try:
            if not isinstance(blinded_text, str) or not B64URL_RE.fullmatch(blinded_text):
                raise BlindError("not base64url")
            blinded = unb64(blinded_text)
            if len(blinded) != key.size or int.from_bytes(blinded, "big") >= key.n:
                raise BlindError("out of range")
        except BlindError:
            return _error(400, f"'blinded_msg' must be {key.size} bytes (base64url), a number "
                          "below the key's modulus", "blinded_msg")
        try:
            outcome = await exchange(self.store, survey, code_hash(code), sha256(blinded))
        except StoreUnavailable as error:
            return _error(503, str(error), None, {"retry-after": "1"})
        if outcome == NOT_BLIND:
            return _error(403, f"survey {survey!r} does not trade invitation codes for blind "
                          "tokens", "survey")
        if outcome in (BAD_CODE, USED_CODE):
            return _error(403, self.invitation_errors[outcome], "invitation")
        if outcome != SIGN:  # pragma: no cover - every outcome is handled above
            return _error(500, f"unexpected outcome {outcome}", None)
        blind_sig = self.signer.blind_sign(blinded)
        return JSONResponse({"blind_sig": b64(blind_sig), "key_id": self.signer.key_id},
                            headers=API_HEADERS)

