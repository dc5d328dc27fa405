"""Uploads from the SDK are streamed: a path or a seekable file goes out in chunks with its
Content-Length (never read whole into memory first), the async client reads it off the
event loop, a retry sends it whole again, and the server reads the form as it reads
httpx's own. Scripted servers (httpx.MockTransport) see exactly what is sent; the real
app in process and a real uvicorn check what the server makes of it."""

from __future__ import annotations

import asyncio
import hashlib
import io
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextq_client import AsyncClient, Client, PayloadTooLargeError, TransportError
from contextq_client.payload import CHUNK_BYTES
from tests.support.api import in_process_client

BASE = "http://testserver"
FILE_ROW = {
    "id": "f1",
    "filename": "x",
    "size_bytes": 1,
    "sha256": "0" * 64,
    "media_type": "text/plain",
    "file_type": "text",
    "category": "text",
    "status": "uploaded",
    "token_count": None,
    "processed_token_count": None,
    "truncation": None,
    "metadata": {},
    "cache_hit": False,
    "error": None,
    "conversation_id": None,
    "project_id": None,
    "created_at": "2024-01-01T00:00:00Z",
    "updated_at": "2024-01-01T00:00:00Z",
}


class CountingFile(io.RawIOBase):
    """A seekable binary file of `size` bytes made on the fly, that counts what is read
    and on which threads."""

    def __init__(self, size: int, name: str = "big.bin") -> None:
        self.size, self.pos, self.read_bytes, self.name = size, 0, 0, name
        self.threads: set[int] = set()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = base + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, buffer: Any) -> int:
        self.threads.add(threading.get_ident())
        n = max(0, min(len(buffer), self.size - self.pos))
        buffer[:n] = bytes([self.pos % 251]) * n
        self.pos += n
        self.read_bytes += n
        return n


class OneWayStream:
    """A pipe-like file object: read once, not seekable."""

    def __init__(self, data: bytes) -> None:
        self._fh = io.BytesIO(data)
        self.name = "piped.txt"

    def read(self, size: int = -1) -> bytes:
        return self._fh.read(size)

    def seekable(self) -> bool:
        return False


