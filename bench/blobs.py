"""Blob storage benchmark (docs/scaling.md): BLOB_STORE=filesystem vs BLOB_STORE=s3, in one run.

For each backend it starts its own stack (the launcher `contextq up` uses: embedded
Valkey, the API under uvicorn, a real `celery worker`, SQLite in a temporary DATA_DIR);
for `s3` also an S3 endpoint on loopback: moto's server mode (`moto_server`, a real HTTP
S3 API; a test/bench dependency). Then:

  (a) upload -> `ready` of 1 KB text files through the API: p50/p95 one at a time, and
      throughput with concurrent clients;
  (b) one large CSV (default 1 GB; `--size-mb`) uploaded, streamed to the store and
      processed: time from the first byte sent to `ready`, and the peak RSS (VmHWM, reset
      just before through /proc/<pid>/clear_refs) of the API process and of the worker
      (main process and pool children), with the idle RSS before it.

  (c) the S3 server's own floor for the same file, without contextq (measured first, on
      the fresh server): boto3 sends it as a multipart upload (8 MiB parts, one at a
      time), completes it, copies it to another key (what an upload costs the server) and
      reads it back once (what the worker's download costs).

Targets for (b) with S3: peak RSS of the API and of the worker at most 150 MB above what
they held idle (the processes hold ~130-160 MB before any upload: their imports), and a
time at most 1.5 x the filesystem backend's in the same run.

    .venv/bin/python -m bench.blobs                 # full run (1 GB CSV; ~5 min on 2 cores)
    .venv/bin/python -m bench.blobs --size-mb 100   # a smaller CSV
    .venv/bin/python -m bench.blobs --quick         # 100 MB, fewer small files
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.files import make_csv  # noqa: E402
from bench.upload_queue import bench_upload, start_stack  # noqa: E402

MiB = 1024 * 1024
S3_ENV = ("BLOB_STORE", "S3_BUCKET", "S3_PREFIX", "S3_ENDPOINT_URL")


# --- the S3 endpoint ----------------------------------------------------------------------
def start_moto(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    from cli.launcher.ports import pick_free_ports

    port = pick_free_ports(1)[0]
    exe = Path(sys.executable).parent / "moto_server"
    if not exe.exists():
        raise SystemExit("moto_server is missing: .venv/bin/pip install -e '.[test,bench]'")
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(exe), "-H", "127.0.0.1", "-p", str(port)], stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    import boto3

    client = boto3.client("s3", endpoint_url=url, region_name="us-east-1")
    for _ in range(100):
        try:
            client.create_bucket(Bucket="contextq-bench")
            return proc, url
        except Exception:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("moto_server did not answer")


def use_backend(kind: str, endpoint: str | None) -> None:
    for var in S3_ENV:
        os.environ.pop(var, None)
    if kind == "s3":
        assert endpoint
        os.environ.update(
            BLOB_STORE="s3",
            S3_BUCKET="contextq-bench",
            S3_PREFIX=f"run-{os.getpid()}/",
            S3_ENDPOINT_URL=endpoint,
        )


# --- memory --------------------------------------------------------------------------------
def _status(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak(pid: int) -> None:
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := current RSS


def processes() -> dict[str, list[int]]:
    """The API and worker processes of the stack this process launched."""
    import psutil

    found: dict[str, list[int]] = {"api": [], "worker": []}
    for proc in psutil.Process(os.getpid()).children(recursive=True):
        cmd = " ".join(proc.cmdline())
        if "uvicorn" in cmd:
            found["api"].append(proc.pid)
        elif "celery" in cmd and " worker" in cmd:
            found["worker"].append(proc.pid)
    return found


def big_upload(stack: Any, path: Path) -> dict[str, Any]:
    import httpx

    pids = processes()
    idle = {k: max(_status(p, "VmRSS") for p in v) for k, v in pids.items() if v}
    for pid in (p for v in pids.values() for p in v):
        _reset_peak(pid)
    headers = {"Authorization": f"Bearer {stack.api_key}"}
    with httpx.Client(base_url=stack.api_url, headers=headers, timeout=600) as http:
        t0 = time.perf_counter()
        with path.open("rb") as fh:
            resp = http.post("/v1/files", files={"file": (path.name, fh, "text/csv")})
        resp.raise_for_status()
        accepted = time.perf_counter() - t0
        file_id = resp.json()["id"]
        while True:
            row = http.get(f"/v1/files/{file_id}", params={"wait": 30}).json()
            if row["status"] in ("ready", "failed"):
                break
        elapsed = time.perf_counter() - t0
    pids = processes()  # a pool child may have been replaced meanwhile
    peak = {k: max(_status(p, "VmHWM") for p in v) for k, v in pids.items() if v}
    return {
        "status": row["status"],
        "error": row.get("error"),
        "rows": (row.get("metadata") or {}).get("rows"),
        "accepted_s": accepted,
        "ready_s": elapsed,
        "idle_rss_mb": idle,
        "peak_rss_mb": peak,
    }


def s3_floor(endpoint: str, path: Path) -> dict[str, float]:
    """(c): the server's time for the bytes alone, through plain boto3 calls."""
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    bucket, key = "contextq-bench", f"floor-{os.getpid()}"
    t0 = time.perf_counter()
    upload = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    parts = []
    with path.open("rb") as fh:
        while chunk := fh.read(8 * MiB):
            n = len(parts) + 1
            answer = client.upload_part(
                Bucket=bucket, Key=key, UploadId=upload, PartNumber=n, Body=chunk
            )
            parts.append({"ETag": answer["ETag"], "PartNumber": n})
    t1 = time.perf_counter()
    client.complete_multipart_upload(
        Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": parts}
    )
    t2 = time.perf_counter()
    client.copy_object(Bucket=bucket, Key=key + "-copy", CopySource={"Bucket": bucket, "Key": key})
    t3 = time.perf_counter()
    for _ in client.get_object(Bucket=bucket, Key=key)["Body"].iter_chunks(MiB):
        pass
    t4 = time.perf_counter()
    for name in (key, key + "-copy"):
        client.delete_object(Bucket=bucket, Key=name)
    return {"parts_s": t1 - t0, "complete_s": t2 - t1, "copy_s": t3 - t2, "get_s": t4 - t3,
            "total_s": t4 - t0}  # fmt: skip


