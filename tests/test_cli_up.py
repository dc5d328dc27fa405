"""`contextq up` as a real subprocess: four lines, a working stack, nothing left behind.

The stack is started once for the module (tests run in file order; the SIGTERM
test stops it). Each test asserts on real processes and real HTTP answers: logs in
DATA_DIR/logs, request ids, parts killed with SIGKILL and restarted
(docs/operations.md#running-the-service).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import psutil
import pytest
import redis

from tests.support.api import api_client
from tests.support.files import upload, wait_file_done

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cli.main"]
START_TIMEOUT_S = 150.0
KEY_RE = r"cq_[A-Za-z0-9_-]{20,}"

# the main stack: a small context window, so a short conversation is past its threshold,
# and a provider named, so the start line of each part can be checked word for word
SMALL_WINDOW = {"MAX_CONTEXT_TOKENS": "4000", "LLM_PROVIDER": "anthropic"}
INIT_LINE = (
    "Context management initialized for provider=anthropic: max_tokens=4000, "
    "min_messages=10, auto_compression=True"
)
T = TypeVar("T")

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(data_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "REDIS_URL",
            "DATABASE_URL",
            "FLOWER_PASSWORD",
            "CONTEXTQ_API_URL",
            "CONTEXTQ_API_KEY",
            "ENVIRONMENT",
        )
    }
    env["DATA_DIR"] = str(data_dir)
    env["COLUMNS"] = "200"  # rich tables in captured output
    env.update(extra or {})
    return env


def _wait(fn: Callable[[], T], *, timeout: float, what: str) -> T:
    deadline = time.monotonic() + timeout
    while not (result := fn()):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)
    return result


class Up:
    """One `contextq up` subprocess; stdout lines collected by a thread."""

    def __init__(
        self,
        data_dir: Path,
        port: int,
        flower_port: int,
        env: dict[str, str] | None = None,
        *,
        concurrency: int = 1,
        args: tuple[str, ...] = (),
    ) -> None:
        self.data_dir, self.port, self.flower_port = data_dir, port, flower_port
        self.extra_env = dict(env or {})
        self.stderr_path = data_dir.parent / f"up-{port}.stderr"
        self.lines: list[str] = []
        self.seen: dict[int, float] = {}  # pid -> create_time of every descendant observed
        with open(self.stderr_path, "ab") as err:
            self.proc = subprocess.Popen(
                [
                    *CLI,
                    "up",
                    "--port",
                    str(port),
                    "--flower-port",
                    str(flower_port),
                    "--concurrency",
                    str(concurrency),
                    *args,
                ],
                cwd=ROOT,
                env=_env(data_dir, self.extra_env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_banner(self) -> list[str]:
        deadline = time.monotonic() + START_TIMEOUT_S
        while len(self.lines) < 4:
            if self.proc.poll() is not None:
                pytest.fail(f"contextq up exited with {self.proc.returncode}:\n{self.stderr}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"no banner within {START_TIMEOUT_S}s; stdout={self.lines}\n{self.stderr}"
                )
            time.sleep(0.1)
        self.record_tree()
        return self.lines[:4]

    def record_tree(self) -> list[psutil.Process]:
        procs = psutil.Process(self.proc.pid).children(recursive=True)
        for p in procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                self.seen[p.pid] = p.create_time()
        return procs

    def survivors(self) -> list[str]:
        alive = []
        for pid, created in self.seen.items():
            try:
                p = psutil.Process(pid)
                if p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(f"{pid} {' '.join(p.cmdline())[:120]}")
            except psutil.NoSuchProcess:
                continue
        return alive

    def part_pids(self, marker: str) -> list[int]:
        """Live direct children of `up` whose command line contains `marker`."""
        found = []
        for p in psutil.Process(self.proc.pid).children():
            with contextlib.suppress(psutil.Error):
                if p.status() != psutil.STATUS_ZOMBIE and marker in " ".join(p.cmdline()):
                    found.append(p.pid)
        return found

    def log(self, part: str) -> str:
        return (self.data_dir / "logs" / f"{part}.log").read_text(errors="replace")

    def restart_lines(self, part: str) -> list[str]:
        return [
            line
            for line in self.stderr.splitlines()
            if line.startswith(f"{part} exited unexpectedly")
        ]

    def valkey_servers(self) -> list[int]:
        # valkey rewrites its title to `valkey-server 127.0.0.1:PORT`; `up` runs it in DATA_DIR
        found = []
        for p in psutil.process_iter(["name", "cmdline"]):
            cmd = " ".join(p.info["cmdline"] or [])
            if "valkey-server" not in cmd and "valkey-server" not in (p.info["name"] or ""):
                continue
            try:
                if p.status() != psutil.STATUS_ZOMBIE and p.cwd().startswith(str(self.data_dir)):
                    found.append(p.pid)
            except psutil.Error:
                continue
        return found

    def kill_everything(self) -> None:
        """Safety net for a failed test: nothing this module started may survive."""
        if self.proc.poll() is None:
            self.record_tree()
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        for pid, created in self.seen.items():
            try:
                p = psutil.Process(pid)
                if p.create_time() == created:
                    p.kill()
            except psutil.NoSuchProcess:
                continue
        self._reader.join(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    data_dir = tmp_path_factory.mktemp("up") / "data"
    up = Up(data_dir, _free_port(), _free_port(), SMALL_WINDOW)
    try:
        up.wait_banner()
        yield up
    finally:
        up.kill_everything()


def _api(up: Up) -> str:
    return f"http://127.0.0.1:{up.port}"


def _key(up: Up) -> str:
    match = re.fullmatch(rf"API key: ({KEY_RE})", up.lines[3])
    assert match, up.lines
    return match.group(1)


def test_prints_exactly_the_four_lines(stack: Up) -> None:
    api = _api(stack)
    assert stack.lines[:3] == [
        f"API: {api}",
        f"Docs: {api}/docs",
        f"Flower: http://127.0.0.1:{stack.flower_port}",
    ]
    assert re.fullmatch(rf"API key: {KEY_RE}", stack.lines[3])
    assert len(stack.lines) == 4, "stdout carries the four lines only; the rest goes to stderr"
    assert f"Inspector: {api}/ui (sign in with the API key)" in stack.stderr.splitlines()
    page = httpx.get(f"{api}/ui", timeout=10)
    assert page.status_code == 200 and "contextq inspector" in page.text


def test_every_part_runs_as_a_child(stack: Up) -> None:
    cmdlines = [" ".join(p.cmdline()) for p in stack.record_tree()]
    for part in (
        "valkey-server",
        "uvicorn api.asgi:app",
        "worker.app worker",
        "worker.app beat",
        "worker.app flower",
    ):
        assert any(part in c for c in cmdlines), (part, cmdlines)
    assert len(stack.valkey_servers()) == 1


def test_healthz_and_docs(stack: Up) -> None:
    resp = httpx.get(f"{_api(stack)}/healthz", timeout=10)
    assert resp.status_code == 200
    assert resp.json() == {"database": "ok", "broker": "ok", "workers": "ok", "live_workers": 1}
    assert httpx.get(f"{_api(stack)}/docs", timeout=10).status_code == 200


def test_printed_key_works(stack: Up) -> None:
    api = _api(stack)
    ok = httpx.get(
        f"{api}/v1/files", headers={"Authorization": f"Bearer {_key(stack)}"}, timeout=10
    )
    assert ok.status_code == 200, ok.text
    assert "data" in ok.json()
    assert httpx.get(f"{api}/v1/files", timeout=10).status_code == 401
    bad = httpx.get(f"{api}/v1/files", headers={"Authorization": "Bearer cq_wrong"}, timeout=10)
    assert bad.status_code == 401


def test_flower_requires_basic_auth(stack: Up) -> None:
    url = f"http://127.0.0.1:{stack.flower_port}/"
    assert httpx.get(url, timeout=10).status_code == 401
    password = (stack.data_dir / "flower-password").read_text().strip()
    assert httpx.get(url, auth=("admin", "wrong"), timeout=10).status_code == 401
    assert httpx.get(url, auth=("admin", password), timeout=10).status_code == 200
    # the compose healthcheck (`contextq health flower`) needs no credentials
    assert httpx.get(f"{url}healthcheck", timeout=10).status_code == 200
    # the password never appears on a command line
    for p in stack.record_tree():
        assert password not in " ".join(p.cmdline())


def test_secrets_private_and_broker_locked(stack: Up) -> None:
    for name in ("dev-api-key", "flower-password", "valkey-password", "valkey/valkey.conf"):
        mode = stat.S_IMODE((stack.data_dir / name).stat().st_mode)
        assert mode == 0o600, (name, oct(mode))
    assert (stack.data_dir / "dev-api-key").read_text().strip() == _key(stack)
    conf = (stack.data_dir / "valkey" / "valkey.conf").read_text()
    for line in ("bind 127.0.0.1", "appendonly yes", "maxmemory-policy noeviction"):
        assert line in conf.splitlines()
    port = int(re.search(r"^port (\d+)$", conf, re.M).group(1))  # type: ignore[union-attr]
    password = (stack.data_dir / "valkey-password").read_text().strip()
    anonymous = redis.Redis(port=port, socket_timeout=5)
    with pytest.raises(redis.AuthenticationError):
        anonymous.ping()
    anonymous.close()
    client = redis.Redis(port=port, password=password, socket_timeout=5)
    assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
    assert client.config_get("appendonly") == {"appendonly": "yes"}
    client.close()


def test_keys_create_prints_one_key(stack: Up) -> None:
    out = subprocess.run(
        [*CLI, "keys", "create", "--owner", "alice"],
        cwd=ROOT,
        env=_env(stack.data_dir),
        capture_output=True,
        timeout=120,
        check=True,
    )
    lines = out.stdout.decode().splitlines()
    assert len(lines) == 1 and re.fullmatch(KEY_RE, lines[0]), out.stdout
    resp = httpx.get(
        f"{_api(stack)}/v1/files", headers={"Authorization": f"Bearer {lines[0]}"}, timeout=10
    )
    assert resp.status_code == 200


def test_second_up_on_same_data_dir_is_refused(stack: Up) -> None:
    out = subprocess.run(
        [*CLI, "up", "--port", str(_free_port()), "--flower-port", str(_free_port())],
        cwd=ROOT,
        env=_env(stack.data_dir),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 1
    assert b"already running" in out.stderr
    assert len(stack.valkey_servers()) == 1


def test_upload_cli_waits_for_ready_and_prints_table(stack: Up, tmp_path: Path) -> None:
    sample = tmp_path / "notes.txt"
    sample.write_text("sentinel-4417 " * 70)  # ~1 KB of text
    # no --key: the CLI falls back to DATA_DIR/dev-api-key
    out = subprocess.run(
        [*CLI, "upload", str(sample), "--api", _api(stack)],
        cwd=ROOT,
        env=_env(stack.data_dir),
        capture_output=True,
        timeout=180,
        check=False,
    )
    text = out.stdout.decode()
    assert out.returncode == 0, (text, out.stderr.decode()[-2000:])
    row = next(line for line in text.splitlines() if "notes.txt" in line)
    assert "ready" in row and "text" in row, text
    listed = httpx.get(
        f"{_api(stack)}/v1/files", timeout=10, headers={"Authorization": f"Bearer {_key(stack)}"}
    ).json()["data"]
    assert any(f["filename"] == "notes.txt" and f["status"] == "ready" for f in listed)


def test_upload_cli_fails_for_an_empty_file(stack: Up, tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    out = subprocess.run(
        [*CLI, "upload", str(empty), "--api", _api(stack), "--key", _key(stack)],
        cwd=ROOT,
        env=_env(stack.data_dir),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 1
    row = next(line for line in out.stdout.decode().splitlines() if "empty.txt" in line)
    assert "failed" in row and "422" in row


def test_context_cli_prints_the_filtering_report(stack: Up) -> None:
    api, headers = _api(stack), {"Authorization": f"Bearer {_key(stack)}"}
    conv = httpx.post(f"{api}/v1/conversations", json={"title": "cli"}, headers=headers, timeout=10)
    assert conv.status_code == 201, conv.text
    cid = conv.json()["id"]
    batch = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " * 20}
        for i in range(30)
    ]
    added = httpx.post(
        f"{api}/v1/conversations/{cid}/messages",
        json={"messages": batch},
        headers=headers,
        timeout=30,
    )
    assert added.status_code == 201, added.text
    out = subprocess.run(
        [
            *CLI,
            "context",
            cid,
            "--strategy",
            "sliding_window",
            "--options",
            '{"window_size": 10}',
            "--force",
            "--api",
            api,
        ],
        cwd=ROOT,
        env=_env(stack.data_dir),
        capture_output=True,
        timeout=120,
        check=False,
    )
    text = out.stdout.decode()
    assert out.returncode == 0, (text, out.stderr.decode()[-2000:])
    answer = httpx.get(
        f"{api}/v1/conversations/{cid}/context",
        headers=headers,
        timeout=10,
        params={
            "strategy": "sliding_window",
            "options": '{"window_size": 10}',
            "force_filter": "true",
        },
    ).json()
    removed = answer["removed_message_ids"]
    assert removed, answer
    kept = answer.get("kept_message_count", 30 - len(removed))
    assert re.search(rf"messages\s*│?\s*30 → {kept}\b", text), text
    assert removed[0] in text.replace("\n", "")
    assert "sliding_window" in text and "ms" in text
    bad = subprocess.run(
        [*CLI, "context", cid, "--options", "{not json", "--api", api],
        cwd=ROOT,
        env=_env(stack.data_dir),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 1 and b"not valid JSON" in bad.stderr


def _past_threshold(up: Up, headers: dict[str, str]) -> str:
    """A conversation whose history is past 80% of the 4000-token window."""
    api = _api(up)
    conv = httpx.post(f"{api}/v1/conversations", json={"title": "big"}, headers=headers, timeout=10)
    assert conv.status_code == 201, conv.text
    cid = conv.json()["id"]
    batch = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " + "lorem " * 90}
        for i in range(40)
    ]
    added = httpx.post(
        f"{api}/v1/conversations/{cid}/messages",
        json={"messages": batch},
        headers=headers,
        timeout=30,
    )
    assert added.status_code == 201, added.text
    return str(cid)


def test_request_id_is_taken_or_made_and_returned(stack: Up) -> None:
    api = _api(stack)
    given = httpx.get(f"{api}/healthz", headers={"X-Request-ID": "rid-given-1"}, timeout=10)
    assert given.headers["X-Request-ID"] == "rid-given-1"
    made = httpx.get(f"{api}/healthz", timeout=10)
    assert re.fullmatch(r"[0-9a-f]{32}", made.headers["X-Request-ID"])
    hostile = httpx.get(f"{api}/healthz", headers={"X-Request-ID": "a b<script>"}, timeout=10)
    assert re.fullmatch(r"[0-9a-f]{32}", hostile.headers["X-Request-ID"])
    # error answers carry it too: 401 without a key, 404 for an unknown file
    assert httpx.get(f"{api}/v1/files", timeout=10).headers["X-Request-ID"]
    missing = httpx.get(
        f"{api}/v1/files/no-such-file",
        headers={"Authorization": f"Bearer {_key(stack)}", "X-Request-ID": "rid-missing-2"},
        timeout=10,
    )
    assert missing.status_code == 404
    assert missing.headers["X-Request-ID"] == "rid-missing-2"

    # one access line per request: method, route template (not the raw path), status, duration
    def access_lines() -> list[str]:
        return [line for line in stack.log("api").splitlines() if "contextq.api.access" in line]

    _wait(lambda: any("rid-missing-2" in line for line in access_lines()), timeout=10, what="log")
    lines = access_lines()
    given_line = next(line for line in lines if "rid-given-1" in line)
    assert given_line.endswith("[request_id=rid-given-1]")
    (line,) = [line for line in lines if "rid-missing-2" in line]
    assert re.search(
        r" GET /v1/files/\{file_id\} 404 \d+\.\dms \[request_id=rid-missing-2\]$", line
    )
    assert "no-such-file" not in line


def test_context_filter_line_reaches_the_api_log(stack: Up) -> None:
    headers = {"Authorization": f"Bearer {_key(stack)}"}
    cid = _past_threshold(stack, headers)
    answer = httpx.get(
        f"{_api(stack)}/v1/conversations/{cid}/context",
        headers={**headers, "X-Request-ID": "rid-filter-3"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["filtered"] is True, "past the threshold, with no forcing"

    def filter_line() -> str | None:
        return next(
            (x for x in stack.log("api").splitlines() if f"Filtered conversation {cid}:" in x),
            None,
        )

    line = _wait(filter_line, timeout=10, what="[ContextFilter] line in api.log")
    assert re.search(
        rf"INFO contextq\.history \[\d+\] \[ContextFilter\] Filtered conversation {cid}: "
        r"40 → \d+ messages using token_budget in \d+\.\dms \[request_id=rid-filter-3\]$",
        line,
    ), line


def test_each_part_logs_the_context_management_line(stack: Up) -> None:
    for part in ("api", "worker", "beat"):
        assert INIT_LINE in stack.log(part), part


def test_ports_never_collide(stack: Up) -> None:
    conf = (stack.data_dir / "valkey" / "valkey.conf").read_text()
    broker_port = int(re.search(r"^port (\d+)$", conf, re.M).group(1))  # type: ignore[union-attr]
    assert len({broker_port, stack.port, stack.flower_port}) == 3


def test_broker_restart_keeps_port_password_and_queued_messages(stack: Up) -> None:
    conf = (stack.data_dir / "valkey" / "valkey.conf").read_text()
    port = int(re.search(r"^port (\d+)$", conf, re.M).group(1))  # type: ignore[union-attr]
    password = (stack.data_dir / "valkey-password").read_text().strip()
    (worker,) = stack.part_pids("worker.app worker")
    client = api_client(_api(stack), _key(stack))
    # files queued while the worker is stopped: a stopped worker takes at most the one
    # message its pending BRPOP asked for; the others wait in the broker's list
    os.killpg(worker, signal.SIGSTOP)
    try:
        queued = [
            upload(client, f"queued-{i}.txt", b"queued-sentinel-8812\n" * 20) for i in range(3)
        ]
        broker = redis.Redis(port=port, password=password, socket_timeout=5)
        assert broker.llen("files") >= 2
        time.sleep(1.5)  # appendfsync everysec
        (old,) = stack.valkey_servers()
        os.kill(old, signal.SIGKILL)
        _wait(
            lambda: [p for p in stack.valkey_servers() if p != old], timeout=30, what="new Valkey"
        )

        def answers() -> bool:
            with contextlib.suppress(redis.RedisError):
                return bool(broker.ping())
            return False

        _wait(answers, timeout=30, what="the restarted broker, same port and password")
        assert broker.llen("files") >= 2, "the queued messages survived the restart (AOF)"
        broker.close()
    finally:
        os.killpg(worker, signal.SIGCONT)
    for body in queued:
        assert wait_file_done(client, body["id"], timeout=90)["status"] == "ready"
    assert len(stack.restart_lines("valkey")) == 1, stack.stderr
    assert "valkey exited unexpectedly (killed by SIGKILL); restarting it in 1s" in stack.stderr
    assert httpx.get(f"{_api(stack)}/healthz", timeout=10).json()["broker"] == "ok"
    client.close()


def test_worker_sigkill_is_restarted_and_the_api_keeps_answering(stack: Up) -> None:
    api = _api(stack)
    (old,) = stack.part_pids("worker.app worker")
    group = [old, *(p.pid for p in psutil.Process(old).children())]
    assert len(group) >= 2, "the worker and its pool child"
    stack.record_tree()
    os.killpg(old, signal.SIGKILL)  # what the OOM killer would do to the whole group
    client = api_client(api, _key(stack))
    for _ in range(5):
        assert httpx.get(f"{api}/healthz", timeout=10).status_code == 200
        time.sleep(0.1)
    # uploaded while the worker is down or restarting: processed once it is back
    early = upload(client, "during.txt", b"during-restart-5531\n" * 20)
    new = _wait(
        lambda: [p for p in stack.part_pids("worker.app worker") if p != old],
        timeout=30,
        what="a new worker",
    )
    assert new and old not in new
    assert wait_file_done(client, early["id"], timeout=90)["status"] == "ready"
    after = upload(client, "after.txt", b"after-restart-7719\n" * 20)
    assert wait_file_done(client, after["id"], timeout=90)["status"] == "ready"
    assert httpx.get(f"{api}/healthz", timeout=10).status_code == 200
    lines = stack.restart_lines("worker")
    assert lines == [
        "worker exited unexpectedly (killed by SIGKILL); restarting it in 1s "
        "(death 1 within 5 minutes; up gives up at 5)"
    ], stack.stderr
    assert lines[0] in stack.log("up")
    # each start is marked in the part's log and in up.log, in the text format
    mark = f" INFO contextq.up [{stack.proc.pid}] started worker (pid {new[0]})"
    assert mark in stack.log("worker") and mark in stack.log("up")
    for pid in group:  # nothing of the old worker is left running
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    client.close()


def test_sigterm_stops_every_child(stack: Up) -> None:
    stack.record_tree()
    assert len(stack.seen) >= 6, stack.seen  # valkey, api, worker + pool child, beat, flower
    stack.proc.send_signal(signal.SIGTERM)
    assert stack.proc.wait(timeout=60) == 0, stack.stderr
    assert stack.survivors() == []
    assert stack.valkey_servers() == []
    assert not (stack.data_dir / "celerybeat.pid").exists()


def test_restart_reuses_key_and_a_dead_flower_comes_back(stack: Up) -> None:
    assert stack.proc.poll() is not None, "runs after the SIGTERM test"
    # a pid file left by a SIGKILLed `up`, naming a live process (pid reuse): beat must start
    (stack.data_dir / "celerybeat.pid").write_text(f"{os.getpid()}\n")
    again = Up(stack.data_dir, _free_port(), _free_port())
    try:
        lines = again.wait_banner()
        assert lines[3] == stack.lines[3], "the development key is reused"
        # the broker kept its data across the restart (AOF in DATA_DIR)
        assert list((stack.data_dir / "valkey" / "appendonlydir").iterdir())
        (flower,) = again.part_pids("worker.app flower")
        os.kill(flower, signal.SIGKILL)
        url = f"http://127.0.0.1:{again.flower_port}/healthcheck"
        _wait(
            lambda: [p for p in again.part_pids("worker.app flower") if p != flower],
            timeout=30,
            what="a new Flower",
        )
        _wait(lambda: _status(url) == 200, timeout=60, what="the new Flower to answer")
        assert again.proc.poll() is None, "a dead part no longer stops the stack"
        assert again.restart_lines("flower") == [
            "flower exited unexpectedly (killed by SIGKILL); restarting it in 1s "
            "(death 1 within 5 minutes; up gives up at 5)"
        ]
        again.record_tree()
        again.proc.send_signal(signal.SIGTERM)
        assert again.proc.wait(timeout=60) == 0, again.stderr
        assert again.survivors() == []
        assert again.valkey_servers() == []
    finally:
        again.kill_everything()


def _status(url: str) -> int | None:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return None


def _json_lines(text: str) -> list[dict[str, Any]]:
    """Every line of a log file, parsed: a line that is not one JSON object fails."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            record = json.loads(line)
        except ValueError:
            pytest.fail(f"line {number} is not JSON: {line[:300]!r}")
        assert isinstance(record, dict), line
        records.append(record)
    return records


