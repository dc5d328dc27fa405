"""The blob store: content-addressed bytes, named by their SHA-256 (SPEC §13).

One small interface, two backends chosen once by `BLOB_STORE` (settings):

- `filesystem` (`store.blobstore.filesystem`): files under `DATA_DIR/blobs`, temp file →
  fsync → rename; a filesystem every host sees;
- `s3` (`store.blobstore.s3`): any S3-compatible object storage (`S3_BUCKET`,
  `S3_PREFIX`, `S3_ENDPOINT_URL`, the standard AWS credential variables); workers
  read through a bounded local cache under `DATA_DIR/cache/blobs`.

The rest of the code never sees where a blob lives: it writes through a `BlobWriter`
(stream in, sha256 out), reads with `open` / `read_bytes`, and hands the engine a
`local_copy` (a local file with those bytes for the length of a `with` block). Deleting
never races a writer that is about to reference a blob (`delete_if_unused`; each
backend's module says how).
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from contextq.settings import Settings, get_settings

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


_stores: dict[tuple[int, str, tuple[object, ...]], BlobStore] = {}
_stores_lock = threading.Lock()


def _config(settings: Settings) -> tuple[object, ...]:
    if settings.BLOB_STORE == "s3":
        return (
            settings.S3_BUCKET,
            settings.s3_prefix,
            settings.S3_ENDPOINT_URL,
            settings.REDIS_URL,
            settings.S3_PART_SIZE_BYTES,
            settings.BLOB_CACHE_MAX_BYTES,
            settings.data_dir,
            settings.BLOB_SWEEP_GRACE_S,
        )
    return (settings.blob_dir, settings.blob_fsync)


def get_blob_store(settings: Settings | None = None) -> BlobStore:
    """The configured store, built once per process (a forked child builds its own:
    an S3 client's connections are never shared across fork)."""
    settings = settings or get_settings()
    key = (os.getpid(), settings.BLOB_STORE, _config(settings))
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            store = _build(settings)
            _stores[key] = store
        return store


def forget_blob_stores() -> None:
    """Build the stores again on next use (after the environment changed: tests)."""
    with _stores_lock:
        _stores.clear()


def _build(settings: Settings) -> BlobStore:
    if settings.BLOB_STORE == "s3":
        from store.blobstore.s3 import S3BlobStore

        return S3BlobStore.from_settings(settings)
    from store.blobstore.filesystem import FilesystemBlobStore

    return FilesystemBlobStore(settings.blob_dir, fsync=settings.blob_fsync)


def check_blob_store(settings: Settings | None = None) -> None:
    """Fail at start, not at the first upload: BlobStoreUnavailable with the reason."""
    get_blob_store(settings).check()
