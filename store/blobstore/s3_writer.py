"""A blob streamed to S3: hashed as it arrives, a few parts in memory at most.

Up to one part (S3_PART_SIZE_BYTES) the body stays in memory and is PUT under its
final key at `commit()`, once its sha256 is known. Past one part, `flush()` starts a
multipart upload to a temporary key and hands each full part to a sender thread (at
most IN_FLIGHT parts on the wire while the next one arrives: memory stays under
IN_FLIGHT + 2 parts); `commit()` sends the rest, completes the upload, and copies the
object to its final key (server side), or drops it when those bytes are already stored.
`write()` never touches the network (`wants_flush` tells an async caller to run
`flush()` in a thread), except as a backstop when a caller lets two parts pile up.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from store.blobstore.base import BlobTooLarge

IN_FLIGHT = 2  # parts being sent while the body keeps arriving


class Bucket(Protocol):
    """What a writer needs of the store it writes to (`S3BlobStore`)."""

    client: Any
    part_size: int

    def temp_key(self) -> str: ...

    def call(self, what: str, fn: Callable[..., Any], **kw: Any) -> Any: ...

    def place(self, sha256: str, size: int, put: Callable[[str], None]) -> None: ...

    def copy(self, source: str, target: str, size: int) -> None: ...

    def delete_key(self, key: str) -> None: ...


class S3BlobWriter:
    def __init__(self, store: Bucket, *, limit: int | None = None) -> None:
        self._store = store
        self.limit = limit
        self.size = 0
        self._digest = hashlib.sha256()
        self._buffer = bytearray()
        self._temp_key: str | None = None
        self._upload_id: str | None = None
        self._parts: list[dict[str, Any]] = []
        self._sending: deque[Future[dict[str, Any]]] = deque()
        self._sender: ThreadPoolExecutor | None = None
        self._done = False

    @property
    def wants_flush(self) -> bool:
        return len(self._buffer) >= self._store.part_size

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        self.size += len(data)
        if self.limit is not None and self.size > self.limit:
            self.abort()
            raise BlobTooLarge(self.limit)
        self._digest.update(data)
        self._buffer += data
        if len(self._buffer) >= 2 * self._store.part_size:
            self.flush()  # a caller that never flushes still holds at most two parts

    def flush(self) -> None:
        """Hand every full part buffered so far to the sender (blocks only while
        IN_FLIGHT parts are already on the wire)."""
        part = self._store.part_size
        while len(self._buffer) >= part:
            self._send_part(bytes(memoryview(self._buffer)[:part]))
            del self._buffer[:part]

    def _send_part(self, data: bytes) -> None:
        store = self._store
        if self._upload_id is None:
            self._temp_key = store.temp_key()
            answer = store.call(
                "CREATE MULTIPART", store.client.create_multipart_upload, Key=self._temp_key
            )
            self._upload_id = str(answer["UploadId"])
            self._sender = ThreadPoolExecutor(IN_FLIGHT, thread_name_prefix="blob-part")
        while len(self._sending) >= IN_FLIGHT:
            self._parts.append(self._sending.popleft().result())
        assert self._sender is not None
        number = len(self._parts) + len(self._sending) + 1
        self._sending.append(self._sender.submit(self._upload_part, number, data))

    def _upload_part(self, number: int, data: bytes) -> dict[str, Any]:
        store = self._store
        answer = store.call(
            "UPLOAD PART",
            store.client.upload_part,
            Key=self._temp_key,
            UploadId=self._upload_id,
            PartNumber=number,
            Body=data,
        )
        return {"ETag": answer["ETag"], "PartNumber": number}

    def _sent(self) -> None:
        """Wait for every part on the wire (their errors raise here)."""
        while self._sending:
            self._parts.append(self._sending.popleft().result())

    def commit(self) -> tuple[str, int]:
        """Store the blob under its sha256 (see the module doc); returns (sha256, size)."""
        sha = self._digest.hexdigest()
        try:
            self._store.place(sha, self.size, self._put)
        except BaseException:
            self.abort()
            raise
        self.abort()  # a temporary object or upload left over is removed
        self._done = True
        return sha, self.size

    def _put(self, key: str) -> None:
        store = self._store
        if self._upload_id is None:  # one part at most: hash-then-put
            store.call("PUT", store.client.put_object, Key=key, Body=bytes(self._buffer))
            self._buffer.clear()
            return
        if self._buffer:
            self._send_part(bytes(self._buffer))
            self._buffer.clear()
        self._sent()
        assert self._temp_key is not None
        store.call(
            "COMPLETE MULTIPART",
            store.client.complete_multipart_upload,
            Key=self._temp_key,
            UploadId=self._upload_id,
            MultipartUpload={"Parts": self._parts},
        )
        self._upload_id = None  # completed: the temporary object exists now
        store.copy(self._temp_key, key, self.size)

    def abort(self) -> None:
        """Forget the body: abort the multipart upload, delete a temporary object."""
        if self._done:
            return
        self._buffer = bytearray()
        self._stop_sender()
        store = self._store
        with contextlib.suppress(Exception):
            if self._upload_id is not None:
                store.call(
                    "ABORT",
                    store.client.abort_multipart_upload,
                    Key=self._temp_key,
                    UploadId=self._upload_id,
                )
                self._upload_id = None
            elif self._temp_key is not None:
                store.delete_key(self._temp_key)
            self._temp_key = None
        # a failure here leaves the sweep an abandoned upload or temporary object

    def _stop_sender(self) -> None:
        for pending in self._sending:
            pending.cancel()
        self._sending.clear()
        if self._sender is not None:
            self._sender.shutdown(wait=True)  # a part still on the wire ends first
            self._sender = None
