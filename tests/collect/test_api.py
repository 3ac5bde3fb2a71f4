"""The collector API in process (Starlette's TestClient): statuses, validation, store, CORS."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from rrsite.collect.store import Store

JSON = {"content-type": "application/json"}


def post(client: Any, payload: Any, headers: dict[str, str] | None = None) -> Any:
    data = payload if isinstance(payload, bytes | str) else json.dumps(payload)
    return client.post("/api/submissions", content=data, headers=headers or JSON)


def rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT survey, version, respondent, submitted_at, answers FROM submissions "
            "ORDER BY id").fetchall()


def test_stored_duplicate_conflict(client, kit, tmp_path):
    submission = kit.body(tools=["pen", "phone"], age=20, hours=7.5, comment="fine")
    first = post(client, submission)
    assert first.status_code == 201 and first.json() == {"status": "stored"}
    again = post(client, submission)
    assert again.status_code == 200 and again.json() == {"status": "duplicate"}
    # same content with keys in another order is the same submission
    reordered = {"answers": dict(reversed(list(submission["answers"].items()))),
                 **{k: v for k, v in submission.items() if k != "answers"}}
    assert post(client, reordered).status_code == 200
    changed = {**submission, "answers": {**submission["answers"], "violated": "no"}}
    conflict = post(client, changed)
    assert conflict.status_code == 409
    assert conflict.json()["field"] == "respondent"
    stored = rows(tmp_path / "collector.db")
    assert len(stored) == 1
    survey, version, respondent, submitted_at, answers = stored[0]
    assert (survey, version, respondent) == ("honor", kit.VERSION, submission["respondent"])
    assert json.loads(answers) == submission["answers"]
    assert len(submitted_at) == len("2026-11-22T13:05Z") and submitted_at.endswith("Z")


def test_submitted_at_is_the_minute(client, kit, tmp_path):
    from datetime import UTC, datetime, timedelta

    before = datetime.now(UTC).replace(second=0, microsecond=0)
    assert post(client, kit.body()).status_code == 201
    after = datetime.now(UTC)
    (_, _, _, submitted_at, _), = rows(tmp_path / "collector.db")
    moment = datetime.strptime(submitted_at, "%Y-%m-%dT%H:%MZ").replace(tzinfo=UTC)
    assert before <= moment <= after and after - moment < timedelta(minutes=1, seconds=1)


def test_stores_nothing_the_page_did_not_send(client, kit, tmp_path):
    agent = "Mozilla/5.0 (X11; SecretAgentMarker 7.7)"
    submission = kit.body()
    response = post(client, submission, {**JSON, "user-agent": agent, "x-forwarded-for":
                                         "203.0.113.77", "cookie": "session=CookieMarker"})
    assert response.status_code == 201
    db = tmp_path / "collector.db"
    with sqlite3.connect(db) as connection:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(submissions)")]
    assert columns == ["id", "survey", "version", "respondent", "submitted_at", "answers"]
    raw = b"".join(path.read_bytes() for path in tmp_path.glob("collector.db*"))
    for marker in (b"SecretAgentMarker", b"203.0.113.77", b"CookieMarker", b"testclient"):
        assert marker not in raw
    assert submission["respondent"].encode() in raw  # the check can see what is stored


@pytest.mark.parametrize(("answers", "field", "fragment"), [
    ({"violated": "maybe"}, "answers.violated", "not one of"),
    ({"violated": True}, "answers.violated", "string"),
    ({"year": "Fourth"}, "answers.year", "not one of"),
    ({"tools": "pen"}, "answers.tools", "list"),
    ({"tools": ["pen", "quill"]}, "answers.tools", "not one of"),
    ({"tools": ["pen", "pen"]}, "answers.tools", "twice"),
    ({"tools": [1]}, "answers.tools", "list of strings"),
    ({"age": 15}, "answers.age", "at least 16"),
    ({"age": 100}, "answers.age", "at most 99"),
    ({"age": 20.5}, "answers.age", "whole number"),
    ({"age": "20"}, "answers.age", "number"),
    ({"age": True}, "answers.age", "number"),
    ({"hours": -0.5}, "answers.hours", "at least 0"),
    ({"hours": 1e300}, "answers.hours", "at most 100"),
    ({"comment": "x" * 201}, "answers.comment", "at most 200"),
    ({"comment": 5}, "answers.comment", "string"),
    ({"violated": None}, "answers.violated", "required"),
    ({"year": None}, "answers.year", "required"),
    ({"ghost": "boo"}, "answers.ghost", "unknown question id"),
    ({"yaer": "First"}, "answers.yaer", "did you mean 'year'"),
])
def test_answers_are_checked(client, kit, answers, field, fragment):
    response = post(client, kit.body(**answers))
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field
    assert fragment in response.json()["error"]


@pytest.mark.parametrize(("answers", "stored"), [
    ({"age": 20.0}, {"age": 20}),                       # integer given as 20.0
    ({"age": 16, "hours": 0}, {"age": 16, "hours": 0}),  # the bounds are allowed
    ({"age": 99, "hours": 100}, {"age": 99, "hours": 100}),
    ({"hours": 2.25}, {"hours": 2.25}),
    ({"tools": []}, {"tools": []}),
    ({"comment": ""}, {}),                               # an empty text is no answer
    ({"comment": "x" * 200}, {"comment": "x" * 200}),
    ({"comment": "ünïcödé ✓ \n second line"}, {"comment": "ünïcödé ✓ \n second line"}),
    ({"tools": None, "age": None}, {}),                  # null: unanswered optional questions
])
def test_valid_answers_are_stored_as_sent(client, kit, tmp_path, answers, stored):
    submission = kit.body(**answers)
    submission["answers"].update({k: v for k, v in answers.items() if v is None})
    response = post(client, submission)
    assert response.status_code == 201, response.text
    (_, _, _, _, text), = rows(tmp_path / "collector.db")
    assert json.loads(text) == {"violated": "yes", "year": "Second", **stored}


@pytest.mark.parametrize(("payload", "status", "field"), [
    (b"", 400, None),
    (b"{", 400, None),
    (b"[]", 400, None),
    (b"null", 400, None),
    (b'{"survey": NaN}', 400, None),
    (b'{"a": 1, "a": 2}', 400, None),
    (b"\xff\xfe{}", 400, None),
    (b"[" * 50_000 + b"]" * 50_000, 413, None),
])
def test_malformed_bodies(client, payload, status, field):
    response = post(client, payload)
    assert response.status_code == status, response.text
    assert set(response.json()) == {"error", "field"}
    assert response.json()["field"] == field


def test_deep_nesting_within_the_limit(client):
    response = post(client, b"[" * 30_000 + b"]" * 30_000)
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["error"]


@pytest.mark.parametrize(("change", "status", "field"), [
    ({"survey": "other"}, 422, "survey"),
    ({"survey": 5}, 400, "survey"),
    ({"version": "ffffffffffffffff"}, 422, "version"),
    ({"respondent": "short"}, 400, "respondent"),
    ({"respondent": "x" * 65}, 400, "respondent"),
    ({"respondent": "a" * 21 + "!"}, 400, "respondent"),
    ({"respondent": "a" * 22 + "\n"}, 400, "respondent"),
    ({"answers": ["yes"]}, 422, "answers"),
    ({"extra": 1}, 400, "extra"),
    ({"ip": "1.2.3.4"}, 400, "ip"),
])
def test_bad_envelope(client, kit, change, status, field):
    response = post(client, {**kit.body(), **change})
    assert response.status_code == status, response.text
    assert response.json()["field"] == field


def test_missing_fields(client, kit):
    for name in ("survey", "version", "respondent", "answers"):
        submission = kit.body()
        del submission[name]
        response = post(client, submission)
        assert response.status_code == 400 and response.json()["field"] == name


def test_respondent_lengths(client, kit):
    assert post(client, kit.body("a" * 22)).status_code == 201
    assert post(client, kit.body("Z_-9" * 16)).status_code == 201


def test_content_type(client, kit):
    data = json.dumps(kit.body())
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "",
                         "application/json; charset=latin-1", "application/jsonp"):
        response = client.post("/api/submissions", content=data,
                               headers={"content-type": content_type})
        assert response.status_code == 415, content_type
        assert response.json()["field"] == "content-type"
    ok = client.post("/api/submissions", content=data,
                     headers={"content-type": "Application/JSON; charset=UTF-8"})
    assert ok.status_code == 201


def test_body_limit(client, kit):
    big = kit.body(comment="x" * 100)
    big["answers"]["comment"] = "x" * (70 * 1024)
    response = post(client, big)
    assert response.status_code == 413 and "65536" in response.json()["error"]
    # just under the limit is read (and then refused for its content, not its size)
    near = kit.body()
    near["answers"]["comment"] = "x" * (64 * 1024 - 200)
    assert post(client, near).status_code == 422
    assert post(client, kit.body()).status_code == 201


def test_methods_and_unknown_api_paths(client):
    assert client.get("/api/submissions").status_code == 405
    assert client.get("/api/submissions").headers["allow"] == "POST"
    missing = client.get("/api/export")
    assert missing.status_code == 404 and missing.json()["field"] is None
    assert client.post("/api/health").status_code == 405


def test_health(client, kit):
    post(client, kit.body())
    post(client, kit.body())
    health = client.get("/api/health")
    assert health.status_code == 200
    state = health.json()
    assert state["status"] == "ok" and state["db"] == "ok"
    assert state["journal_mode"] == "wal" and state["writer"] == "running"
    assert state["submissions"] == 2
    assert state["surveys"] == [{"id": "honor", "versions": [kit.VERSION], "submissions": 2}]
    assert health.headers["cache-control"] == "no-store"


def test_health_reports_a_stopped_writer(dist, tmp_path, kit):
    store = Store(tmp_path / "c.db")
    with kit.make_client(dist, tmp_path / "c2.db") as client:
        client.app.state.collector.store = store  # a store whose writer never started
        health = client.get("/api/health")
        assert health.status_code == 503 and health.json()["status"] == "error"
        response = post(client, kit.body())
        assert response.status_code == 503 and response.headers["retry-after"] == "1"
    store.close()


def test_old_versions_stay_valid_after_a_rebuild(tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist")
    db = tmp_path / "c.db"
    old = kit.body()
    with kit.make_client(dist, db) as client:
        assert post(client, old).status_code == 201
    # rebuild: a new version drops 'comment' and adds 'club'
    questions = [q for q in kit.QUESTIONS if q["id"] != "comment"] + [
        {"id": "club", "text": "Club?", "type": "yes-no", "required": False,
         "values": ["no", "yes"]}]
    new_version = "fedcba9876543210"
    kit.write_dist(dist, [kit.manifest(version=new_version, questions=questions)])
    with kit.make_client(dist, db) as client:
        late_old = kit.body(comment="still the old page")
        assert post(client, late_old).status_code == 201  # old page still open somewhere
        new = {**kit.body(club="yes"), "version": new_version}
        assert post(client, new).status_code == 201
        bad = {**kit.body(comment="gone"), "version": new_version}
        assert post(client, bad).json()["field"] == "answers.comment"
        assert post(client, {**kit.body(club="no")}).json()["field"] == "answers.club"
        assert post(client, old).status_code == 200  # a retry of the first is a duplicate
        versions = client.get("/api/health").json()["surveys"][0]["versions"]
        assert versions == [kit.VERSION, new_version]


def test_a_rebuild_while_running_is_noticed(client, dist, kit):
    new_version = "1111111111111111"
    submission = {**kit.body(), "version": new_version}
    assert post(client, submission).json()["field"] == "version"
    kit.write_dist(dist, [kit.manifest(version=new_version)])
    assert post(client, submission).status_code == 201
    assert post(client, kit.body()).status_code == 201  # and the old one still works


def test_a_broken_manifest_stops_the_start(tmp_path, kit):
    from rrsite.collect.manifests import ManifestError

    dist = kit.write_dist(tmp_path / "dist")
    (dist / "honor" / "survey.json").write_text('{"id": "honor", "version": 12}')
    with pytest.raises(ManifestError, match=r"survey.json: 'version' must be hex digits"):
        kit.make_client(dist, tmp_path / "c.db")
    (dist / "honor" / "survey.json").write_text(json.dumps(kit.manifest(survey="other")))
    with pytest.raises(ManifestError, match="differs from its folder name"):
        kit.make_client(dist, tmp_path / "c.db")


def test_several_surveys(tmp_path, kit):
    other = kit.manifest(survey="climate", version="abcdefabcdefabcd", questions=[
        {"id": "worried", "text": "Worried?", "type": "yes-no", "required": True,
         "values": ["no", "yes"]}])
    dist = kit.write_dist(tmp_path / "dist", [kit.manifest(), other])
    with kit.make_client(dist, tmp_path / "c.db") as client:
        same_token = kit.token()
        assert post(client, kit.body(same_token)).status_code == 201
        climate = {"survey": "climate", "version": "abcdefabcdefabcd",
                   "respondent": same_token, "answers": {"worried": "yes"}}
        assert post(client, climate).status_code == 201  # tokens are per survey
        assert post(client, {**climate, "answers": {"violated": "yes"}}).status_code == 422


ORIGIN = "https://lab.example.org"


def test_cors_for_listed_origins_only(dist, tmp_path, kit):
    with kit.make_client(dist, tmp_path / "c.db", allow_origins=[ORIGIN],
                         api_only=True) as client:
        preflight = client.options("/api/submissions", headers={
            "origin": ORIGIN, "access-control-request-method": "POST",
            "access-control-request-headers": "content-type"})
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == ORIGIN
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert "content-type" in preflight.headers["access-control-allow-headers"].lower()
        refused = client.options("/api/submissions", headers={
            "origin": "https://evil.example", "access-control-request-method": "POST"})
        assert refused.status_code >= 400
        assert "access-control-allow-origin" not in refused.headers
        response = post(client, kit.body(), {**JSON, "origin": ORIGIN})
        assert response.status_code == 201
        assert response.headers["access-control-allow-origin"] == ORIGIN
        other = post(client, kit.body(), {**JSON, "origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
        # api-only: the pages are not served
        assert client.get("/honor/").status_code == 404
        assert client.get("/_rr/page.3f9a1c0d.js").status_code == 404
        assert client.get("/api/health").status_code == 200


def test_no_cors_headers_without_allowed_origins(client, kit):
    response = post(client, kit.body(), {**JSON, "origin": ORIGIN})
    assert response.status_code == 201
    assert "access-control-allow-origin" not in response.headers
    preflight = client.options("/api/submissions", headers={
        "origin": ORIGIN, "access-control-request-method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers


def test_security_headers_on_api_answers(client, kit):
    for response in (post(client, kit.body()), post(client, b"{"), client.get("/api/health"),
                     client.get("/api/nope")):
        assert response.headers["content-security-policy"] == kit.CSP
        assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("encode", [
    lambda text: text.encode("utf-16"), lambda text: text.encode("utf-16-le"),
    lambda text: text.encode("utf-16-be"), lambda text: text.encode("utf-32"),
    lambda text: text.encode("utf-32-le"), lambda text: b"\xef\xbb\xbf" + text.encode(),
    lambda text: text.replace("Second", "Sécond").encode("latin-1"),
    lambda text: text.encode()[:-3] + b"\xff" + text.encode()[-3:],
], ids=["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-8-bom", "latin-1",
        "invalid-byte"])
@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8"])
def test_body_not_utf8(client, kit, encode, content_type):
    """A body that is not UTF-8 JSON is refused with a clear 400, whatever its Content-Type says;
    nothing is stored."""
    text = json.dumps(kit.body(comment="ça va"), ensure_ascii=False)
    response = client.post("/api/submissions", content=encode(text),
                           headers={"content-type": content_type})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert "UTF-8" in error and ("offset" in error or "byte order mark" in error), error
    assert client.get("/api/health").json()["submissions"] == 0
    ok = client.post("/api/submissions", content=text.encode(),
                     headers={"content-type": content_type})
    assert ok.status_code == 201
