"""Two worker "hosts" with no shared disk (docs/scaling.md): one PostgreSQL, one Valkey, one S3
endpoint (moto's server mode: a real HTTP S3 API) and one API, all real processes; two
Celery workers, each with its own DATA_DIR. Every upload is processed by whichever
worker takes it, reads back the same bytes, and nothing is written under any
DATA_DIR/blobs. A worker SIGKILLed mid-task loses nothing."""

from __future__ import annotations

import csv
import hashlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

from store.tables import File, FileStatus
from tests.support.db import get_row
from tests.support.files import upload, wait_file_done
from tests.support.procs import wait_until
from tests.support.stack import StackEnv

pytestmark = [
    pytest.mark.integration,
    pytest.mark.postgres,
    pytest.mark.s3,
    pytest.mark.parametrize("stack", ["postgres+s3"], indirect=True),
]

PROCESSED = re.compile(r"file ([0-9a-f]{32}) processed: file_type=\S+ status=(\w+)")


def _host(stack: StackEnv, tmp_path: Path, name: str, **env: str) -> StackEnv:
    """The same database, broker and bucket; a DATA_DIR of its own."""
    return StackEnv(
        data_dir=tmp_path / name,
        redis_url=stack.redis_url,
        database_url=stack.database_url,
        overrides={**stack.overrides, **env},
    )


def _text(i: int) -> tuple[str, bytes, str]:
    return f"notes-{i}.txt", f"plain notes, sentinel TXT-{i}\n".encode() * 20, f"TXT-{i}"


def _markdown(i: int) -> tuple[str, bytes, str]:
    return f"readme-{i}.md", f"# Title {i}\n\nsentinel MD-{i} in a paragraph.\n".encode(), f"MD-{i}"


def _csv(i: int) -> tuple[str, bytes, str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "name", "note"])
    for row in range(40):
        writer.writerow([row, f"name {row}", f"CSV-{i}" if row == 0 else "plain"])
    return f"table-{i}.csv", buffer.getvalue().encode(), f"CSV-{i}"


def _docx(i: int) -> tuple[str, bytes, str]:
    import docx

    document = docx.Document()
    document.add_heading(f"Report {i}", level=1)
    document.add_paragraph(f"The sentinel is DOCX-{i}.")
    buffer = io.BytesIO()
    document.save(buffer)
    return f"report-{i}.docx", buffer.getvalue(), f"DOCX-{i}"


def _pdf(i: int) -> tuple[str, bytes, str]:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 6, f"Page one of manual {i}. The sentinel is PDF-{i}.")
    return f"manual-{i}.pdf", bytes(pdf.output()), f"PDF-{i}"


def _image(i: int) -> tuple[str, bytes, str]:
    from PIL import Image

    image = Image.new("RGB", (40 + i, 30), (i * 5 % 256, 120, 200))
    buffer = io.BytesIO()
    image.save(buffer, "PNG" if i % 2 else "JPEG")
    name = f"picture-{i}.png" if i % 2 else f"picture-{i}.jpg"
    return name, buffer.getvalue(), ""  # an image's content is its own bytes


KINDS = (_text, _markdown, _csv, _docx, _pdf, _image)


def _files(n: int) -> list[tuple[str, bytes, str]]:
    return [KINDS[i % len(KINDS)](i) for i in range(n)]


def _processed_by(worker: Any) -> dict[str, str]:
    """file id -> final status, from the worker's own log lines."""
    return {m.group(1): m.group(2) for m in PROCESSED.finditer(worker.log())}


def _check_content(client: Any, s3: Any, bucket: str, done: dict[str, Any], item: Any) -> None:
    name, data, sentinel = item
    assert done["status"] == "ready", (name, done)
    assert done["sha256"] == hashlib.sha256(data).hexdigest()
    stored = s3.get_object(Bucket=bucket, Key=f"cq/blobs/{done['sha256']}")["Body"].read()
    assert stored == data  # the upload, byte for byte, in the bucket
    content = client.get(f"/v1/files/{done['id']}/content")
    assert content.status_code == 200, content.text
    if sentinel:
        assert sentinel in content.text, (name, content.text[:300])
    else:  # an image artefact, streamed from the bucket: the exact bytes
        assert done["category"] == "image" and content.content == data


