"""`rrsite serve` as a command: user errors exit 2 with a clear message; logs carry nothing
identifying; SIGTERM stops it cleanly; the database is created in WAL mode."""

from __future__ import annotations

import json
import re
import socket
import sqlite3

import httpx
import pytest

from rrsite.cli import main


@pytest.fixture
def site(tmp_path, kit):
    return kit.write_dist(tmp_path / "dist")


def run_serve(capsys, *arguments: str) -> tuple[int, str]:
    code = main(["serve", *arguments])
    return code, capsys.readouterr().err


def test_user_errors(site, tmp_path, capsys, kit):
    cases = [
        ([str(tmp_path / "nope")], "no such folder"),
        ([str(site), "--db", str(site / "x.db")], "inside"),
        ([str(site), "--allow-origin", "https://lab.example.org/"], "no trailing slash"),
        ([str(site), "--allow-origin", "lab.example.org"], "is not an origin"),
        ([str(site), "--port", "70000"], "between 0 and 65535"),
        ([str(site), "--max-body", "10"], "at least 1024"),
        ([str(site), "--db", str(tmp_path / "missing" / "c.db")], "does not exist"),
        ([str(site), "--request-timeout", "0"], "between 0.1 and 3600"),
        ([str(site), "--max-connections", "1"], "at least 2"),
    ]
    for arguments, message in cases:
        code, err = run_serve(capsys, *arguments)
        assert code == 2 and message in err, (arguments, err)
    assert not (site / "x.db").exists()


def test_port_in_use(site, tmp_path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = run_serve(capsys, str(site), "--port", str(port), "--db",
                              str(tmp_path / "c.db"))
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in err


def test_broken_database_and_manifest(site, tmp_path, capsys, kit):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not SQLite" * 200)
    code, err = run_serve(capsys, str(site), "--db", str(garbage), "--port", "0")
    assert code == 2 and "garbage.db" in err and "not a database" in err
    assert garbage.read_bytes() == b"this is not SQLite" * 200  # untouched
    (site / "honor" / "survey.json").write_text("{not json")
    code, err = run_serve(capsys, str(site), "--db", str(tmp_path / "c.db"), "--port", "0")
    assert code == 2 and "honor/survey.json: cannot read the manifest" in err


def test_logs_carry_nothing_identifying(site, tmp_path, kit):
    agent = "Mozilla/5.0 UserAgentMarker"
    secret = "BodyMarker-" + kit.token()
    with kit.Server(site, tmp_path / "c.db") as server:
        port = server.url.rsplit(":", 1)[1]
        headers = {"user-agent": agent, "content-type": "application/json",
                   "x-forwarded-for": "198.51.100.23"}
        with httpx.Client(headers=headers, timeout=10) as client:
            body = kit.body(comment=secret)
            assert client.post(server.url + "/api/submissions", json=body).status_code == 201
            bad = kit.body(comment=secret * 10)
            assert client.post(server.url + "/api/submissions", json=bad).status_code == 422
            assert client.post(server.url + "/api/submissions",
                               content=secret.encode()).status_code == 400
            assert client.get(server.url + f"/honor/?q={secret}").status_code == 200
            assert client.get(server.url + f"/{secret}").status_code == 404
        with socket.create_connection(("127.0.0.1", int(port))) as raw:  # not even HTTP
            raw.sendall(f"BOGUS {secret}\r\n\r\n".encode())
            raw.recv(1000)
        output = server.stop()
    startup = f"rrsite serve:   {server.url}/honor/\n"  # the listing printed at start
    assert output.startswith(startup)
    output = output[len(startup):]
    # uvicorn shuts down gracefully, then re-raises SIGTERM: the store was closed (the last
    # connection's close checkpoints the WAL and removes it)
    assert server.process is not None and server.process.returncode in (0, -15)
    assert not (tmp_path / "c.db-wal").exists()
    for marker in (agent, secret, "198.51.100.23", "/api/submissions", "/honor/", "GET",
                   "POST"):
        assert marker not in output, (marker, output)
    assert not re.search(r"127\.0\.0\.1:\d+ ", output), output  # no client address:port
    db_bytes = b"".join(p.read_bytes() for p in tmp_path.glob("c.db*"))
    assert agent.encode() not in db_bytes and b"198.51.100.23" not in db_bytes


def test_database_is_created_in_wal_mode(site, tmp_path, kit):
    db = tmp_path / "new.db"
    assert not db.exists()
    with kit.Server(site, db) as server:
        health = httpx.get(server.url + "/api/health", timeout=10).json()
        assert health["journal_mode"] == "wal"
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        manifests = connection.execute("SELECT survey, version, manifest FROM manifests").fetchall()
    assert [(s, v) for s, v, _ in manifests] == [("honor", kit.VERSION)]
    assert json.loads(manifests[0][2])["questions"][0]["id"] == "violated"


def test_api_only_with_cors_on_a_real_server(site, tmp_path, kit):
    origin = "https://lab.example.org"
    with kit.Server(site, tmp_path / "c.db", "--api-only", "--allow-origin", origin) as server:
        preflight = httpx.options(server.url + "/api/submissions", timeout=10, headers={
            "origin": origin, "access-control-request-method": "POST",
            "access-control-request-headers": "content-type"})
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == origin
        response = httpx.post(server.url + "/api/submissions", json=kit.body(), timeout=10,
                              headers={"origin": origin})
        assert response.status_code == 201
        assert response.headers["access-control-allow-origin"] == origin
        assert httpx.get(server.url + "/honor/", timeout=10).status_code == 404


def test_max_connections_within_the_open_file_limit(site, tmp_path, capsys):
    """--max-connections plus the backlog and spare descriptors must fit `ulimit -n`."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        code, err = run_serve(capsys, str(site), "--db", str(tmp_path / "c.db"),
                              "--max-connections", "800")
        assert code == 2 and "lower it to at most 704" in err, err
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
