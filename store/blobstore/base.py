"""The blob store's interface: what every backend implements (`BlobStore`), the streams it
hands out (`BlobWriter`, `BlobReader`) and its errors.

The backends (`filesystem`, `s3`) build on this module; `store.blobs` picks one of them
and is what the rest of the code imports (it names all of these too).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

READ_CHUNK = 1024 * 1024


class BlobTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"upload is larger than {limit} bytes")
        self.limit = limit


class BlobMissing(FileNotFoundError):
    """No blob with this sha256 is stored (deleted, or never written whole)."""


class BlobStoreUnavailable(Exception):
    """The store cannot be used: misconfigured (at start) or unreachable (at run time).
    The message says what is wrong and what to set."""


class BlobWriter(Protocol):
    """A blob arriving in chunks: `write()` them, then `commit()` (or `abort()`).

    `write()` never blocks on the network: a backend that sends parts while the body
    arrives says so with `wants_flush`, and the caller runs `flush()` where blocking is
    allowed (an async route: in a thread). `commit()` may block."""

    size: int

    def write(self, data: bytes | bytearray | memoryview) -> None: ...

    @property
    def wants_flush(self) -> bool: ...

    def flush(self) -> None: ...

    def commit(self) -> tuple[str, int]: ...

    def abort(self) -> None: ...


class BlobReader(Protocol):
    """An open blob: `size`, `read(n)`, chunks by iteration; close it (or use `with`)."""

    size: int

    def read(self, n: int = -1) -> bytes: ...

    def __iter__(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...

    def __enter__(self) -> BlobReader: ...

    def __exit__(self, *exc: object) -> None: ...


class BlobStore(ABC):
    """What every backend implements. `sha256` arguments are 64 lowercase hex digits."""

    kind: str

    @abstractmethod
    def writer(self, *, limit: int | None = None) -> BlobWriter:
        """A streaming writer; over `limit` bytes `write()` raises BlobTooLarge."""

    @abstractmethod
    def open(self, sha256: str) -> BlobReader:
        """The stored bytes as a stream; BlobMissing when there is no such blob."""

    @abstractmethod
    def size(self, sha256: str) -> int | None:
        """The stored size, None when there is no such blob."""

    @abstractmethod
    def local_copy(self, sha256: str) -> AbstractContextManager[Path]:
        """A local file holding the blob's bytes while the block runs (read it, never
        write it); BlobMissing when there is no such blob."""

    @abstractmethod
    def delete_if_unused(
        self, sha256: str, *, older_than: float, unreferenced: Callable[[], bool] | None = None
    ) -> bool:
        """Delete the blob when no writer pinned or wrote it since `older_than` (unix
        time) and `unreferenced()` (asked at the last moment) agrees. True when deleted."""

    @abstractmethod
    def delete(self, sha256: str) -> None:
        """Remove the blob whatever points at it (the service never does: it deletes
        through `delete_if_unused`; tests use this to lose a blob on purpose)."""

    @abstractmethod
    def stored(self, *, older_than: float) -> Iterator[str]:
        """The sha256 of every blob last written before `older_than` (the sweep's list)."""

    @abstractmethod
    def remove_abandoned_temps(self, *, older_than: float) -> int:
        """Remove partial uploads nobody added to since `older_than` (a process died)."""

    @abstractmethod
    def check(self) -> None:
        """At start: BlobStoreUnavailable, saying what to fix, unless the store can be
        written, read and deleted from."""

    # derived ---------------------------------------------------------------------------
    def exists(self, sha256: str) -> bool:
        return self.size(sha256) is not None

    def read_bytes(self, sha256: str) -> bytes:
        """The whole blob (for small ones: cached conversions, image artefacts)."""
        with self.open(sha256) as reader:
            return reader.read()

    def put_stream(self, chunks: Iterable[bytes], *, limit: int | None = None) -> tuple[str, int]:
        """Store the bytes of `chunks`; returns (sha256, size)."""
        w = self.writer(limit=limit)
        try:
            for chunk in chunks:
                w.write(chunk)
                if w.wants_flush:
                    w.flush()
            return w.commit()
        except BaseException:
            w.abort()
            raise

    def put_bytes(self, data: bytes) -> str:
        """Store `data`; returns its sha256."""
        return self.put_stream([data])[0]


def check_sha256(sha256: str) -> str:
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ValueError("not a sha256 hex digest")
    return sha256