class Recorder(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """A scripted server that reads each request's body as the network would, chunk by
    chunk as the client yields it (httpx.MockTransport reads it whole first), and
    answers the next status of `answers`."""

    def __init__(self, answers: list[int]) -> None:
        self.answers = answers
        self.seen: list[dict[str, Any]] = []

    def _answer(self, request: httpx.Request, chunks: list[bytes]) -> httpx.Response:
        self.seen.append({"headers": request.headers, "chunks": chunks, "body": b"".join(chunks)})
        return httpx.Response(self.answers.pop(0), json=FILE_ROW)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._answer(request, list(request.stream))  # type: ignore[arg-type]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return self._answer(request, [c async for c in request.stream])  # type: ignore[union-attr]


def test_a_path_goes_out_in_chunks_with_its_length(tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    path.write_bytes(bytes(range(256)) * (3 * CHUNK_BYTES // 256 + 7))
    server = Recorder([202])
    with Client(BASE, api_key="k", http_client=httpx.Client(transport=server)) as client:
        client.files.upload(path, conversation_id="c1")
    (sent,) = server.seen
    assert int(sent["headers"]["content-length"]) == len(sent["body"])
    assert len(sent["chunks"]) >= 4  # the file in CHUNK_BYTES pieces, never one whole read
    assert max(len(c) for c in sent["chunks"]) <= CHUNK_BYTES
    assert path.read_bytes() in sent["body"] and b'name="conversation_id"\r\n\r\nc1' in sent["body"]


def test_the_async_client_reads_off_the_event_loop_and_a_retry_resends_it_whole() -> None:
    source = CountingFile(2 * CHUNK_BYTES + 100)
    server = Recorder([503, 202])

    async def scenario() -> int:
        http = httpx.AsyncClient(transport=server)
        async with AsyncClient(BASE, api_key="k", http_client=http, max_retry_wait=0) as client:
            await client.files.upload(source)
        return threading.get_ident()

    loop_thread = asyncio.run(scenario())
    assert source.threads and loop_thread not in source.threads
    first, second = server.seen
    assert first["body"] == second["body"]  # the retry after the 503 sent it whole again
    assert int(second["headers"]["content-length"]) == len(second["body"])
    assert source.read_bytes == 2 * source.size
    assert b'filename="big.bin"' in first["body"]


def test_a_one_way_stream_is_read_once_and_resent_on_a_retry() -> None:
    server = Recorder([503, 202])
    http = httpx.Client(transport=server)
    with Client(BASE, api_key="k", http_client=http, max_retry_wait=0) as client:
        client.files.upload(OneWayStream(b"piped bytes"))  # type: ignore[arg-type]
    first, second = server.seen
    assert first["body"] == second["body"]
    assert b'filename="piped.txt"' in first["body"] and b"piped bytes" in first["body"]


def test_a_missing_path_fails_before_any_request(tmp_path: Path) -> None:
    server = Recorder([202])
    http = httpx.Client(transport=server)
    with Client(BASE, api_key="k", http_client=http) as client, pytest.raises(OSError):
        client.files.upload(tmp_path / "nowhere.txt")
    assert server.seen == []


def test_the_server_reads_the_form_as_httpx_s_own(stack: Any, owner: Any, tmp_path: Path) -> None:
    """The same file under a name with a quote, a backslash and non-ASCII, sent by the SDK
    (sync from a path, async from a file object) and by httpx's `files=`: the same rows."""
    from api.main import create_app

    data = b"col,val\n" + b"row,1\n" * 50_000
    name = 'r\u00e9sum\u00e9 "final"\\v2.csv'
    path = tmp_path / "upload.csv"
    path.write_bytes(data)
    with in_process_client(owner.key) as http:
        plain = http.post("/v1/files", files={"file": (name, data)}).json()
        sdk = Client(BASE, api_key=owner.key, http_client=http)
        from_path = sdk.files.upload(path, filename=name)

    async def from_handle() -> Any:
        transport = httpx.ASGITransport(app=create_app())
        async with AsyncClient(
            BASE, api_key=owner.key, http_client=httpx.AsyncClient(transport=transport)
        ) as client:
            return await client.files.upload(io.BytesIO(data), filename=name)

    streamed = asyncio.run(from_handle())
    digest = hashlib.sha256(data).hexdigest()
    for row in (from_path, streamed):
        assert (row.filename, row.size_bytes, row.sha256) == (plain["filename"], len(data), digest)


def test_the_async_workspace_put_streams_a_path(stack: Any, owner: Any, tmp_path: Path) -> None:
    """A local file PUT with the async client (it used to be refused by httpx: a sync
    stream on an AsyncClient)."""
    from api.main import create_app

    path = tmp_path / "notes.txt"
    path.write_bytes(b"line\n" * 300_000)

    async def scenario() -> bytes:
        transport = httpx.ASGITransport(app=create_app())
        async with AsyncClient(
            BASE, api_key=owner.key, http_client=httpx.AsyncClient(transport=transport)
        ) as client:
            conv = await client.conversations.create(model="gpt-4o")
            entry = await client.workspace.put(conv.id, "notes.txt", path)
            assert entry.size_bytes == path.stat().st_size
            return await client.workspace.read(conv.id, "notes.txt")

    assert asyncio.run(scenario()) == path.read_bytes()


@pytest.mark.integration
@pytest.mark.stack_env(MAX_UPLOAD_BYTES="1000")
def test_over_the_limit_is_refused_before_the_file_is_read(api_server: Any, owner: Any) -> None:
    """Against uvicorn: the Content-Length the SDK sends lets the server answer 413 up
    front and close the connection; both clients stop reading the file then. The sync
    client reads the 413; the async one (httpcore over anyio) finds the connection reset
    before it reads the answer, with bytes in memory as with a file (it did so before
    uploads were streamed): a TransportError."""
    size = 512 * 1024 * 1024
    sync_source, async_source = CountingFile(size), CountingFile(size)
    client = Client(api_server.base_url, api_key=owner.key)
    with client, pytest.raises(PayloadTooLargeError) as refused:
        client.files.upload(sync_source)
    assert "MAX_UPLOAD_BYTES (1000 bytes)" in str(refused.value.detail)

    async def scenario() -> None:
        async with AsyncClient(api_server.base_url, api_key=owner.key) as client:
            with pytest.raises((PayloadTooLargeError, TransportError)):
                await client.files.upload(async_source)

    asyncio.run(scenario())
    for source in (sync_source, async_source):
        assert source.read_bytes < size // 4, source.read_bytes
