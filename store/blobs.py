"""The blob store: content-addressed bytes, named by their SHA-256 (docs/scaling.md).

One small interface (`store.blobstore.base`, named here too), two backends chosen once
by `BLOB_STORE` (settings):

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

from contextq.settings import Settings, get_settings
from store.blobstore.base import (
    READ_CHUNK,
    BlobMissing,
    BlobReader,
    BlobStore,
    BlobStoreUnavailable,
    BlobTooLarge,
    BlobWriter,
    check_sha256,
)
from store.blobstore.filesystem import FilesystemBlobStore
from store.blobstore.s3 import S3BlobStore

__all__ = [
    "READ_CHUNK",
    "BlobMissing",
    "BlobReader",
    "BlobStore",
    "BlobStoreUnavailable",
    "BlobTooLarge",
    "BlobWriter",
    "check_blob_store",
    "check_sha256",
    "forget_blob_stores",
    "get_blob_store",
]

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
        return S3BlobStore.from_settings(settings)
    return FilesystemBlobStore(settings.blob_dir, fsync=settings.blob_fsync)


def check_blob_store(settings: Settings | None = None) -> None:
    """Fail at start, not at the first upload: BlobStoreUnavailable with the reason."""
    get_blob_store(settings).check()
