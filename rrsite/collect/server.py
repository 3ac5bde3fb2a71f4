"""The collector's ASGI application: the built site, `POST /api/submissions`, `GET /api/health`.

Privacy: handlers read only the request's path, method, Content-Type, Content-Length,
Accept-Encoding, If-None-Match, Origin and body (and, on `/api/health` only, Authorization);
nothing about the client (user agent, cookies) is read, stored or logged, and request bodies are
never logged. Uvicorn's access log is turned off by `rrsite serve`. The client address is read
only with a rate limit (`--rate-limit`), and then only to take a token from its in-memory bucket
(rrsite/collect/edge.py: keyed-hashed, never stored or logged).

`GET /api/health` tells anyone whether the store works, but counts submissions only for the
operator (`Authorization: Bearer TOKEN`, the secret of `rrsite serve --operator-token`): an
outsider polling counts would time each submission's arrival.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .edge import RateLimit
from .invitations import blindapi
from .invitations.blindkey import BlindSigner, KeyRing
from .manifests import (
    CELL_KEY,
    SURVEY_ID_RE,
    ManifestError,
    SubmissionError,
    SurveyRules,
    compile_manifest,
    manifest_paths,
    parse_submission,
    read_manifest,
)
from .static import HeaderRules, SiteHeadersMiddleware, StaticSite
from .storebase import (
    BAD_CODE,
    CONFLICT,
    DUPLICATE,
    FULL,
    NO_CODE,
    STORED,
    USED_CODE,
    StoreUnavailable,
    SubmissionStore,
)

#: Retry-After (seconds) sent when a survey has reached its cap of submissions.
FULL_RETRY_AFTER = 3600
#: What `GET /api/health` says only to the operator (counts: they time each arrival).
OPERATOR_ONLY = ("submissions", "waiting")
#: Answers (403) for invitation-only surveys.
INVITATION_ERRORS = {
    NO_CODE: "this survey accepts answers only through a personal invitation link; open the "
             "link you were sent",
    BAD_CODE: "this invitation code is not valid for this survey; open the link exactly as you "
              "were sent it",
    USED_CODE: "this invitation code has already been used: each invitation accepts one set of "
               "answers",
    **blindapi.TOKEN_ERRORS,
}
#: Default limit on a submission body (bytes).
MAX_BODY = 64 * 1024
#: A body over the limit is read and discarded up to this size so the client sees the 413.
DRAIN_LIMIT = 8 * 1024 * 1024
API_HEADERS = {"cache-control": "no-store"}

log = logging.getLogger("rrsite.collect")


def _error(status: int, error: str, field: str | None = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": error, "field": field}, status_code=status,
                        headers={**API_HEADERS, **(headers or {})})


class Collector:
    """Validates submissions against every manifest version seen and hands them to the store."""

    def __init__(self, dist: Path, store: SubmissionStore, *, max_body: int = MAX_BODY,
                 rate_limit: RateLimit | None = None,
                 blind: blindapi.BlindKeys | None = None,
                 operator_token: str | None = None) -> None:
        self.dist = dist
        self.blind = blind  # the keys of blind invitations, if any
        self.operator_token = operator_token
        self.store = store
        self.max_body = max_body
        self.rate_limit = rate_limit
        self.rules: dict[tuple[str, str], SurveyRules] = {}
        self.titles: dict[str, str] = {}
        self._manifest_stamps: dict[str, tuple[int, int] | None] = {}
        self._load()

    def _load(self) -> None:
        """Read every DIST/*/survey.json (ManifestError if one is broken), record, compile all."""
        current: list[dict[str, Any]] = []
        for path in manifest_paths(self.dist):
            manifest, _ = read_manifest(path)
            current.append(manifest)
            self._manifest_stamps[manifest["id"]] = _stamp(path)
        self.store.register_manifests(current)
        for manifest in self.store.stored_manifests():
            self._add(manifest)
        for manifest in current:  # the titles of the current build win
            self._add(manifest)

    def _add(self, manifest: dict[str, Any]) -> None:
        rules = compile_manifest(manifest)
        self.rules[(rules.survey, rules.version)] = rules
        title = manifest.get("title")
        self.titles[rules.survey] = title if isinstance(title, str) else rules.survey

    def surveys(self) -> list[tuple[str, str]]:
        """(id, title) of each survey with a page in DIST."""
        return [(survey, self.titles.get(survey, survey))
                for survey in sorted(self._manifest_stamps)
                if self._manifest_stamps[survey] is not None]

    async def rules_for(self, survey: str, version: str) -> SurveyRules:
        """The rules of a survey version (notices a rebuilt DIST); SubmissionError if none."""
        rules = self.rules.get((survey, version))
        if rules is not None:
            return rules
        if SURVEY_ID_RE.fullmatch(survey):
            await self._refresh(survey)
            rules = self.rules.get((survey, version))
            if rules is not None:
                return rules
        known = sorted({key[0] for key in self.rules})
        if survey not in known:
            shown = survey if len(survey) <= 80 else survey[:80] + "…"
            raise SubmissionError(f"unknown survey {shown!r}", "survey")
        shown = version if len(version) <= 80 else version[:80] + "…"
        raise SubmissionError(f"unknown version {shown!r} of survey {survey!r}", "version")

    async def _refresh(self, survey: str) -> None:
        """Pick up DIST/<survey>/survey.json if it changed since it was last read."""
        path = self.dist / survey / "survey.json"
        stamp = _stamp(path)
        if stamp is None or stamp == self._manifest_stamps.get(survey):
            return
        self._manifest_stamps[survey] = stamp
        try:
            manifest, rules = read_manifest(path)
        except ManifestError as error:
            log.warning("ignoring a changed manifest: %s", error)
            return
        await self.store.register(manifest)
        self._add(manifest)

    async def submit(self, request: Request) -> Response:
        """`POST /api/submissions`: validate, store durably, then answer."""
        if self.rate_limit is not None:
            wait = self.rate_limit.check(request.client.host if request.client else "")
            if wait:
                return _error(429, "too many submissions from this address; retry in "
                              f"{wait} s", None, {"retry-after": str(wait)})
        content_type = request.headers.get("content-type", "")
        media, _, params = content_type.partition(";")
        charset = params.strip().lower().replace(" ", "")
        if media.strip().lower() != "application/json" or (
                charset and charset not in ("charset=utf-8", "charset=\"utf-8\"")):
            return _error(415, "Content-Type must be application/json (UTF-8)", "content-type")
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or len(declared) > 18):
            return _error(400, "bad Content-Length", "content-length")
        if declared is not None and int(declared) > DRAIN_LIMIT:
            return _error(413, f"the body is larger than {self.max_body} bytes", None,
                          {"connection": "close"})
        body = bytearray()
        received = 0
        try:
            async for chunk in request.stream():
                received += len(chunk)
                if received <= self.max_body:
                    body += chunk
                elif received > DRAIN_LIMIT:
                    break  # stop reading; the connection is closed after the answer
        except ClientDisconnect:
            return Response(status_code=400)
        if received > self.max_body:
            close = {"connection": "close"} if received > DRAIN_LIMIT else None
            return _error(413, f"the body is larger than {self.max_body} bytes", None, close)
        try:
            data = parse_submission(bytes(body))
            rules = await self.rules_for(data["survey"], data["version"])
            answers = rules.check_answers(data["answers"])
            answers.update(rules.check_groups(data.get("groups"), answers))
            if data.get("cell") is not None:  # part of the content: a resend must carry it too
                answers[CELL_KEY] = data["cell"]
            token = await blindapi.token_hash(self.blind, rules.survey, data)  # [blind hook]
            if data.get("completion") is not None and not rules.record:
                raise SubmissionError("this survey keeps no completion record (its panel: has no "
                                      "`record: true`)", "completion")
        except SubmissionError as error:
            return JSONResponse(error.body(), status_code=error.status, headers=API_HEADERS)
        except StoreUnavailable as error:
            return _error(503, str(error), None, {"retry-after": "1"})
        try:
            outcome = await self.store.submit(rules.survey, rules.version, data["respondent"],
                                              answers, data.get("invitation"), token)
        except StoreUnavailable as error:
            return _error(503, str(error), None, {"retry-after": "1"})
        if data.get("completion") is not None and outcome in (STORED, DUPLICATE):
            # [panels] apart from the answers, in a commit of its own; a failure is answered
            # 503, and the page's resend (a duplicate) records it then
            try:
                await self.store.record_completion(rules.survey, bytes.fromhex(data["completion"]))
            except StoreUnavailable as error:
                return _error(503, str(error), None, {"retry-after": "1"})
        if outcome == STORED:
            return JSONResponse({"status": "stored"}, status_code=201, headers=API_HEADERS)
        if outcome in INVITATION_ERRORS:
            field = "token" if token is not None else "invitation"
            return _error(403, INVITATION_ERRORS[outcome], field)
        if outcome == FULL:
            cap = self.store.caps.get(rules.survey)
            return _error(429, f"survey {rules.survey!r} has reached its limit of {cap} "
                          "submissions", "survey", {"retry-after": str(FULL_RETRY_AFTER)})
        if outcome == CONFLICT:
            return _error(409, "this respondent token already sent different answers",
                          "respondent")
        return JSONResponse({"status": "duplicate"}, status_code=200, headers=API_HEADERS)

    def is_operator(self, request: Request) -> bool:
        """Whether the request carries the operator's token (`Authorization: Bearer TOKEN`)."""
        if not self.operator_token:
            return False
        given = request.headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {self.operator_token}".encode())

    async def health(self, request: Request) -> Response:
        """`GET /api/health`: the store's state read from the database; counts for the operator."""
        try:
            state = await self.store.state()
        except StoreUnavailable as error:
            return JSONResponse({"status": "error", "db": str(error)},
                                status_code=503, headers={**API_HEADERS, "retry-after": "1"})
        if not self.is_operator(request):
            for name in OPERATOR_ONLY:
                state.pop(name, None)
            for survey in state.get("surveys", []):
                survey.pop("submissions", None)
        ok = bool(state.pop("ok"))
        body = {"status": "ok" if ok else "error",
                "db": "ok" if state["last_error"] is None else state["last_error"], **state}
        return JSONResponse(body, status_code=200 if ok else 503, headers=API_HEADERS)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


async def _api_not_found(request: Request) -> Response:
    return _error(404, f"no API endpoint {request.url.path}", None)


async def _api_method(request: Request, allow: str) -> Response:
    return _error(405, f"{request.method} is not allowed here", None, {"allow": allow})


class FramingCheck:
    """Refuse (400, connection closed) a request with both Transfer-Encoding and Content-Length.

    RFC 9112 section 6.1: such a message may be an attempt at request smuggling, and a server
    that cannot be sure how a proxy in front of it framed the body must not guess. h11 (the
    protocol uvicorn runs here) passes both headers through and frames the body as chunked, so
    the check is made here, on the request's headers, before any route reads the body.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Answer 400 to a request with both headers; pass every other one on."""
        if scope["type"] == "http":
            names = {name.lower() for name, _ in scope["headers"]}
            if b"transfer-encoding" in names and b"content-length" in names:
                response = _error(400, "a request may not have both Transfer-Encoding and "
                                  "Content-Length", None, {"connection": "close"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(dist: Path, store: SubmissionStore, *, allow_origins: Sequence[str] = (),
               api_only: bool = False, max_body: int = MAX_BODY,
               rate_limit: int | None = None, blind_key: KeyRing | BlindSigner | None = None,
               operator_token: str | None = None, private: Sequence[Path] = (),
               signing: Any = None) -> Starlette:
    """The collector app for DIST and a Store; the store's writer runs during the app's lifespan.

    `rate_limit`: submissions a minute per client address (in memory only), None for no limit.
    `blind_key`: the keys of blind invitations (a key file's keys, or one key), or None: then
    `/api/blind-key` and `/api/blind-sign` are served. `operator_token`: the secret that makes
    `/api/health` count submissions. `private`: files never served even if they lie in DIST (the
    key file, the database). `signing`: where blind signatures are computed (blindkey.SigningPool;
    a worker process by default).

    ManifestError if a manifest in DIST is unusable; BlindKeyError if two blind surveys share a
    key.
    """
    keys = blindapi.BlindKeys(blind_key, store) if blind_key is not None else None
    collector = Collector(dist, store, max_body=max_body,
                          rate_limit=RateLimit(rate_limit) if rate_limit else None,
                          blind=keys, operator_token=operator_token)
    header_rules = HeaderRules(dist / "_headers")
    site = StaticSite(dist, header_rules, collector.surveys, private=private)

    async def submissions(request: Request) -> Response:
        if request.method != "POST":
            return await _api_method(request, "POST")
        return await collector.submit(request)

    async def health(request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return await _api_method(request, "GET, HEAD")
        return await collector.health(request)

    async def static(request: Request) -> Response:
        if api_only:
            return site.not_found()
        if request.method not in ("GET", "HEAD"):
            return Response("method not allowed\n", status_code=405,
                            headers={"allow": "GET, HEAD", "cache-control": "no-store"})
        return await site(request)

    every = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    routes = [
        Route("/api/submissions", submissions, methods=every),
        Route("/api/health", health, methods=every),
    ]
    blind = None
    if keys is not None:
        blind = blindapi.BlindEndpoints(
            keys, store, INVITATION_ERRORS, collector.rate_limit,
            known=lambda survey: any(key[0] == survey for key in collector.rules),
            signing=signing)
        routes += [Route("/api/blind-key", blind.key, methods=every),
                   Route("/api/blind-sign", blind.sign, methods=every)]
    routes += [
        Route("/api/{rest:path}", _api_not_found, methods=every),
        Route("/{path:path}", static, methods=every),
    ]
    middleware = [Middleware(FramingCheck), Middleware(SiteHeadersMiddleware, rules=header_rules)]
    if allow_origins:
        middleware.append(Middleware(
            CORSMiddleware, allow_origins=list(allow_origins), allow_methods=["GET", "POST"],
            allow_headers=["Content-Type"], max_age=86400))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await store.open()
        try:
            yield
        finally:
            await store.aclose()
            if blind is not None:
                blind.signing.close()

    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.collector = collector
    return app

