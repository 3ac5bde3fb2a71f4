"""The PostgreSQL store against a real server: the same API semantics as SQLite, decided by the
database; 503 + Retry-After while it is down and recovery without a restart; export."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import pytest

from rrsite.cli import main
from rrsite.collect.pgstore import PgStore, run_outside_loop
from rrsite.collect.store import CONFLICT, DUPLICATE, STORED, StoreError
from rrsite.collect.stores import open_store
from tests.collect.twostores import both_open

JSON = {"content-type": "application/json"}


def post(client, body):
    return client.post("/api/submissions", content=json.dumps(body), headers=JSON)


def test_api_semantics(pg_db, tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist")
    store = open_store(pg_db)
    assert isinstance(store, PgStore)
    with kit.client(dist, store) as client:
        body = kit.body()
        assert post(client, body).status_code == 201
        assert post(client, body).json() == {"status": "duplicate"}
        changed = {**body, "answers": {**body["answers"], "violated": "no"}}
        assert post(client, changed).status_code == 409
        assert post(client, kit.body(year="Fifth")).status_code == 422
        health = client.get("/api/health").json()
        assert health["status"] == "ok" and health["store"] == "postgresql"
        assert health["submissions"] == 1
        assert health["surveys"] == [{"id": "honor", "versions": [kit.VERSION], "submissions": 1}]
    # a second start on the same database: schema kept, manifests and answers still there
    with kit.client(dist, open_store(pg_db)) as client:
        assert post(client, body).status_code == 200
        assert client.get("/api/health").json()["submissions"] == 1


def test_concurrent_submissions_decided_by_the_database(pg_db, kit):
    """Two stores (two pools, as two processes have) racing on the same tokens."""
    tokens = [kit.token() for _ in range(40)]

    first, second = PgStore(pg_db), PgStore(pg_db)

    async def race() -> list[str]:
        jobs = [store.submit("honor", kit.VERSION, token, {"violated": "yes"})
                for token in tokens for store in (first, second)]
        jobs += [first.submit("honor", kit.VERSION, tokens[0], {"violated": "no"})]
        return list(await asyncio.gather(*jobs))

    outcomes = both_open(first, second, race)
    assert outcomes.count(STORED) == len(tokens)
    # tokens[0] got "yes" twice and "no" once: whichever committed first, the others conflict
    conflicts = outcomes.count(CONFLICT)
    assert conflicts in (1, 2)
    assert outcomes.count(DUPLICATE) == len(tokens) + 1 - conflicts

    async def count() -> int:
        store = third
        await store.open()
        try:
            return int((await store.state())["submissions"])
        finally:
            await store.aclose()

    third = PgStore(pg_db)
    assert run_outside_loop(count()) == len(tokens)  # nothing counted twice


def test_cap_and_invitations(pg_db, tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist")
    out = tmp_path / "codes.csv"
    assert main(["invite", "--survey", "honor", "-n", "3", "--url", "https://x.org/honor/",
                 "-o", str(out), "--db", pg_db]) == 0
    codes = [line.split(",")[0] for line in out.read_text().splitlines()[1:]]
    with kit.client(dist, open_store(pg_db, caps={"honor": 2})) as client:
        assert post(client, kit.body()).status_code == 403  # no code
        first = {**kit.body(), "invitation": codes[0]}
        assert post(client, first).status_code == 201
        assert post(client, first).status_code == 200
        assert post(client, {**kit.body(), "invitation": codes[0]}).status_code == 403
        assert post(client, {**kit.body(), "invitation": "Z" * 16}).status_code == 403
        assert post(client, {**kit.body(), "invitation": codes[1]}).status_code == 201
        full = post(client, {**kit.body(), "invitation": codes[2]})
        assert full.status_code == 429 and "retry-after" in full.headers


def test_export_matches_sqlite(pg_db, tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist")
    bodies = [kit.body(comment="=1+1"), kit.body(tools=["pen"], age=30), kit.body()]
    for store in (open_store(pg_db), open_store(tmp_path / "c.db")):
        with kit.client(dist, store) as client:
            for body in bodies:
                assert post(client, body).status_code == 201
    exports = []
    for db, name in ((pg_db, "pg.csv"), (str(tmp_path / "c.db"), "lite.csv")):
        assert main(["export", "--db", db, "-o", str(tmp_path / name)]) == 0
        lines = (tmp_path / name).read_text(encoding="utf-8").splitlines()
        exports.append([line.split(",")[:3] + line.split(",")[4:] for line in lines])
    assert exports[0] == exports[1]
    assert len(exports[0]) == 4 and "'=1+1" in (tmp_path / "pg.csv").read_text()
    assert main(["export", "--db", pg_db, "--survey", "nope", "-o", str(tmp_path / "x.csv")]) == 2


def test_unreachable_503_then_recovers_without_restart(tmp_path, kit):
    server = kit.PgServer().start()
    try:
        dsn = server.create_database()
        dist = kit.write_dist(tmp_path / "dist")
        with kit.client(dist, open_store(dsn)) as client:
            assert post(client, kit.body()).status_code == 201
            server.stop()
            down = post(client, kit.body())
            assert down.status_code == 503 and down.headers["retry-after"] == "1"
            assert client.get("/api/health").status_code == 503
            server.start()
            assert post(client, kit.body()).status_code == 201  # same app, same pool
            assert client.get("/api/health").json()["submissions"] == 2
        server.stop()
        with pytest.raises(StoreError, match="cannot use the database"):
            open_store(dsn)  # at start-up: a clear error naming the database
    finally:
        server.remove()


def test_health_and_errors_hide_the_database_and_follow_it(tmp_path, kit, caplog):
    """While PostgreSQL is down, 503 bodies and /api/health name no host, port, socket path, user,
    database or password (the operator's log has the full error); once it is back, health says
    ok at once, before any submission succeeds."""
    server = kit.PgServer().start()
    try:
        server._run("psql", "-h", str(server.root), "-p", str(server.port), "-U", "rrsite",
                    "-d", "postgres", "-c",
                    "CREATE ROLE sekrit_user LOGIN SUPERUSER PASSWORD 'pw-Xy9q'")
        name = urlsplit(server.create_database()).path.lstrip("/")
        dsn = (f"postgresql://sekrit_user:pw-Xy9q@/{name}?host={server.root}"
               f"&port={server.port}")
        secrets_ = ["sekrit_user", "pw-Xy9q", name, str(server.root), str(server.port)]
        dist = kit.write_dist(tmp_path / "dist")
        with kit.client(dist, open_store(dsn)) as client:
            assert post(client, kit.body()).status_code == 201
            assert client.get("/api/health").json()["db"] == "ok"
            server.stop()
            down = post(client, kit.body())
            health = client.get("/api/health")
            assert down.status_code == 503 and health.status_code == 503
            assert health.json()["status"] == "error"
            for text in (down.text, health.text):
                assert "cannot be reached" in text
                for secret in secrets_:
                    assert secret not in text, (secret, text)
            logged = caplog.text
            assert name in logged or str(server.root) in logged  # the operator sees the detail
            server.start()
            back = client.get("/api/health")
            assert back.status_code == 200, back.text
            assert back.json()["status"] == "ok" and back.json()["db"] == "ok"
            assert back.json()["last_error"] is None
            assert post(client, kit.body()).status_code == 201
            # an error whose message names the database and the user (asyncpg: 'database
            # "t_..." does not exist')
            server._run("psql", "-h", str(server.root), "-p", str(server.port), "-U", "rrsite",
                        "-d", "postgres", "-c", f"DROP DATABASE {name} WITH (FORCE)")
            gone = post(client, kit.body())
            health = client.get("/api/health")
            assert gone.status_code == 503 and health.status_code == 503
            for text in (gone.text, health.text):
                assert "SQLSTATE" in text, text
                for secret in secrets_:
                    assert secret not in text, (secret, text)
    finally:
        server.remove()