def _kill_a_worker_and_its_pool_child(up: Up) -> None:
    """SIGKILL a pool child (the worker replaces it), then the worker (`up` restarts it)."""
    (worker,) = up.part_pids("worker.app --quiet worker")
    up.record_tree()
    os.kill(psutil.Process(worker).children()[0].pid, signal.SIGKILL)
    _wait(
        lambda: (
            len(psutil.Process(worker).children()) >= 1
            and any("exited with 'signal 9" in r["message"] for r in _json_lines(up.log("worker")))
        ),
        timeout=30,
        what="the worker to note its pool child's death and replace it",
    )
    os.kill(worker, signal.SIGKILL)

    def restarted() -> list[int]:  # its orphaned pool children come back to `up`: by up.log
        starts = [r["message"] for r in _json_lines(up.log("up"))]
        found = re.findall(r"^started worker \(pid (\d+)\)$", "\n".join(starts), re.M)
        return [int(pid) for pid in found if int(pid) != worker]

    (new,) = _wait(restarted, timeout=30, what="the worker to be started again")
    _wait(
        lambda: any(
            r["process"] == new and r["message"].endswith(" ready.")
            for r in _json_lines(up.log("worker"))
        ),
        timeout=60,
        what="the new worker to be ready",
    )


def _kill_an_api_process(up: Up) -> None:
    """SIGKILL one of the API's processes: uvicorn's supervisor starts another."""
    (supervisor,) = up.part_pids("uvicorn api.asgi:app")
    children = {p.pid for p in psutil.Process(supervisor).children()}  # + a resource tracker
    servers = [r["process"] for r in _json_lines(up.log("api")) if r["logger"] == "uvicorn.error"]
    victim = next(pid for pid in servers if pid in children)
    os.kill(victim, signal.SIGKILL)
    _wait(
        lambda: any(
            r["logger"] == "uvicorn.error" and r["message"] == f"Child process [{victim}] died"
            for r in _json_lines(up.log("api"))
        ),
        timeout=30,
        what="uvicorn's supervisor to log the death, as JSON",
    )


