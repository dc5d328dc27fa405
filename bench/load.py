"""Load test: concurrent clients against a real `contextq up`
(docs/operations.md#running-the-service).

Starts `contextq up` on a temporary DATA_DIR (embedded Valkey, SQLite, the API with its
default processes, a worker, beat, Flower), then runs CLIENTS asyncio clients for
DURATION seconds. Each client owns a conversation and loops over a mix of requests:

  upload   POST /v1/files                                   (1 KB text)       25 %
  append   POST /v1/conversations/{id}/messages             (one message)     30 %
  context  GET  /v1/conversations/{id}/context                                20 %
  poll     GET  /v1/files/{id}                              (one of its own)  25 %

It reports, per route, the count, p50 and p99 latency and the errors (any answer other
than the route's success status, or a transport error), then waits for every uploaded
file to end `ready`: a file that ends `failed` or never gets there is a lost file.

    .venv/bin/python -m bench.load                        # 50 clients, 60 s
    .venv/bin/python -m bench.load --clients 10 --duration 10
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MIX = (("upload", 25), ("append", 30), ("context", 20), ("poll", 25))
ROUTES = {
    "upload": ("POST /v1/files", 202),
    "append": ("POST /v1/conversations/{id}/messages", 201),
    "context": ("GET /v1/conversations/{id}/context", 200),
    "poll": ("GET /v1/files/{id}", 200),
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


@dataclass
class Tally:
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    files: list[str] = field(default_factory=list)


def start_up(data_dir: Path, port: int, flower_port: int) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    for var in ("REDIS_URL", "DATABASE_URL"):
        env.pop(var, None)
    argv = [sys.executable, "-m", "cli.main", "up", "--port", str(port)]
    proc = subprocess.Popen(
        [*argv, "--flower-port", str(flower_port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"contextq up exited ({proc.poll()}); see {data_dir}/logs")
        if line.startswith("API key: "):
            return proc, line.split(": ", 1)[1].strip()
    raise RuntimeError("contextq up did not start within 180 s")


async def timed(tally: Tally, name: str, call: Any) -> Any:
    route, expected = ROUTES[name]
    started = time.perf_counter()
    try:
        resp = await call
    except Exception as exc:
        tally.errors[route].append(f"{type(exc).__name__}: {exc}")
        return None
    tally.latency[route].append(time.perf_counter() - started)
    if resp.status_code != expected:
        tally.errors[route].append(f"{resp.status_code}: {resp.text[:200]}")
        return None
    return resp


async def client_loop(http: Any, tally: Tally, n: int, until: float, rng: random.Random) -> None:
    created = await http.post("/v1/conversations", json={"system_prompt": f"client {n}"})
    created.raise_for_status()
    cid = created.json()["id"]
    mine: list[str] = []
    names, weights = zip(*MIX, strict=True)
    i = 0
    while time.perf_counter() < until:
        i += 1
        action = rng.choices(names, weights)[0]
        if action == "poll" and not mine:
            action = "upload"
        if action == "upload":
            body = f"client {n} file {i}: the quick brown fox jumps over the lazy dog\n" * 16
            resp = await timed(
                tally,
                "upload",
                http.post("/v1/files", files={"file": (f"c{n}-{i}.txt", body.encode())}),
            )
            if resp is not None:
                mine.append(resp.json()["id"])
                tally.files.append(resp.json()["id"])
        elif action == "append":
            role = "user" if i % 2 else "assistant"
            message = {"role": role, "content": f"client {n} turn {i}: " + "words " * 30}
            post = http.post(f"/v1/conversations/{cid}/messages", json=message)
            await timed(tally, "append", post)
        elif action == "context":
            await timed(tally, "context", http.get(f"/v1/conversations/{cid}/context"))
        else:
            await timed(tally, "poll", http.get(f"/v1/files/{rng.choice(mine)}"))


async def lost_files(http: Any, ids: list[str], timeout_s: float) -> list[str]:
    """Files that did not end `ready` (long polls, 20 at a time)."""
    deadline = time.monotonic() + timeout_s
    semaphore = asyncio.Semaphore(20)

    async def wait_one(file_id: str) -> str | None:
        async with semaphore:
            while time.monotonic() < deadline:
                row = (await http.get(f"/v1/files/{file_id}", params={"wait": 10})).json()
                if row["status"] in ("ready", "failed"):
                    return None if row["status"] == "ready" else file_id
            return file_id

    results = await asyncio.gather(*(wait_one(f) for f in ids))
    return [f for f in results if f is not None]


async def run(api: str, key: str, clients: int, duration: float) -> tuple[Tally, list[str], float]:
    import httpx

    tally = Tally()
    limits = httpx.Limits(max_connections=clients + 10, max_keepalive_connections=clients + 10)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=api, headers=headers, timeout=60, limits=limits) as http:
        until = time.perf_counter() + duration
        started = time.perf_counter()
        await asyncio.gather(
            *(client_loop(http, tally, n, until, random.Random(n)) for n in range(clients))
        )
        elapsed = time.perf_counter() - started
        lost = await lost_files(http, tally.files, timeout_s=180)
    return tally, lost, elapsed


def report(tally: Tally, lost: list[str], elapsed: float, clients: int) -> int:
    total = sum(len(v) for v in tally.latency.values())
    errors = sum(len(v) for v in tally.errors.values())
    print(f"{clients} clients for {elapsed:.0f} s: {total} requests ({total / elapsed:.0f}/s)")
    print(f"{'route':<42} {'n':>6} {'p50':>9} {'p99':>9} {'errors':>7}")
    for route, _status in ROUTES.values():
        lat = tally.latency.get(route, [])
        print(
            f"{route:<42} {len(lat):>6} {pct(lat, 50) * 1000:>7.1f}ms "
            f"{pct(lat, 99) * 1000:>7.1f}ms {len(tally.errors.get(route, [])):>7}"
        )
    print(f"errors: {errors}; files uploaded: {len(tally.files)}; lost files: {len(lost)}")
    for route, messages in tally.errors.items():
        for message in messages[:3]:
            print(f"  {route}: {message}")
    return 0 if errors == 0 and not lost else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--keep", action="store_true", help="keep the temporary DATA_DIR")
    args = parser.parse_args()
    from cli.launcher.ports import pick_free_ports

    data_dir = Path(tempfile.mkdtemp(prefix="contextq-load-"))
    port, flower_port = pick_free_ports(2)
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, load average {load:.2f}; DATA_DIR {data_dir}")
    proc, key = start_up(data_dir, port, flower_port)
    try:
        tally, lost, elapsed = asyncio.run(
            run(f"http://127.0.0.1:{port}", key, args.clients, args.duration)
        )
        code = report(tally, lost, elapsed, args.clients)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