def run_backend(kind: str, args: argparse.Namespace, csv_path: Path, endpoint: str | None) -> Any:
    use_backend(kind, endpoint)
    data_dir = Path(tempfile.mkdtemp(prefix=f"contextq-bench-blobs-{kind}-"))
    stack = start_stack(data_dir, args.concurrency, 1)
    try:
        small = bench_upload(stack.api_url, stack.api_key, args.latency, args.throughput, 8)
        large = big_upload(stack, csv_path) if args.size_mb else None
    finally:
        stack.stop()
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    return {"small": small, "large": large}


def report(figures: dict[str, Any], size_mb: int) -> None:
    fs, s3 = figures["filesystem"], figures["s3"]
    for kind in ("filesystem", "s3"):
        small = figures[kind]["small"]
        print(
            f"(a) {kind:10s} upload->ready p50 {small['p50_s'] * 1000:.1f} ms, "
            f"p95 {small['p95_s'] * 1000:.1f} ms (n={small['n_latency']}); throughput "
            f"{small['throughput_per_s']:.1f} files/s (n={small['n_throughput']}, 8 clients)"
        )
    print(
        f"    s3/filesystem: p50 x{s3['small']['p50_s'] / fs['small']['p50_s']:.2f}, "
        f"throughput x{s3['small']['throughput_per_s'] / fs['small']['throughput_per_s']:.2f}"
    )
    if not size_mb:
        return
    for kind in ("filesystem", "s3"):
        big = figures[kind]["large"]
        idle, peak = big["idle_rss_mb"], big["peak_rss_mb"]
        print(
            f"(b) {kind:10s} {size_mb} MB CSV: {big['status']} in {big['ready_s']:.1f} s "
            f"(accepted after {big['accepted_s']:.1f} s, {big['rows']} rows); peak RSS "
            f"API {peak.get('api', 0):.0f} MB (idle {idle.get('api', 0):.0f}), "
            f"worker {peak.get('worker', 0):.0f} MB (idle {idle.get('worker', 0):.0f})"
        )
    floor = figures["s3_floor"]
    print(
        f"(c) the S3 server alone, same file: parts {floor['parts_s']:.1f} s, complete "
        f"{floor['complete_s']:.1f} s, copy {floor['copy_s']:.1f} s, read back "
        f"{floor['get_s']:.1f} s: {floor['total_s']:.1f} s"
    )
    big, base = s3["large"], fs["large"]
    ratio = big["ready_s"] / base["ready_s"]
    growth = {k: big["peak_rss_mb"][k] - big["idle_rss_mb"][k] for k in big["peak_rss_mb"]}
    print(
        f"    s3 time / (filesystem time + the server's floor): "
        f"x{big['ready_s'] / (base['ready_s'] + floor['total_s']):.2f}"
    )
    print(
        f"    s3 time / filesystem time: x{ratio:.2f} (target <= 1.5: "
        f"{'ok' if ratio <= 1.5 else 'MISSED'}); s3 RSS growth API "
        f"{growth.get('api', 0):.0f} MB, worker {growth.get('worker', 0):.0f} MB "
        f"(target <= 150: {'ok' if max(growth.values()) <= 150 else 'MISSED'})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1000, help="the large CSV; 0: none")
    parser.add_argument("--latency", type=int, default=60, help="small files one at a time")
    parser.add_argument("--throughput", type=int, default=200, help="small files, 8 clients")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="100 MB CSV, fewer small files")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--keep", action="store_true", help="keep the temporary DATA_DIRs")
    args = parser.parse_args()
    if args.quick:
        args.size_mb, args.latency, args.throughput = min(args.size_mb, 100), 20, 60
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench-secret")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    work = Path(tempfile.mkdtemp(prefix="contextq-bench-blobs-"))
    csv_path = work / "big.csv"
    if args.size_mb:
        make_csv(csv_path, args.size_mb * 1000 * 1000)
    moto, endpoint = start_moto(work / "moto.log")
    figures: dict[str, Any] = {"cpu_count": os.cpu_count(), "loadavg": os.getloadavg()}
    try:
        if args.size_mb:  # first, on a fresh server
            figures["s3_floor"] = s3_floor(endpoint, csv_path)
        for kind in ("filesystem", "s3"):
            figures[kind] = run_backend(kind, args, csv_path, endpoint)
    finally:
        moto.terminate()
        moto.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    print(f"machine: {os.cpu_count()} cores, load average at start {figures['loadavg'][0]:.2f}")
    report(figures, args.size_mb)
    if args.json:
        print(json.dumps(figures, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