def _assert_every_line_is_json(up: Up) -> None:
    """docs/operations.md#running-the-service: every contextq process logs one JSON object per line
    (Valkey's and Flower's own files aside): the launcher's lines, uvicorn's supervisor, warnings,
    billiard's, Celery's shutdown lines included."""
    for part in ("up", "api", "worker", "beat"):
        records = _json_lines(up.log(part))
        assert records, part
        for record in records:
            assert {"time", "level", "logger", "message", "process"} <= set(record), record
        if part != "up":
            starts = [r for r in records if r["logger"] == "contextq.up"]
            assert starts and all(r["message"].startswith(f"started {part} (pid ") for r in starts)
    api = _json_lines(up.log("api"))
    assert any(r["message"].startswith("Started parent process [") for r in api)
    access = [r for r in api if r["logger"] == "contextq.api.access"]
    assert access and all(len(r["request_id"]) >= 1 for r in access)
    worker = _json_lines(up.log("worker"))
    assert sum(r["message"].startswith("started worker (pid ") for r in worker) == 2
    assert any(r["message"] == "worker: Warm shutdown (MainProcess)" for r in worker)
    up_log = [r["message"] for r in _json_lines(up.log("up"))]
    assert sum(m.startswith("started worker (pid ") for m in up_log) == 2


