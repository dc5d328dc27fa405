"""A raw request body streamed into several sinks (a blob and a staged workspace file),
refused (`UploadTooLarge`: 413) before anything past MAX_UPLOAD_BYTES is read; a client
gone before its end is `BadRequest` (400)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from contextq.errors import BadRequest, UploadTooLarge


class Sink(Protocol):
    def write(self, data: bytes) -> object: ...


async def _flush_if_asked(sink: Sink) -> None:
    """A blob writer that sends parts while the body arrives (S3) flushes in a thread."""
    if getattr(sink, "wants_flush", False):
        await run_in_threadpool(sink.flush)  # type: ignore[attr-defined]


def _too_large(limit: int) -> UploadTooLarge:
    return UploadTooLarge(f"the body is larger than MAX_UPLOAD_BYTES ({limit} bytes)")


def declared_length(content_length: str | None, limit: int) -> int | None:
    """The Content-Length as sent (None when absent or not a number); UploadTooLarge
    when it alone is over `limit`."""
    try:
        declared = int(content_length) if content_length is not None else None
    except ValueError:
        return None
    if declared is not None and declared > limit:
        raise _too_large(limit)
    return declared


async def stream_body(body: AsyncIterator[bytes], sinks: Sequence[Sink], *, limit: int) -> int:
    """Write every chunk of `body` to each sink; returns the size. UploadTooLarge as soon
    as the size passes `limit` (the rest of the body is not read)."""
    size = 0
    try:
        async for chunk in body:
            if not chunk:
                continue
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            for sink in sinks:
                sink.write(chunk)
                await _flush_if_asked(sink)
    except ClientDisconnect:  # the client went away mid-body
        raise BadRequest("the upload was interrupted") from None
    return size
