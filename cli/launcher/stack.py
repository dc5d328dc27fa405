"""`contextq up`: the whole stack on one machine, started, watched and stopped.

Order: hold the asked ports, migrate, make the dev key; start the broker (embedded
Valkey unless REDIS_URL is set), then the API, worker, beat and Flower; wait until each
answers; print the four lines; then supervise (restart what dies, see `supervision`)
until a stop signal. A part that dies before the stack is up is a start-up error:
`up` stops and says why.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli.launcher.argv import api_argv, beat_argv, flower_argv, worker_argv
from cli.launcher.broker import EmbeddedBroker
from cli.launcher.devkey import dev_api_key, ensure_data_dir, flower_env
from cli.launcher.ports import AskedPort, PortReservation, pick_free_ports, reserve
from cli.launcher.probes import api_ready, connect_host, flower_ready, redis_ready, worker_ping
from cli.launcher.processes import UP_LOGGER, LaunchError, ProcessTable, data_dir_lock, tail
from cli.launcher.supervision import Supervisor
from contextq.logs import make_formatter
from contextq.secret_files import (
    API_URL_FILE,
    BROKER_URL_FILE,
    FLOWER_PASSWORD_FILE,
    write_secret,
)
from contextq.settings import Settings
from store import metrics

# stop order: the API, beat and Flower first, then the worker (warm shutdown), the broker last
STOP_FIRST, STOP_WORKER, STOP_BROKER = 1, 2, 9


@dataclass
class UpOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    flower_port: int = 5555
    concurrency: int = 0
    api_workers: int = 1
    timeout_s: float = 120.0
    parts: tuple[str, ...] = ("api", "worker", "beat", "flower")


@dataclass
class Stack:
    """The whole stack on one machine; `run_up()` drives it."""

    settings: Settings
    options: UpOptions
    say: Callable[[str], None]
    note: Callable[[str], None] | None = None  # up.log only (each part's start)
    table: ProcessTable | None = None
    ports: PortReservation = field(default_factory=PortReservation)
    broker: EmbeddedBroker | None = None
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

    def _asked_ports(self) -> list[AskedPort]:
        o, asked = self.options, []
        if "api" in o.parts:
            asked.append(AskedPort("API", o.host, o.port, "--port"))
        if "flower" in o.parts:
            asked.append(AskedPort("Flower", "127.0.0.1", o.flower_port, "--flower-port"))
        return asked

    def prepare(self) -> None:
        """Hold the asked ports, migrate, make the dev key: everything before a process starts."""
        from store.db import migrate  # noqa: PLC0415 - SQLAlchemy, once the stack starts

        self.ports = reserve(self._asked_ports())
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
        # every part counts into one metrics directory, from zero with this stack
        metrics_dir = Path(env.get(metrics.ENV_DIR) or metrics.default_dir(s))
        metrics.wipe(metrics_dir)
        env[metrics.ENV_DIR] = str(metrics_dir)
        env.setdefault("ORT_DISABLE_TELEMETRY", "1")
        self.table = table = ProcessTable(
            log_dir=data_dir / "logs", env=env, log_format=s.LOG_FORMAT, note=self.note
        )
        self._start_broker()
        table.env["REDIS_URL"] = self.redis_url
        quiet = s.LOG_FORMAT == "json"

        if "api" in o.parts:
            self.ports.release(o.port)
            argv = api_argv(o.host, o.port, workers=o.api_workers)
            table.spawn("api", argv, stop_order=STOP_FIRST)
        if "worker" in o.parts:
            self.worker_node = f"contextq-up-{os.getpid()}@{socket.gethostname()}"
            # one worker per DATA_DIR: nothing to synchronise with, start faster
            argv = worker_argv(
                o.concurrency or os.cpu_count() or 1,
                nodename=self.worker_node,
                quiet=quiet,
                extra=["--without-mingle", "--without-gossip"],
            )
            table.spawn("worker", argv, stop_order=STOP_WORKER)
        if "beat" in o.parts:
            pidfile = data_dir / "celerybeat.pid"
            argv = beat_argv(data_dir / "celerybeat-schedule", pidfile, quiet=quiet)
            # we hold the DATA_DIR lock, so a pid file here is stale (a SIGKILLed `up` or a
            # killed beat); its pid may have been reused, and beat would then refuse to start
            table.spawn(
                "beat",
                argv,
                stop_order=STOP_FIRST,
                before_start=lambda: pidfile.unlink(missing_ok=True),
            )
        if "flower" in o.parts:
            self.ports.release(o.flower_port)
            argv = flower_argv("127.0.0.1", o.flower_port)
            table.spawn("flower", argv, stop_order=STOP_FIRST, env=flower_env(s))

    def _start_broker(self) -> None:
        if self.settings.REDIS_URL:
            self.redis_url = self.settings.REDIS_URL
            return
        assert self.table is not None
        (port,) = pick_free_ports(1, avoid=self.ports.ports)
        self.broker = broker = EmbeddedBroker.prepare(self.table.log_dir.parent, port)
        self.table.spawn("valkey", broker.argv, stop_order=STOP_BROKER, cwd=broker.directory)
        self.redis_url = broker.url
        self._wait("valkey", lambda: redis_ready(self.redis_url), timeout=20.0)
        write_secret(self.settings.data_dir / BROKER_URL_FILE, self.redis_url)

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
            checks["beat"] = (self.settings.data_dir / "celerybeat.pid").exists
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
                    f"{name} did not answer within {timeout:.0f}s; "
                    f"see {self.settings.data_dir / 'logs' / f'{name}.log'}"
                )
            time.sleep(0.2)

    def _raise_if_dead(self) -> None:
        """Before the stack is up, a dead part is a start-up error."""
        if self.stop_signal is not None:
            raise InterruptedError
        dead = self.table.dead() if self.table else []
        if dead:
            child = dead[0]
            raise LaunchError(
                f"{child.name} exited during start-up (exit code {child.returncode}); "
                f"last lines of {child.log_path}:\n{tail(child.log_path)}"
            )

    def save_api_url(self) -> None:
        """Beside the dev key, the URL the banner prints: the CLI in this directory finds
        a stack on any port (`contextq up --port 8711`, then `contextq upload`)."""
        if "api" in self.options.parts:
            write_secret(self.settings.data_dir / API_URL_FILE, self.api_url)

    def banner(self) -> list[str]:
        lines = []
        if "api" in self.options.parts:
            lines += [f"API: {self.api_url}", f"Docs: {self.api_url}/docs"]
        if "flower" in self.options.parts:
            lines.append(f"Flower: {self.flower_url}")
        lines.append(f"API key: {self.api_key}")
        return lines

    def supervise(self, interval_s: float = 0.25) -> None:
        """Restart what dies until a stop signal (InterruptedError) or GaveUp (LaunchError)."""
        assert self.table is not None
        supervisor = Supervisor(self.table, report=self.say)
        while self.stop_signal is None:
            supervisor.check()
            time.sleep(interval_s)
        raise InterruptedError

    def stop(self) -> None:
        self.ports.release_all()
        if self.table is not None:
            self.table.stop()
        if self.broker is not None:
            (self.settings.data_dir / BROKER_URL_FILE).unlink(missing_ok=True)


@dataclass
class UpLog:
    """The launcher's own lines: `report` (stderr and DATA_DIR/logs/up.log, in LOG_FORMAT
    with timestamps), `note` (up.log only), `close`."""

    say: Callable[[str], None]
    logger: logging.Logger
    handler: logging.Handler

    def report(self, message: str) -> None:
        self.say(message)
        self.logger.info("%s", message)

    def note(self, message: str) -> None:
        self.logger.info("%s", message)

    def close(self) -> None:
        self.logger.removeHandler(self.handler)
        self.handler.close()


def up_log(say: Callable[[str], None], settings: Settings) -> UpLog:
    log_dir = ensure_data_dir(settings) / "logs"
    log_dir.mkdir(mode=0o700, exist_ok=True)
    logger = logging.getLogger(UP_LOGGER)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    handler = logging.FileHandler(log_dir / "up.log", encoding="utf-8")
    handler.setFormatter(make_formatter(settings.LOG_FORMAT))
    logger.addHandler(handler)
    return UpLog(say, logger, handler)


def run_up(
    settings: Settings,
    options: UpOptions,
    *,
    say: Callable[[str], None],
    out: Callable[[str], None],
) -> int:
    """`contextq up`: returns the exit code (0 after a stop signal, 1 after a failure)."""
    log = up_log(say, settings)
    report = log.report
    stack = Stack(settings, options, report, note=log.note)
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
                stack.start()
                stack.wait_ready()
                stack.save_api_url()
                for line in stack.banner():
                    out(line)
                if "api" in options.parts:
                    report(f"Inspector: {stack.api_url}/ui (sign in with the API key)")
                if "flower" in options.parts:
                    where = (
                        "FLOWER_PASSWORD"
                        if settings.FLOWER_PASSWORD
                        else str(data_dir / FLOWER_PASSWORD_FILE)
                    )
                    report(f"Flower login: {settings.FLOWER_USER} / password in {where}")
                report(f"logs in {data_dir / 'logs'}; Ctrl-C stops everything")
                stack.supervise()
            except InterruptedError:
                report(f"stopping (signal {received[-1] if received else '?'})")
                return 0
            except LaunchError as exc:
                report(f"contextq up: {exc}")
                report("stopping the other parts")
                return 1
            finally:
                stack.stop()
    except LaunchError as exc:
        report(f"contextq up: {exc}")
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        log.close()
    return 0