def test_two_workers_without_a_shared_disk(
    stack: StackEnv, tmp_path: Path, s3_server: Any, api_server: Any, client: Any,
    worker_factory: Any,
) -> None:  # fmt: skip
    host_b = _host(stack, tmp_path, "host-b")
    host_c = _host(stack, tmp_path, "host-c")
    worker_b = worker_factory(host_b, name="host-b")
    worker_c = worker_factory(host_c, name="host-c")
    items = _files(50)
    bodies = [upload(client, name, data) for name, data, _ in items]
    s3, bucket = s3_server.client(), stack.env["S3_BUCKET"]
    for body, item in zip(bodies, items, strict=True):
        _check_content(client, s3, bucket, wait_file_done(client, body["id"], timeout=120), item)
    by_b, by_c = _processed_by(worker_b), _processed_by(worker_c)
    ids = {b["id"] for b in bodies}
    assert by_b and by_c, "both workers must have processed files"
    assert set(by_b) | set(by_c) == ids
    for data_dir in (stack.data_dir, host_b.data_dir, host_c.data_dir):
        assert not (Path(data_dir) / "blobs").exists(), data_dir
    cached = {p.name for d in (host_b, host_c) for p in (d.data_dir / "cache" / "blobs").glob("*")}
    assert {b["sha256"] for b in bodies} <= cached  # what each worker read, on its own disk


@pytest.mark.stack_env(RECOVERY_SWEEP_INTERVAL_S="1")
def test_a_worker_host_killed_mid_task_loses_nothing(
    stack: StackEnv, tmp_path: Path, s3_server: Any, api_server: Any, client: Any,
    worker_factory: Any, beat_factory: Any,
) -> None:  # fmt: skip
    slow = worker_factory(_host(stack, tmp_path, "host-b", TEST_PROCESS_DELAY_S="30"))
    items = _files(6)
    bodies = [upload(client, name, data) for name, data, _ in items]

    def taken_by_slow() -> File | None:
        pids = {str(p) for p in slow.pool_pids()}
        for body in bodies:
            row = get_row(File, body["id"])
            holder = (row.lease_owner or "::").split(":")[1] if row else ""
            if row and row.status == FileStatus.PROCESSING and holder in pids:
                return row
        return None

    victim = wait_until(taken_by_slow, timeout=60, what="the slow host to take a file")
    slow.kill()  # the whole host: main process and pool child, nobody requeues
    worker_factory(_host(stack, tmp_path, "host-c"), name="host-c")
    beat_factory()  # the recovery sweep re-enqueues the row whose holder died
    s3, bucket = s3_server.client(), stack.env["S3_BUCKET"]
    for body, item in zip(bodies, items, strict=True):
        _check_content(client, s3, bucket, wait_file_done(client, body["id"], timeout=120), item)
    row = get_row(File, victim.id)
    assert row is not None and row.attempts == 2


def test_a_missing_bucket_stops_the_api_and_the_worker_at_start(
    stack: StackEnv, tmp_path: Path, s3_server: Any
) -> None:
    from tests.support.api import ApiServer
    from tests.support.worker import CeleryWorker

    wrong = stack.with_overrides(S3_BUCKET="no-such-bucket")
    api = ApiServer(wrong, log_dir=tmp_path / "logs").start(wait=False)
    worker = CeleryWorker(wrong, log_dir=tmp_path / "logs").start(wait=False)
    for process in (api, worker):
        wait_until(lambda p=process: not p.alive(), timeout=60, what=f"{process.name} to exit")
        assert process.proc is not None and process.proc.returncode != 0
        assert "the bucket no-such-bucket does not exist" in process.log(), process.log()[-2000:]
