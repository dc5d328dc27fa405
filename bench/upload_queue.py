"""Queue benchmark: the framework's floor vs. the real upload path, in one run.

Starts its own stack on this machine (the same launcher as `contextq up`): an
embedded Valkey, a real `celery worker` (prefork, --concurrency 2) and the
real API under uvicorn (`--api-workers`, default the number of cores, as `up`),
with a temporary DATA_DIR and SQLite. Then measures

  (a) a Celery no-op task (`contextq.noop`): round-trip latency p50/p95, and
      throughput (send N, wait for every result);
  (b) one HTTP round trip: GET /healthz p50;
  (c) upload -> `ready` of 1 KB text files through the API: latency p50/p95
      (one at a time) and throughput (concurrent uploads);

and prints the ratios against the targets:

  p50 upload->ready  <=  2 x no-op round trip p50 + one HTTP round trip p50
  file throughput    >=  50% of no-op throughput

    .venv/bin/python -m bench.upload_queue              # full run (~2 min on 2 cores)
    .venv/bin/python -m bench.upload_queue --quick      # smaller counts
    .venv/bin/python -m bench.upload_queue --no-upload  # the floor only
    .venv/bin/python bench/upload_queue.py              # the same, run as a script
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    idx = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[idx]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def start_stack(data_dir: Path, concurrency: int, api_workers: int) -> Any:
    os.environ["DATA_DIR"] = str(data_dir)
    for var in ("REDIS_URL", "DATABASE_URL"):
        os.environ.pop(var, None)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    from cli.launcher import Stack, UpOptions
    from cli.launcher.ports import pick_free_ports
    from contextq.settings import get_settings

    get_settings.cache_clear()
    options = UpOptions(
        port=pick_free_ports(1)[0],
        concurrency=concurrency,
        api_workers=api_workers,
        timeout_s=120,
        parts=("api", "worker"),
    )
    stack = Stack(get_settings(), options, say=lambda m: print(m, file=sys.stderr))
    t0 = time.perf_counter()
    stack.prepare()
    stack.start()
    try:
        stack.wait_ready()
    except BaseException:
        stack.stop()
        raise
    print(
        f"stack ready in {time.perf_counter() - t0:.1f}s "
        f"(API {stack.api_url} x{api_workers} processes, worker --concurrency {concurrency})",
        file=sys.stderr,
    )
    return stack


def celery_client(redis_url: str) -> Any:
    from celery import Celery

    from contextq.settings import Settings
    from worker.config import celery_config

    app = Celery("contextq-bench", set_as_current=False)
    app.conf.update(celery_config(Settings(REDIS_URL=redis_url)))
    return app


def bench_noop(app: Any, n_latency: int, n_throughput: int) -> dict[str, float]:
    from worker import names

    def once() -> None:
        app.send_task(names.NOOP, expires=60).get(timeout=30)

    for _ in range(20):  # warm up connections and pool children
        once()
    lat = []
    for _ in range(n_latency):
        t0 = time.perf_counter()
        once()
        lat.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    results = [app.send_task(names.NOOP, expires=120) for _ in range(n_throughput)]
    for r in results:
        r.get(timeout=120)
    elapsed = time.perf_counter() - t0
    return {
        "p50_s": pct(lat, 50),
        "p95_s": pct(lat, 95),
        "throughput_per_s": n_throughput / elapsed,
        "n_latency": n_latency,
        "n_throughput": n_throughput,
    }


def bench_http(api_url: str, n: int) -> dict[str, float]:
    import httpx

    with httpx.Client(base_url=api_url, timeout=10) as http:
        for _ in range(10):
            http.get("/healthz").raise_for_status()
        lat = []
        for _ in range(n):
            t0 = time.perf_counter()
            http.get("/healthz").raise_for_status()
            lat.append(time.perf_counter() - t0)
    return {"p50_s": pct(lat, 50), "p95_s": pct(lat, 95), "n": n}


def _payload(i: int) -> bytes:
    line = f"bench file {i}: the quick brown fox jumps over the lazy dog.\n".encode()
    body = (line * (1024 // len(line) + 1))[:1024]
    return body


def _upload(http: Any, i: int) -> str:
    resp = http.post("/v1/files", files={"file": (f"bench-{i}.txt", _payload(i), "text/plain")})
    if resp.status_code != 202:
        raise RuntimeError(f"upload answered {resp.status_code}: {resp.text[:300]}")
    return str(resp.json()["id"])


def _wait_ready(http: Any, file_id: str, timeout_s: float = 120) -> dict[str, Any]:
    """Long poll (`?wait=`): the API answers as soon as the worker publishes the final status."""
    deadline = time.perf_counter() + timeout_s
    while True:
        row: dict[str, Any] = http.get(f"/v1/files/{file_id}", params={"wait": 30}).json()
        status = row["status"]
        if status == "ready":
            return row
        if status == "failed":
            raise RuntimeError(f"file {file_id} failed: {row.get('error')}")
        if time.perf_counter() > deadline:
            raise TimeoutError(f"file {file_id} still {status}")


def _seconds_between(start: str | None, end: str | None) -> float | None:
    from datetime import datetime

    if not start or not end:
        return None
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def bench_upload(
    api_url: str, key: str, n_latency: int, n_throughput: int, threads: int
) -> dict[str, float]:
    import httpx

    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=api_url, headers=headers, timeout=60) as http:
        for i in range(10):  # warm up: tokenizer load in each pool child
            _wait_ready(http, _upload(http, -1 - i))
        lat, post, server = [], [], []
        for i in range(n_latency):
            t0 = time.perf_counter()
            fid = _upload(http, i)
            post.append(time.perf_counter() - t0)
            row = _wait_ready(http, fid)
            lat.append(time.perf_counter() - t0)
            server.append(_seconds_between(row.get("created_at"), row.get("updated_at")))

    # throughput: `threads` clients upload concurrently; each polls its own files
    local = threading.local()

    def client() -> Any:
        if not hasattr(local, "http"):
            local.http = httpx.Client(base_url=api_url, headers=headers, timeout=60)
        return local.http

    def upload_only(i: int) -> str:
        return _upload(client(), 100_000 + i)

    def wait(fid: str) -> None:
        _wait_ready(client(), fid)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        ids = list(pool.map(upload_only, range(n_throughput)))
        upload_done = time.perf_counter() - t0
        list(pool.map(wait, ids))
    elapsed = time.perf_counter() - t0
    return {
        "p50_s": pct(lat, 50),
        "p95_s": pct(lat, 95),
        "post_p50_s": pct(post, 50),
        "row_created_to_ready_p50_s": pct([x for x in server if x is not None], 50),
        "throughput_per_s": n_throughput / elapsed,
        "uploads_accepted_per_s": n_throughput / upload_done,
        "n_latency": n_latency,
        "n_throughput": n_throughput,
        "threads": threads,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument(
        "--api-workers", type=int, default=os.cpu_count() or 1, help="API processes (up's default)"
    )
    parser.add_argument("--noop-latency", type=int, default=300)
    parser.add_argument("--noop-throughput", type=int, default=2000)
    parser.add_argument("--http", type=int, default=300)
    parser.add_argument("--upload-latency", type=int, default=100)
    parser.add_argument("--upload-throughput", type=int, default=400)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="a fifth of every count")
    parser.add_argument("--no-upload", action="store_true", help="measure the floor only")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--keep", action="store_true", help="keep the temporary DATA_DIR")
    args = parser.parse_args()
    if args.quick:
        for name in (
            "noop_latency",
            "noop_throughput",
            "http",
            "upload_latency",
            "upload_throughput",
        ):
            setattr(args, name, max(20, getattr(args, name) // 5))

    data_dir = Path(tempfile.mkdtemp(prefix="contextq-bench-"))
    stack = start_stack(data_dir, args.concurrency, args.api_workers)
    figures: dict[str, Any] = {
        "cpu_count": os.cpu_count(),
        "worker_concurrency": args.concurrency,
        "api_workers": args.api_workers,
        "loadavg_at_start": os.getloadavg(),
    }
    try:
        app = celery_client(stack.redis_url)
        try:
            figures["noop"] = noop = bench_noop(app, args.noop_latency, args.noop_throughput)
        finally:
            app.close()
        figures["http"] = http = bench_http(stack.api_url, args.http)
        print(
            f"machine: {os.cpu_count()} cores, load average at start "
            f"{figures['loadavg_at_start'][0]:.2f}"
        )
        print(
            f"(a) no-op task round trip: p50 {ms(noop['p50_s'])}, p95 {ms(noop['p95_s'])} "
            f"(n={noop['n_latency']}); throughput {noop['throughput_per_s']:.0f} tasks/s "
            f"(n={noop['n_throughput']})"
        )
        print(
            f"(b) HTTP round trip GET /healthz: p50 {ms(http['p50_s'])}, "
            f"p95 {ms(http['p95_s'])} (n={http['n']})"
        )
        if not args.no_upload:
            figures["upload"] = up = bench_upload(
                stack.api_url,
                stack.api_key,
                args.upload_latency,
                args.upload_throughput,
                args.threads,
            )
            target = 2 * noop["p50_s"] + http["p50_s"]
            lat_ratio = up["p50_s"] / target
            tput_ratio = up["throughput_per_s"] / noop["throughput_per_s"]
            figures["targets"] = {
                "upload_p50_target_s": target,
                "latency_ratio": lat_ratio,
                "latency_ok": lat_ratio <= 1.0,
                "throughput_ratio": tput_ratio,
                "throughput_ok": tput_ratio >= 0.5,
            }
            print(
                f"(c) upload -> ready, 1 KB text: p50 {ms(up['p50_s'])}, p95 {ms(up['p95_s'])} "
                f"(n={up['n_latency']}); throughput {up['throughput_per_s']:.0f} files/s "
                f"(n={up['n_throughput']}, {up['threads']} client threads; uploads accepted "
                f"at {up['uploads_accepted_per_s']:.0f}/s)"
            )
            print(
                f"    of which: POST /v1/files -> 202 p50 {ms(up['post_p50_s'])}; row created "
                f"-> ready (server clock) p50 {ms(up['row_created_to_ready_p50_s'])}"
            )
            print(
                f"target latency: p50 upload->ready {ms(up['p50_s'])} vs 2 x {ms(noop['p50_s'])}"
                f" + {ms(http['p50_s'])} = {ms(target)} -> ratio {lat_ratio:.2f} "
                f"({'met' if lat_ratio <= 1 else 'missed'}; <= 1.00 meets it)"
            )
            print(
                f"target throughput: {up['throughput_per_s']:.0f} files/s vs "
                f"{noop['throughput_per_s']:.0f} no-op/s -> {tput_ratio:.0%} "
                f"({'met' if tput_ratio >= 0.5 else 'missed'}; >= 50% meets it)"
            )
        if args.json:
            print(json.dumps(figures, indent=2))
    finally:
        stack.stop()
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
