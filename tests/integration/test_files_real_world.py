"""The real-world vector table (issue 12) through the real queue.

Real Valkey, a real `celery worker` subprocess, the API under uvicorn and a SQLite
file: every file of `tests/engine/files/real_world.py` is uploaded over HTTP, must end
`ready`, and its `GET /content` must hold what the engine test expects, with counts
that agree (processed ≤ whole, equal when nothing was cut). The GPS JPEG must come
back without its EXIF.
"""

from __future__ import annotations

import io

import pytest

from tests.engine.files.real_world import VECTORS, jpeg_with_gps
from tests.support.files import upload, wait_file_done

pytestmark = pytest.mark.integration


def test_real_world_files_through_the_real_queue(stack, worker, client, owner) -> None:
    uploads = [(vector, upload(client, vector.filename, vector.make())) for vector in VECTORS]
    failures = []
    for vector, up in uploads:
        body = wait_file_done(client, up["id"], timeout=120)
        if body["status"] != "ready":
            failures.append(f"{vector.filename}: {body['status']} error={body['error']!r}")
            continue
        text = client.get(f"/v1/files/{up['id']}/content").text
        failures += [
            f"{vector.filename}: {t!r} missing" for t in vector.must_include if t not in text
        ]
        failures += [
            f"{vector.filename}: {t!r} present" for t in vector.must_not_include if t in text
        ]
        whole, sent = body["token_count"], body["processed_token_count"]
        if sent > whole or (not body["truncation"]["truncated"] and sent != whole):
            failures.append(f"{vector.filename}: token_count {whole}, processed {sent}")
    assert not failures, "\n".join(failures)


def test_jpeg_comes_back_without_exif(stack, worker, client, owner) -> None:
    from PIL import Image

    up = upload(client, "holiday.jpg", jpeg_with_gps())
    body = wait_file_done(client, up["id"], timeout=60)
    assert body["status"] == "ready", body["error"]
    resp = client.get(f"/v1/files/{up['id']}/content")
    assert resp.headers["content-type"].startswith("image/jpeg")
    assert not Image.open(io.BytesIO(resp.content)).getexif()
    assert body["metadata"]["exif"]["camera"] == "Canon EOS 5D"
    assert body["metadata"]["exif"]["had_gps_location"] is True
