"""HTTP section of bench/history.py: GET /context latency over HTTP.

Starts the real API (a uvicorn subprocess) on a temporary DATA_DIR with SQLite,
imports conversations of 100, 1 000, 10 000 and 100 000 messages (agent histories
with tool chains, batches of 10 000 per request), then measures
`GET /v1/conversations/{id}/context` (model gpt-4o, default token_budget strategy,
format openai) p50/p99 over HTTP, one request at a time, and prints the figures
against the target (p99 ≤ 50 ms at 10 000 messages).

No worker runs here (HISTORY_COMPACTION_MAX_TOKENS is set out of reach), so the
context is assembled from raw history: the worst case for the route. Run alone:

    .venv/bin/python bench/history_http.py [--sizes 100,1000,10000] [--requests 200]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_P99_MS = 50.0
TARGET_AT = 10_000
DEFAULT_SIZES = (100, 1_000, 10_000, 100_000)
BATCH = 10_000


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        {
            "DATA_DIR": str(data_dir),
            "ENVIRONMENT": "test",
            "HISTORY_COMPACTION_MAX_TOKENS": str(10**12),  # no compaction trigger: raw history
            "PYTHONPATH": str(ROOT),
            "ORT_DISABLE_TELEMETRY": "1",
        }
    )
    return env


def _prepare(data_dir: Path) -> str:
    """Migrate the temp database and create an API key (in this process)."""
    os.environ.update(_env(data_dir))
    os.environ.pop("DATABASE_URL", None)
    from contextq.settings import get_settings
    from store import db
    from store.keys import create_key

    get_settings.cache_clear()
    db.reset_engine()
    db.migrate()
    with db.session_scope() as session:
        key = create_key(session, owner_name="bench")
    db.reset_engine()
    return key


def _start_api(
    data_dir: Path, port: int, log: Path, redis_url: str | None = None
) -> subprocess.Popen[bytes]:
    """The API under uvicorn; with `redis_url`, it publishes its tasks there."""
    import httpx

    uvicorn = [
        sys.executable,
        "-m",
        "uvicorn",
        "api.main:app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--no-access-log",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            uvicorn,
            env=_env(data_dir) | ({"REDIS_URL": redis_url} if redis_url else {}),
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"API exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code in (200, 503):
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("API did not answer /healthz within 60 s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _import(client: Any, size: int) -> tuple[str, float, int]:
    from tests.api.history_data import agent_history

    history = agent_history(size, pinned=min(5, max(1, size // 100)))
    cid = client.post(
        "/v1/conversations",
        json={"model": "gpt-4o", "system_prompt": "You are a careful coding agent."},
    ).json()["id"]
    started = time.perf_counter()
    for i in range(0, len(history), BATCH):
        r = client.post(
            f"/v1/conversations/{cid}/messages", json={"messages": history[i : i + BATCH]}
        )
        r.raise_for_status()
    return cid, time.perf_counter() - started, len(history)


def _measure(client: Any, cid: str, requests: int) -> tuple[list[float], dict[str, Any], float]:
    """(warm latencies in ms, the last answer, the first request's latency in ms: the
    API process had parsed none of these messages yet)."""
    url = f"/v1/conversations/{cid}/context"
    t = time.perf_counter()
    answer: dict[str, Any] = client.get(url).raise_for_status().json()
    cold_ms = (time.perf_counter() - t) * 1000
    for _ in range(4):  # warm-up
        answer = client.get(url).raise_for_status().json()
    times = []
    for _ in range(requests):
        t = time.perf_counter()
        r = client.get(url)
        times.append((time.perf_counter() - t) * 1000)
        r.raise_for_status()
    return times, answer, cold_ms


def run(
    sizes: tuple[int, ...] = DEFAULT_SIZES,
    requests: int = 200,
    *,
    api: str | None = None,
    key: str | None = None,
) -> list[dict[str, Any]]:
    """Measure against a fresh local API, or against `api` (a running one) with `key`."""
    import httpx

    data_dir = Path(tempfile.mkdtemp(prefix="contextq-bench-history-"))
    rows: list[dict[str, Any]] = []
    proc = None
    try:
        if api is None:
            key = _prepare(data_dir)
            port = _free_port()
            proc = _start_api(data_dir, port, data_dir / "api.log")
            api = f"http://127.0.0.1:{port}"
        with httpx.Client(
            base_url=api.rstrip("/"),
            timeout=600,
            headers={"Authorization": f"Bearer {key}"},
        ) as client:
            for size in sizes:
                cid, import_s, count = _import(client, size)
                n = requests if size < 100_000 else max(20, requests // 4)
                times, answer, cold_ms = _measure(client, cid, n)
                rows.append(
                    {
                        "messages": count,
                        "import_s": import_s,
                        "p50_ms": _pct(times, 50),
                        "p99_ms": _pct(times, 99),
                        "mean_ms": statistics.fmean(times),
                        "requests": n,
                        "cold_ms": cold_ms,
                        "kept": answer["kept_message_count"],
                        "filtered": answer["filtered"],
                        "server_ms": answer["duration_ms"],
                        "removed": len(answer["removed_message_ids"]),
                    }
                )
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(data_dir, ignore_errors=True)
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    print("\nGET /v1/conversations/{id}/context over HTTP (uvicorn, SQLite, gpt-4o, token_budget)")
    print("first: the first context request for the conversation; p50/p99: the following ones;")
    print("server: duration_ms reported by the route (reads + engine) on the last request")
    print(
        f"{'messages':>9} {'import':>9} {'kept':>6} {'removed':>8} {'first':>9} {'p50':>9} "
        f"{'p99':>9} {'server':>9}  target"
    )
    for r in rows:
        target = ""
        if r["messages"] >= TARGET_AT * 0.95 and r["messages"] <= TARGET_AT:
            ok = r["p99_ms"] <= TARGET_P99_MS
            target = f"p99 <= {TARGET_P99_MS:.0f} ms: {'MET' if ok else 'MISSED'}"
        print(
            f"{r['messages']:>9} {r['import_s']:>8.2f}s {r['kept']:>6} {r['removed']:>8} "
            f"{r['cold_ms']:>7.1f}ms {r['p50_ms']:>7.1f}ms {r['p99_ms']:>7.1f}ms "
            f"{r['server_ms']:>7.1f}ms  {target}"
        )


def http_section(args: Any = None) -> list[dict[str, Any]]:
    """Entry point for bench/history.py's hook: reads `args.http_sizes`, `args.http_requests`,
    `args.api` and `args.key` when set (a running API instead of a fresh local one)."""
    sizes = tuple(getattr(args, "http_sizes", None) or DEFAULT_SIZES)
    requests = int(getattr(args, "http_requests", None) or 200)
    rows = run(sizes, requests, api=getattr(args, "api", None), key=getattr(args, "key", None))
    report(rows)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(",") if s)
    report(run(sizes, args.requests))


if __name__ == "__main__":
    main()
