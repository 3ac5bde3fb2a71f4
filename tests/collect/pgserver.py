"""A throwaway PostgreSQL server for the tests: initdb into a temporary folder, pg_ctl on a Unix
socket (no TCP port), removed afterwards. As root (the tests' usual user) the server runs as the
unprivileged `postgres` system user through runuser; otherwise as the current user."""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path


def bindir() -> Path:
    """Debian's newest PostgreSQL binaries (scripts/setup.sh --browser installs `postgresql`)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError("PostgreSQL is not installed: run scripts/setup.sh --browser "
                           "(apt-get install postgresql)")
    return Path(found[-1]).parent


class PgServer:
    """`start()`, `dsn(dbname)`, `create_database()`, `stop()`, `remove()`."""

    def __init__(self, settings: dict[str, str] | None = None) -> None:
        self.settings = dict(settings or {})
        self.bin = bindir()
        self.root = Path(tempfile.mkdtemp(prefix="rrsite-pg-"))
        self.data = self.root / "data"
        self.port = 50000 + secrets.randbelow(10000)
        self.user: str | None = None
        if os.geteuid() == 0:
            self.user = "postgres"
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "rrsite", "-E", "UTF8",
                  "--no-sync")

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bin / tool), *args]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def start(self) -> PgServer:
        options = (f"-k {self.root} -p {self.port} -c listen_addresses='' "
                   "-c max_connections=100 -c fsync=on -c synchronous_commit=on")
        options += "".join(f" -c {name}={value}" for name, value in self.settings.items())
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l",
                  str(self.root / "server.log"), "-w", "-t", "60", "start")
        return self

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://rrsite@/{dbname}?host={self.root}&port={self.port}"

    def create_database(self) -> str:
        """A new empty database; its URL."""
        name = "t_" + secrets.token_hex(6)
        self._run("psql", "-h", str(self.root), "-p", str(self.port), "-U", "rrsite", "-d",
                  "postgres", "-c", f"CREATE DATABASE {name}")
        return self.dsn(name)

    def remove(self) -> None:
        try:
            self.stop("immediate")
        except subprocess.CalledProcessError:
            pass  # already stopped
        shutil.rmtree(self.root, ignore_errors=True)