def test_json_logs_and_giving_up_after_five_deaths(tmp_path: Path) -> None:
    up = Up(
        tmp_path / "data",
        _free_port(),
        _free_port(),
        {**SMALL_WINDOW, "LOG_FORMAT": "json"},
        args=("--api-workers", "2"),  # uvicorn's supervisor runs: its lines are JSON too
    )
    try:
        up.wait_banner()
        headers = {"Authorization": f"Bearer {_key(up)}"}
        cid = _past_threshold(up, headers)
        answer = httpx.get(
            f"{_api(up)}/v1/conversations/{cid}/context",
            headers={**headers, "X-Request-ID": "rid-json-4"},
            timeout=30,
        )
        assert answer.json()["filtered"] is True

        def filter_record() -> dict[str, Any] | None:
            return next(
                (
                    r
                    for r in _json_lines(up.log("api"))
                    if f"Filtered conversation {cid}:" in r["message"]
                ),
                None,
            )

        record = _wait(filter_record, timeout=10, what="the JSON [ContextFilter] line")
        assert record["logger"] == "contextq.history" and record["level"] == "INFO"
        assert record["request_id"] == "rid-json-4"
        assert record["message"].startswith(f"[ContextFilter] Filtered conversation {cid}: 40 → ")

        def access_records() -> list[dict[str, Any]]:
            return [
                r
                for r in _json_lines(up.log("api"))
                if r["logger"] == "contextq.api.access" and r.get("request_id") == "rid-json-4"
            ]

        (ctx,) = _wait(access_records, timeout=10, what="the JSON access line")
        assert ctx["route"] == "/v1/conversations/{conversation_id}/context"
        assert ctx["method"] == "GET" and ctx["status"] == 200 and ctx["duration_ms"] > 0
        for part in ("api", "worker", "beat"):
            records = _json_lines(up.log(part))
            assert any(r["message"] == INIT_LINE for r in records), part
        _kill_a_worker_and_its_pool_child(up)
        _kill_an_api_process(up)

        # five deaths of one part within five minutes: up stops everything and exits 1
        killed: list[int] = []
        for death in range(1, 6):
            (flower,) = _wait(
                lambda: [p for p in up.part_pids("worker.app flower") if p not in killed],
                timeout=60,
                what=f"Flower to be started again after {death - 1} deaths",
            )
            up.record_tree()
            os.kill(flower, signal.SIGKILL)
            killed.append(flower)
            if death < 5:
                _wait(
                    lambda n=death: len(up.restart_lines("flower")) == n,  # type: ignore[misc]
                    timeout=10,
                    what=f"restart line {death}",
                )
        assert up.proc.wait(timeout=60) == 1
        delays = re.findall(r"restarting it in (\d+)s", "\n".join(up.restart_lines("flower")))
        assert delays == ["1", "2", "4", "8"], up.stderr
        assert "flower died 5 times within 5 minutes (last: killed by SIGKILL); giving up" in (
            up.stderr
        )
        messages = [r["message"] for r in _json_lines(up.log("up"))]
        assert sum(m.startswith("flower exited unexpectedly") for m in messages) == 4
        assert any("giving up" in m for m in messages)
        assert up.survivors() == []
        assert up.valkey_servers() == []
        _assert_every_line_is_json(up)
    finally:
        up.kill_everything()


def test_sigkill_of_up_leaves_no_server_behind(tmp_path: Path) -> None:
    up = Up(tmp_path / "data", _free_port(), _free_port())
    try:
        up.wait_banner()
        assert up.valkey_servers()
        up.proc.kill()  # no chance to clean up: the children's parent-death signal must
        up.proc.wait(timeout=10)
        deadline = time.monotonic() + 60
        while (up.survivors() or up.valkey_servers()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert up.survivors() == []
        assert up.valkey_servers() == []
    finally:
        up.kill_everything()


def test_port_in_use_is_reported_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run(
            [*CLI, "up", "--port", str(port), "--flower-port", str(_free_port())],
            cwd=ROOT,
            env=_env(tmp_path / "d"),
            capture_output=True,
            timeout=120,
            check=False,
        )
    assert out.returncode == 1
    assert f"port 127.0.0.1:{port} is in use" in out.stderr.decode()
    assert not (tmp_path / "d" / "valkey").exists()
