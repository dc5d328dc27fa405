"""Hostile and broken files through the real queue.

Each one ends `failed` with a reason a person can act on (or `ready` with safe
output), the worker survives them all, a file processed before them is left
untouched, and a normal file uploaded after them processes normally.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from store.tables import File
from tests.engine.files import media_samples as media
from tests.engine.files.test_hostile_core import VECTORS
from tests.support.db import get_row
from tests.support.files import upload, wait_file_done

pytestmark = pytest.mark.integration

MEDIA: list[tuple[str, Callable[[], bytes], str | None]] = [
    ("bomb.docx", lambda: media.zip_bomb_docx(declared=64 * 1024 * 1024), "zip bomb"),
    ("cut.pdf", lambda: media.pdf_bytes(3)[:600], "truncated or corrupt"),
    ("bomb.png", lambda: media.png_bomb_bytes(30_000, 30_000), "MAX_IMAGE_PIXELS"),
    (
        "bogus.mp3",
        lambda: b"ID3\x04\x00\x00\x00\x00\x00\x10" + b"\xff\xfb" * 50,
        "could not read audio",
    ),
]
# empty files are refused by the API itself (422), so they never reach the queue; a PNG
# named .csv is handled by its content by the full registry (the engine test's core
# registry has no image processor, hence its "no processor")
CASES = [
    (name, make, None if name == "polyglot.csv" else error)
    for name, make, error in VECTORS
    if not name.startswith("empty.")
] + MEDIA


def test_hostile_files_fail_clearly_and_the_worker_lives_on(stack, worker, client, owner) -> None:
    before = wait_file_done(client, upload(client, "before.txt", b"processed first\n")["id"])
    assert before["status"] == "ready"
    before_row = get_row(File, before["id"])

    uploads = [(name, error, upload(client, name, make())) for name, make, error in CASES]
    problems = []
    for name, error, up in uploads:
        body = wait_file_done(client, up["id"], timeout=120)
        if error is None:
            if body["status"] != "ready":
                problems.append(f"{name}: {body['status']} {body['error']!r}")
        elif body["status"] != "failed" or error not in (body["error"] or ""):
            problems.append(f"{name}: {body['status']} {body['error']!r} (wanted {error!r})")
        elif client.get(f"/v1/files/{up['id']}/content").status_code != 409:
            problems.append(f"{name}: failed file's content did not answer 409")
    assert not problems, "\n".join(problems)

    assert worker.alive()
    after = wait_file_done(client, upload(client, "after.txt", b"the next file is fine\n")["id"])
    assert after["status"] == "ready", after
    assert client.get(f"/v1/files/{after['id']}/content").text.startswith("the next file")
    after_row = get_row(File, before["id"])
    assert after_row is not None and before_row is not None
    assert (after_row.status, after_row.updated_at) == (before_row.status, before_row.updated_at)
