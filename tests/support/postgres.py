"""A real PostgreSQL server for tests.

Uses `POSTGRES_TEST_URL` when set (a server you run; each test gets a fresh
database created on it). Otherwise finds the server binaries (`initdb`,
`pg_ctl`: `POSTGRES_BIN_DIR`, `/usr/lib/postgresql/*/bin`, or PATH) and runs a
throwaway cluster on a free 127.0.0.1 port. PostgreSQL refuses to run as root,
so under root the cluster is created and started as the `postgres` system user
(`runuser -u postgres --`) in a temp dir that user owns.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.procs import free_port

_db_seq = itertools.count(1)
STOP = ("-m", "fast", "-w", "stop")


def find_bin_dir() -> Path | None:
    candidates: list[str] = []
    if os.environ.get("POSTGRES_BIN_DIR"):
        candidates.append(os.environ["POSTGRES_BIN_DIR"])
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for c in candidates:
        if (Path(c) / "initdb").exists() and (Path(c) / "pg_ctl").exists():
            return Path(c)
    return None


def available() -> bool:
    return bool(os.environ.get("POSTGRES_TEST_URL")) or find_bin_dir() is not None


INSTALL = "apt-get install -y postgresql (or set POSTGRES_TEST_URL to a server of yours)"


def require_available() -> None:
    """Skip the test (outside CI) or fail it (CI=true) when there is no PostgreSQL."""
    from tests.support.system_packages import require

    require(available(), what="PostgreSQL's server binaries (initdb, pg_ctl)", install=INSTALL)


class PostgresServer:
    def __init__(self) -> None:
        from store.db import normalise_url

        env_url = os.environ.get("POSTGRES_TEST_URL")
        self.url: str | None = normalise_url(env_url) if env_url else None
        self._owned = self.url is None
        self.bin_dir = find_bin_dir()
        self.root: Path | None = None
        self.port: int | None = None

    def _as_pg_user(self, argv: list[str]) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", "postgres", "--", *argv]
        return argv

    def start(self) -> PostgresServer:
        if not self._owned:
            return self
        if self.bin_dir is None:
            raise RuntimeError("no PostgreSQL server binaries (initdb, pg_ctl) found")
        self.root = Path(tempfile.mkdtemp(prefix="contextq-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        os.chmod(self.root, 0o700)
        data = self.root / "data"
        subprocess.run(
            self._as_pg_user(
                [
                    str(self.bin_dir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    "--locale=C",
                ]
            ),
            check=True,
            capture_output=True,
        )
        self.port = free_port()
        self._run_server()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        return self

    def _run_server(self) -> None:
        assert self.bin_dir is not None and self.root is not None
        data = self.root / "data"
        opts = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        subprocess.run(
            self._as_pg_user(
                [
                    str(self.bin_dir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-o",
                    opts,
                    "-l",
                    str(self.root / "server.log"),
                    "-w",
                    "-t",
                    "60",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
        )

    @property
    def owned(self) -> bool:
        """Started here (not POSTGRES_TEST_URL): a test may stop and start it."""
        return self._owned and self.root is not None

    def stop_server(self) -> None:
        """Stop the server, keeping its data (`start_server` brings it back on the same
        port): for tests of a database that goes away."""
        assert self.owned and self.bin_dir is not None and self.root is not None
        subprocess.run(
            self._as_pg_user([str(self.bin_dir / "pg_ctl"), "-D", str(self.root / "data"), *STOP]),
            capture_output=True,
            check=True,
        )

    def start_server(self) -> None:
        assert self.owned
        self._run_server()

    def stop(self) -> None:
        if not self._owned or self.root is None:
            return
        assert self.bin_dir is not None
        subprocess.run(
            self._as_pg_user(
                [
                    str(self.bin_dir / "pg_ctl"),
                    "-D",
                    str(self.root / "data"),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ]
            ),
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def create_database(self, name: str | None = None) -> str:
        """A fresh database on this server; returns its SQLAlchemy URL."""
        import psycopg

        assert self.url is not None, "server not started"
        name = name or f"contextq_test_{os.getpid()}_{next(_db_seq)}"
        admin = self.url.replace("postgresql+psycopg://", "postgresql://", 1)
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        base = self.url.rsplit("/", 1)[0]
        return f"{base}/{name}"

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
