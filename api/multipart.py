"""Streaming multipart/form-data for uploads: the body goes straight to a blob.

python-multipart's `MultipartParser` runs over `request.stream()`; the part
named `file` is hashed and written chunk by chunk (BlobWriter), small text
fields are kept up to a few hundred bytes, anything else is refused. Over
the byte limit the temp file is removed and UploadTooLarge is raised before
the rest of the body is read. A store that sends parts while the body arrives (S3)
asks for it with `wants_flush`; the part goes out in a thread, off the event loop.
What is refused is refused with `contextq.errors` (`api/errors.py` maps them): an
unreadable form `ValidationFailed` (422), a malformed or interrupted body `BadRequest`
(400), one over the limit `UploadTooLarge` (413).
"""

from __future__ import annotations

import unicodedata
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, MultipartState, parse_options_header
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from contextq.errors import BadRequest, UploadTooLarge, ValidationFailed
from store.blobs import BlobStore, BlobTooLarge, BlobWriter

MAX_PARTS = 8
MAX_FIELD_BYTES = 1024
MAX_FILENAME_CHARS = 255
FRAMING_ALLOWANCE = 64 * 1024  # multipart boundaries, part headers and small fields


@dataclass
class ReceivedUpload:
    """A parsed upload whose blob is written but not yet committed: call
    `writer.commit()` (blocking: fsync + rename, or the last part and the copy to the
    blob's key) or `writer.abort()`. The part's own
    Content-Type is not kept: the worker detects the type from the bytes."""

    writer: BlobWriter
    filename: str
    fields: dict[str, str] = field(default_factory=dict)


def sanitize_filename(raw: str) -> str:
    """A display name: no path components, control/format chars (incl. bidi overrides),
    NUL or line breaks; NFC; at most 255 characters with the extension kept."""
    name = unicodedata.normalize("NFC", raw)
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(
        ch
        for ch in name
        if unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
    )
    name = name.strip().strip(".").strip()
    if not name:
        return "upload"
    if len(name) > MAX_FILENAME_CHARS:
        stem, dot, ext = name.rpartition(".")
        if dot and 0 < len(ext) <= 16:
            name = stem[: MAX_FILENAME_CHARS - len(ext) - 1] + "." + ext
        else:
            name = name[:MAX_FILENAME_CHARS]
    return name


class _Receiver:
    def __init__(self, *, blobs: BlobStore, limit: int) -> None:
        self.blobs = blobs
        self.limit = limit
        self.parts = 0
        self._header_field = bytearray()
        self._header_value = bytearray()
        self._headers: dict[bytes, bytes] = {}
        self._kind: str | None = None  # "file" | "field" | "skip"
        self._name = ""
        self._field = bytearray()
        self.writer: BlobWriter | None = None
        self.filename: str | None = None
        self.fields: dict[str, str] = {}
        self.file_done = False

    # callbacks ---------------------------------------------------------------------------
    def on_part_begin(self) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise ValidationFailed(f"too many form parts (at most {MAX_PARTS})")
        self._headers = {}
        self._kind = None

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._header_field += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._header_value += data[start:end]

    def on_header_end(self) -> None:
        self._headers[bytes(self._header_field).lower().strip()] = bytes(self._header_value)
        self._header_field.clear()
        self._header_value.clear()

    def on_headers_finished(self) -> None:
        disposition = self._headers.get(b"content-disposition", b"")
        _kind, options = parse_options_header(disposition.decode("latin-1"))
        name = options.get(b"name", b"").decode("utf-8", "replace")
        self._name = name
        if name == "file" and b"filename" in options:
            if self.writer is not None or self.file_done:
                raise ValidationFailed("send one file per request (one `file` part)")
            self.filename = options[b"filename"].decode("utf-8", "replace")
            self.writer = self.blobs.writer(limit=self.limit)
            self._kind = "file"
        elif name == "file":
            raise ValidationFailed("the `file` field must be a file upload (with a filename)")
        else:
            self._kind = "field"
            self._field.clear()

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self._kind == "file":
            assert self.writer is not None
            try:
                self.writer.write(data[start:end])
            except BlobTooLarge:
                raise UploadTooLarge(
                    f"the file is larger than MAX_UPLOAD_BYTES ({self.limit} bytes)"
                ) from None
        elif self._kind == "field":
            self._field += data[start:end]
            if len(self._field) > MAX_FIELD_BYTES:
                raise ValidationFailed(f"form field `{self._name[:40]}` is too long")

    def on_part_end(self) -> None:
        if self._kind == "file":
            self.file_done = True
        elif self._kind == "field":
            try:
                self.fields[self._name] = self._field.decode("utf-8")
            except UnicodeDecodeError:
                raise ValidationFailed(f"form field `{self._name[:40]}` is not UTF-8") from None
        self._kind = None

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.abort()


async def _feed(parser: MultipartParser, rx: _Receiver, chunk: bytes) -> None:
    """Parse one chunk of the body; a part the blob store asks to send goes in a thread."""
    try:
        parser.write(chunk)
    except FormParserError as exc:
        raise BadRequest(f"malformed multipart body: {exc}") from None
    if rx.writer is not None and rx.writer.wants_flush:
        await run_in_threadpool(rx.writer.flush)


async def receive_upload(
    *,
    content_type: str,
    content_length: str | None,
    body: AsyncIterator[bytes],
    blobs: BlobStore,
    limit: int,
) -> ReceivedUpload:
    """Parse the multipart body, streaming the `file` part into the blob store."""
    ctype, params = parse_options_header(content_type)
    if ctype != b"multipart/form-data" or not params.get(b"boundary"):
        raise ValidationFailed("send multipart/form-data with the file in a field named `file`")
    body_limit = limit + FRAMING_ALLOWANCE
    if content_length is not None:
        try:
            declared = int(content_length)
        except ValueError:
            raise BadRequest("invalid Content-Length") from None
        if declared > body_limit:
            raise UploadTooLarge(f"the file is larger than MAX_UPLOAD_BYTES ({limit} bytes)")
    rx = _Receiver(blobs=blobs, limit=limit)
    callbacks = {
        "on_part_begin": rx.on_part_begin,
        "on_header_field": rx.on_header_field,
        "on_header_value": rx.on_header_value,
        "on_header_end": rx.on_header_end,
        "on_headers_finished": rx.on_headers_finished,
        "on_part_data": rx.on_part_data,
        "on_part_end": rx.on_part_end,
    }
    try:
        try:
            parser = MultipartParser(params[b"boundary"], callbacks)  # type: ignore[arg-type]
        except FormParserError as exc:
            raise BadRequest(f"malformed multipart body: {exc}") from None
        received = 0
        try:
            async for chunk in body:
                received += len(chunk)
                if received > body_limit:
                    raise UploadTooLarge(
                        f"the file is larger than MAX_UPLOAD_BYTES ({limit} bytes)"
                    )
                await _feed(parser, rx, chunk)
        except ClientDisconnect:  # the client went away mid-upload; the temp file goes
            raise BadRequest("the upload was interrupted") from None
        if parser.state != MultipartState.END:
            raise BadRequest("malformed multipart body: it ends before the closing boundary")
        if rx.writer is None or not rx.file_done:
            raise ValidationFailed("no file: send it in a multipart field named `file`")
        if rx.writer.size == 0:
            raise ValidationFailed("the file is empty")
    except BaseException:
        rx.abort()
        raise
    return ReceivedUpload(
        writer=rx.writer,
        filename=sanitize_filename(rx.filename or ""),
        fields=rx.fields,
    )
