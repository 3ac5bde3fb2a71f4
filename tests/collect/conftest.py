"""Fixtures of the collector tests: hand-made dist folders, an in-process app, a real server."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import brotli
import pytest

warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
from starlette.testclient import TestClient  # noqa: E402

from rrsite.collect.server import create_app  # noqa: E402
from rrsite.collect.store import Store  # noqa: E402

# tests/collect/pgserver.py, loaded by path (the tests run with --import-mode=importlib)
_spec = importlib.util.spec_from_file_location("rrsite_tests_pgserver",
                                               Path(__file__).with_name("pgserver.py"))
assert _spec is not None and _spec.loader is not None
_pgserver = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_pgserver)
PgServer = _pgserver.PgServer

VERSION = "0123456789abcdef"
CSP = ("default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; "
       "style-src 'self'; img-src 'self'")
HEADERS_FILE = f"""# written by rrsite build
/*
  Content-Security-Policy: {CSP}
  X-Content-Type-Options: nosniff
  Referrer-Policy: no-referrer
  X-Frame-Options: DENY
/_rr/*
  Cache-Control: public, max-age=31536000, immutable
"""
QUESTIONS: list[dict[str, Any]] = [
    {"id": "violated", "text": "Have you ever violated the Honor Code?", "type": "yes-no",
     "sensitive": True, "required": True, "values": ["no", "yes"],
     "options": [{"value": "no", "label": "No"}, {"value": "yes", "label": "Yes"}],
     "design": {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25},
     "matrix": [[0.75, 0.25], [0.25, 0.75]], "epsilon": 1.0986122886681098, "delta": 0.0},
    {"id": "year", "text": "Which year are you in?", "type": "choice", "sensitive": False,
     "required": True, "values": ["First", "Second", "Third or later"],
     "options": [{"value": v, "label": v} for v in ["First", "Second", "Third or later"]]},
    {"id": "tools", "text": "Which tools do you use?", "type": "multi-choice",
     "sensitive": False, "required": False, "values": ["pen", "laptop", "phone"],
     "options": [{"value": v, "label": v} for v in ["pen", "laptop", "phone"]]},
    {"id": "age", "text": "Your age", "type": "number", "sensitive": False, "required": False,
     "min": 16, "max": 99, "integer": True},
    {"id": "hours", "text": "Hours of study a week", "type": "number", "sensitive": False,
     "required": False, "min": 0, "max": 100},
    {"id": "comment", "text": "Anything else?", "type": "text", "sensitive": False,
     "required": False, "max_length": 200},
]
PAGE_JS = "// the page\n" + "export const answer = 42;\n" * 200  # > 1 KiB: compressed twins
WASM = b"\x00asm\x01\x00\x00\x00" + bytes(range(256)) * 8


def manifest(survey: str = "honor", version: str = VERSION,
             questions: list[dict[str, Any]] | None = None, title: str = "Honor Code") -> dict:
    return {"format": 1, "id": survey, "title": title, "language": "en", "version": version,
            "core_hash": "sha256:" + "0" * 64,
            "submit": {"to": "collector", "url": "/api/submissions"},
            "privacy": {"epsilon": 1.0986, "delta": 0.0, "budget": 3.0},
            "questions": QUESTIONS if questions is None else questions}


def write_dist(root: Path, manifests: list[dict] | None = None, headers: bool = True) -> Path:
    """A small built site as docs/contracts.md describes it."""
    root.mkdir(parents=True, exist_ok=True)
    for item in manifests if manifests is not None else [manifest()]:
        folder = root / item["id"]
        folder.mkdir(exist_ok=True)
        (folder / "survey.json").write_text(json.dumps(item), encoding="utf-8")
        (folder / "index.html").write_text(
            f"<!doctype html><title>{item['title']}</title>"
            '<script type="module" src="../_rr/page.3f9a1c0d.js"></script>\n', encoding="utf-8")
    assets = root / "_rr"
    (assets / "pyodide-314.0.7-abcd").mkdir(parents=True, exist_ok=True)
    js = PAGE_JS.encode()
    (assets / "page.3f9a1c0d.js").write_bytes(js)
    (assets / "page.3f9a1c0d.js.br").write_bytes(brotli.compress(js))
    (assets / "page.3f9a1c0d.js.gz").write_bytes(gzip.compress(js, mtime=0))
    (assets / "worker.1a2b3c4d.mjs").write_text("self.onmessage = () => {};\n")
    wasm = assets / "pyodide-314.0.7-abcd" / "pyodide.asm.wasm"
    wasm.write_bytes(WASM)
    (wasm.parent / "pyodide.asm.wasm.br").write_bytes(brotli.compress(WASM))
    (wasm.parent / "pyodide.asm.wasm.gz").write_bytes(gzip.compress(WASM, mtime=0))
    (assets / "style.9f8e7d6c.css").write_text("body { margin: 0 }\n")
    if headers:
        (root / "_headers").write_text(HEADERS_FILE, encoding="utf-8")
    return root


def token() -> str:
    return secrets.token_urlsafe(16)


def body(respondent: str | None = None, **answers: Any) -> dict[str, Any]:
    given = {"violated": "yes", "year": "Second"}
    given.update(answers)
    return {"survey": "honor", "version": VERSION, "respondent": respondent or token(),
            "answers": {k: v for k, v in given.items() if v is not None}}


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    return write_dist(tmp_path / "dist")


#: The operator's secret of the tests' collectors: `/api/health` counts submissions only for it.
OPERATOR_TOKEN = "operator-token-of-the-tests"
OPERATOR_HEADERS = {"authorization": f"Bearer {OPERATOR_TOKEN}"}


def make_client(dist: Path, db: Path, **options: Any) -> TestClient:
    """A client of a collector on SQLite that speaks as the operator (health counts)."""
    options.setdefault("operator_token", OPERATOR_TOKEN)
    return TestClient(create_app(dist, Store(db), **options), raise_server_exceptions=True,
                      headers=OPERATOR_HEADERS)


def operator_client(dist: Path, store: Any, **options: Any) -> TestClient:
    """A client of a collector on any store that speaks as the operator (health counts)."""
    options.setdefault("operator_token", OPERATOR_TOKEN)
    return TestClient(create_app(dist, store, **options), headers=OPERATOR_HEADERS)


@pytest.fixture
def client(dist: Path, tmp_path: Path) -> Iterator[TestClient]:
    with make_client(dist, tmp_path / "collector.db") as test_client:
        yield test_client


@pytest.fixture(scope="module")
def shared_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("shared")
    with make_client(write_dist(root / "dist"), root / "collector.db") as test_client:
        yield test_client


class Server:
    """`rrsite serve` in a subprocess on a free loopback port."""

    def __init__(self, dist: Path, db: Path, *extra: str) -> None:
        self.dist, self.db, self.extra = dist, db, extra
        #: Headers that make /api/health count (the server runs with --operator-token).
        self.operator_headers = dict(OPERATOR_HEADERS)
        self.process: subprocess.Popen[str] | None = None
        self.url = ""
        self.closed = False

    def start(self, timeout: float = 20.0) -> Server:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.closed = False
        logs = self.db.parent if isinstance(self.db, Path) else Path(tempfile.gettempdir())
        name = self.db.name if isinstance(self.db, Path) else "postgres"
        self.stderr_path = logs / f"{name}.{time.monotonic_ns()}.stderr"
        self.stderr = open(self.stderr_path, "w")  # a file: a full pipe would block the server
        token_file = self.stderr_path.with_suffix(".operator")
        token_file.write_text(OPERATOR_TOKEN)
        token_file.chmod(0o600)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rrsite", "serve", str(self.dist), "--port", "0",
             "--db", str(self.db), "--operator-token", str(token_file), *self.extra],
            stdout=subprocess.PIPE, stderr=self.stderr, text=True, env=env)
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        line = ""
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            match = re.search(r"listening on (http://\S+?)/ ", line)
            if match:
                self.url = match.group(1)
                break
            if not line and self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.stderr_path.read_text()}")
        else:
            self.kill()
            raise RuntimeError("server did not start in time")
        import httpx

        while time.monotonic() < deadline:  # wait until the app answers (lifespan done)
            try:
                if httpx.get(self.url + "/api/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError("server did not become healthy in time")

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        self._close_pipes()

    def _close_pipes(self) -> None:
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()
        self.stderr.close()
        self.closed = True

    def stop(self) -> str:
        """SIGTERM (graceful); everything the server printed after its listening line."""
        assert self.process is not None
        if self.closed:
            return self.stderr_path.read_text()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        rest = self.process.stdout.read() if self.process.stdout else ""
        self._close_pipes()
        return rest + self.stderr_path.read_text()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Kit:
    """Helpers for the tests (conftest modules cannot be imported under importlib mode)."""

    VERSION: str = VERSION
    CSP: str = CSP
    OPERATOR_TOKEN: str = OPERATOR_TOKEN
    OPERATOR_HEADERS: dict[str, str] = field(default_factory=lambda: dict(OPERATOR_HEADERS))
    QUESTIONS: list[dict[str, Any]] = field(default_factory=lambda: QUESTIONS)
    PAGE_JS: str = PAGE_JS
    WASM: bytes = WASM

    manifest = staticmethod(manifest)
    write_dist = staticmethod(write_dist)
    token = staticmethod(token)
    body = staticmethod(body)
    make_client = staticmethod(make_client)
    client = staticmethod(operator_client)
    Server = Server
    PgServer = PgServer


@pytest.fixture(scope="session")
def kit() -> Kit:
    return Kit()




@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A real PostgreSQL server for the session (tests/collect/pgserver.py)."""
    server = PgServer().start()
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture
def pg_db(postgres: Any) -> str:
    """The URL of a new, empty PostgreSQL database."""
    return str(postgres.create_database())


@pytest.fixture
def minimal_wal_server() -> Iterator[Any]:
    """A PostgreSQL server of its own with wal_level minimal: the unlinkability tests read its
    data directory, which then holds the tables' files and little log."""
    server = PgServer(settings={"wal_level": "minimal", "max_wal_senders": "0",
                                "wal_skip_threshold": "0"}).start()
    try:
        yield server
    finally:
        server.remove()
