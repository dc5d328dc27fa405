"""Request bodies that read a local file while they are sent, never whole into memory.

A `Payload` is a body of literal byte pieces and at most one file source (a path, or a
seekable binary file object from where it stands); its length is known before anything
is sent, so it goes with a Content-Length and the server can refuse what is over its
limit before any of it is read. It is read again from the start each time it is
iterated, so a retried request (429/503) sends it whole again. `Client` reads it in the
calling thread; `AsyncClient`'s transport wraps it in `AsyncPayload`, which reads each
chunk in a worker thread so the event loop never waits on the disk.

httpx's own multipart (`files=`) streams a file object for the sync client but reads it
on the event loop for the async one (`MultipartStream.__aiter__` iterates the sync
reader) and takes no async iterables, so `multipart_body` writes the form itself.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
from collections.abc import AsyncIterator, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

CHUNK_BYTES = 1 << 20
TRANSFER_TIMEOUT_S = 600.0  # a large file streamed up or down

FileInput = str | Path | bytes | IO[bytes]
Piece = bytes | Path | IO[bytes]

# the HTML5 form encoding of a name or filename in Content-Disposition (as httpx and
# browsers write it): quotes and control characters percent-encoded, backslashes doubled
_FORM_ESCAPES = {ord('"'): "%22", ord("\\"): "\\\\"} | {
    c: f"%{c:02X}" for c in range(0x20) if c != 0x1B
}


def _open_from(stream: IO[bytes]) -> tuple[int, int]:
    """(where the stream stands, how many bytes follow) of a seekable stream."""
    start = stream.tell()
    end = stream.seek(0, os.SEEK_END)
    stream.seek(start)
    return start, end - start


class Payload:
    """A request body (`content=`) of byte pieces and files, read in CHUNK_BYTES chunks
    as it is sent; `length` is its Content-Length."""

    def __init__(self, pieces: Sequence[Piece]) -> None:
        self._pieces: list[bytes | Path | tuple[IO[bytes], int]] = []
        self.length = 0
        for piece in pieces:
            if isinstance(piece, bytes):
                self._pieces.append(piece)
                self.length += len(piece)
            elif isinstance(piece, Path):
                self.length += piece.stat().st_size  # OSError when missing: before sending
                self._pieces.append(piece)
            else:
                start, size = _open_from(piece)
                self._pieces.append((piece, start))
                self.length += size

    def __iter__(self) -> Generator[bytes, None, None]:
        for piece in self._pieces:
            if isinstance(piece, bytes):
                if piece:
                    yield piece
            elif isinstance(piece, Path):
                with piece.open("rb") as fh:
                    yield from _chunks(fh)
            else:
                stream, start = piece
                stream.seek(start)
                yield from _chunks(stream)

    def headers(self) -> dict[str, str]:
        return {"Content-Length": str(self.length)}


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK_BYTES):
        yield chunk


class AsyncPayload:
    """A `Payload` for `httpx.AsyncClient`: each chunk is read in a worker thread."""

    def __init__(self, payload: Payload) -> None:
        self.payload = payload

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = iter(self.payload)
        try:
            while (chunk := await asyncio.to_thread(next, chunks, None)) is not None:
                yield chunk
        finally:
            await asyncio.to_thread(chunks.close)  # a file left open by a cut-off send


def _stream_piece(file: IO[bytes]) -> Piece:
    """A file object as a piece: streamed when it can be read again (seekable), read
    once here otherwise (a pipe), so a retry can still resend it."""
    try:
        if file.seekable():
            return file
    except (AttributeError, OSError, ValueError):
        pass
    return file.read()


def put_body(content: bytes | Path) -> dict[str, Any]:
    """The request arguments of a raw-bytes PUT; a local file is streamed, with its
    Content-Length and the transfer timeout."""
    if isinstance(content, bytes):
        return {"content": content}
    payload = Payload([content])
    return {"content": payload, "headers": payload.headers(), "timeout": TRANSFER_TIMEOUT_S}


def _disposition(name: str, filename: str | None = None) -> bytes:
    text = f'Content-Disposition: form-data; name="{name.translate(_FORM_ESCAPES)}"'
    if filename is not None:
        text += f'; filename="{filename.translate(_FORM_ESCAPES)}"'
    return text.encode()


def multipart_body(
    file: FileInput, *, filename: str | None, fields: Mapping[str, str]
) -> dict[str, Any]:
    """The request arguments of a multipart/form-data upload: `fields` as text parts,
    then `file` in the part named `file`, streamed from its path or file object."""
    source: Piece
    if isinstance(file, bytes):
        name, source = filename or "upload.bin", file
    elif isinstance(file, str | Path):
        path = Path(file)
        name, source = filename or path.name, path
    else:
        name = filename or Path(str(getattr(file, "name", "upload.bin"))).name
        source = _stream_piece(file)
    boundary = os.urandom(16).hex().encode()
    pieces: list[Piece] = []
    for key, value in fields.items():
        pieces.append(b"--%s\r\n%s\r\n\r\n%s\r\n" % (boundary, _disposition(key), value.encode()))
    head = _disposition("file", name)
    media_type = mimetypes.guess_type(name)[0]  # as httpx does: none when it cannot tell
    if media_type is not None:
        head += b"\r\nContent-Type: " + media_type.encode()
    pieces += [b"--%s\r\n%s\r\n\r\n" % (boundary, head), source, b"\r\n--%s--\r\n" % boundary]
    payload = Payload(pieces)
    content_type = f"multipart/form-data; boundary={boundary.decode()}"
    return {"content": payload, "headers": {**payload.headers(), "Content-Type": content_type}}
