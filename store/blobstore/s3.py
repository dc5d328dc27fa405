"""The `s3` blob store: any S3-compatible object storage, through boto3.

Keys: `<S3_PREFIX>blobs/<sha256>` for blobs, `<S3_PREFIX>tmp/<uuid>` while a large
upload is in flight. An object never appears half-written under a blob's key:

- a body up to S3_PART_SIZE_BYTES is held in memory, hashed, then PUT under its final
  key (hash-then-put; S3 makes an object visible only once its PUT completed);
- a larger body goes out as a multipart upload to a temporary key while it arrives
  (memory: one part), hashed on the way; once complete it is copied server-side to
  its final key and the temporary object deleted;
- bytes already stored are not stored again: the writer pins the blob (see
  `store.blobstore.pins`, which also says why the sweep never deletes a blob an
  upload is about to reference) and finds it there.

Reads stream (`open`), and the engine gets its local file from a bounded cache under
`DATA_DIR/cache/blobs` (`store.blobstore.cache`). The sweep lists `blobs/` (Last-Modified
is the write time), and removes multipart uploads and temporary objects nobody added
to for the grace period.

Why boto3: it is AWS's own, well kept client and works with every S3-compatible server;
a client built per process is safe under Celery's prefork pool (obstore, measured
faster, hangs a forked child once its parent has used it: a Tokio runtime does not
survive fork); and it exposes what the sweep needs (listing and aborting multipart
uploads, multipart copy past 5 GiB).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from contextq.settings import Settings
from store.blobstore.base import (
    READ_CHUNK,
    BlobMissing,
    BlobStore,
    BlobStoreUnavailable,
    check_sha256,
)
from store.blobstore.cache import LocalCache
from store.blobstore.pins import Pins
from store.blobstore.s3_client import describe_error, make_client, not_found
from store.blobstore.s3_writer import S3BlobWriter

MAX_SINGLE_COPY = 5 * 1024**3  # CopyObject's own limit; above it a multipart copy


class S3Reader:
    """A streamed object (`store.blobs.BlobReader`)."""

    def __init__(self, body: Any, size: int) -> None:
        self._body = body
        self.size = size

    def read(self, n: int = -1) -> bytes:
        return bytes(self._body.read(None if n < 0 else n))

    def __iter__(self) -> Iterator[bytes]:
        yield from self._body.iter_chunks(READ_CHUNK)

    def close(self) -> None:
        self._body.close()

    def __enter__(self) -> S3Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class S3BlobStore(BlobStore):
    kind = "s3"

    def __init__(
        self,
        *,
        client: Any,
        bucket: str,
        prefix: str,
        pins: Pins,
        cache: LocalCache,
        part_size: int,
    ) -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix
        self.pins = pins
        self.cache = cache
        self.part_size = part_size

    @classmethod
    def from_settings(cls, settings: Settings) -> S3BlobStore:
        if not settings.S3_BUCKET:
            raise BlobStoreUnavailable("BLOB_STORE=s3 needs S3_BUCKET")
        return cls(
            client=make_client(settings),
            bucket=settings.S3_BUCKET,
            prefix=settings.s3_prefix,
            pins=Pins(
                settings.REDIS_URL,
                namespace=f"{settings.S3_BUCKET}/",
                pin_ttl_s=settings.BLOB_SWEEP_GRACE_S,
            ),
            cache=LocalCache(
                settings.data_dir / "cache" / "blobs", max_bytes=settings.BLOB_CACHE_MAX_BYTES
            ),
            part_size=settings.S3_PART_SIZE_BYTES,
        )

    # keys ------------------------------------------------------------------------------
    def key(self, sha256: str) -> str:
        return f"{self.prefix}blobs/{check_sha256(sha256)}"

    def temp_key(self) -> str:
        return f"{self.prefix}tmp/{uuid.uuid4().hex}"

    def where(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def call(self, what: str, fn: Callable[..., Any], **kw: Any) -> Any:
        """A client call whose failure is BlobStoreUnavailable saying what failed."""
        try:
            return fn(Bucket=self.bucket, **kw)
        except Exception as exc:
            if not_found(exc):
                raise BlobMissing(kw.get("Key", what)) from exc
            raise BlobStoreUnavailable(f"{what} on {self.where()}: {describe_error(exc)}") from exc

    # writing ---------------------------------------------------------------------------
    def writer(self, *, limit: int | None = None) -> S3BlobWriter:
        return S3BlobWriter(self, limit=limit)

    def head(self, key: str) -> dict[str, Any] | None:
        try:
            return dict(self.call("HEAD", self.client.head_object, Key=key))
        except BlobMissing:
            return None

    def place(self, sha256: str, size: int, put: Callable[[str], None]) -> None:
        """Make the blob stored under its key: pinned first; `put(key)` stores it only
        when no whole copy is there; pinned again after (see `store.blobstore.pins`)."""
        key = self.key(sha256)
        self.pins.pin(key)
        found = self.head(key)
        if found is not None and int(found["ContentLength"]) == size:
            return
        put(key)
        self.pins.pin(key)  # counted from the write, not from the first pin

    def copy(self, source: str, target: str, size: int) -> None:
        if size <= MAX_SINGLE_COPY:
            self.call(
                "COPY",
                self.client.copy_object,
                Key=target,
                CopySource={"Bucket": self.bucket, "Key": source},
            )
            return
        try:  # multipart copy (s3transfer), for objects past CopyObject's 5 GiB
            self.client.copy({"Bucket": self.bucket, "Key": source}, self.bucket, target)
        except Exception as exc:
            raise BlobStoreUnavailable(f"COPY on {self.where()}: {describe_error(exc)}") from exc

    def delete(self, sha256: str) -> None:
        self.delete_key(self.key(sha256))

    def delete_key(self, key: str) -> None:
        with contextlib.suppress(BlobMissing):
            self.call("DELETE", self.client.delete_object, Key=key)

    # reading ---------------------------------------------------------------------------
    def open(self, sha256: str) -> S3Reader:
        answer = self.call("GET", self.client.get_object, Key=self.key(sha256))
        return S3Reader(answer["Body"], int(answer["ContentLength"]))

    def size(self, sha256: str) -> int | None:
        found = self.head(self.key(sha256))
        return None if found is None else int(found["ContentLength"])

    @contextlib.contextmanager
    def local_copy(self, sha256: str) -> Iterator[Path]:
        size = self.size(sha256)
        if size is None:
            raise BlobMissing(sha256)
        with self.cache.local_copy(sha256, size=size, fetch=lambda: self.open(sha256)) as path:
            yield path

    # the sweep -------------------------------------------------------------------------
    def delete_if_unused(
        self, sha256: str, *, older_than: float, unreferenced: Callable[[], bool] | None = None
    ) -> bool:
        key = self.key(sha256)
        with self.pins.deleting(key) as held:
            if not held:  # a writer pinned it (or Valkey is away): keep it
                return False
            found = self.head(key)
            if found is None or _unix(found["LastModified"]) >= older_than:
                return False
            if unreferenced is not None and not unreferenced():
                return False
            self.delete_key(key)
            return True

    def stored(self, *, older_than: float) -> Iterator[str]:
        start = f"{self.prefix}blobs/"
        for obj in self._list(start):
            name = obj["Key"][len(start) :]
            if len(name) == 64 and _unix(obj["LastModified"]) < older_than:
                yield name

    def _list(self, prefix: str) -> Iterator[dict[str, Any]]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        )
        try:
            for page in pages:
                yield from page.get("Contents", [])
        except Exception as exc:
            raise BlobStoreUnavailable(f"LIST on {self.where()}: {describe_error(exc)}") from exc

    def remove_abandoned_temps(self, *, older_than: float) -> int:
        """Multipart uploads whose newest part is older than `older_than` (a part is
        sent every S3_PART_SIZE_BYTES, so an upload in flight keeps moving), and
        temporary objects a crash left between completion and the copy."""
        removed = 0
        prefix = f"{self.prefix}tmp/"
        uploads = self.call("LIST UPLOADS", self.client.list_multipart_uploads, Prefix=prefix)
        for upload in uploads.get("Uploads", []):
            if self._last_activity(upload) < older_than:
                with contextlib.suppress(BlobMissing):
                    self.call(
                        "ABORT",
                        self.client.abort_multipart_upload,
                        Key=upload["Key"],
                        UploadId=upload["UploadId"],
                    )
                removed += 1
        for obj in self._list(prefix):
            if _unix(obj["LastModified"]) < older_than:
                self.delete_key(obj["Key"])
                removed += 1
        return removed

    def _last_activity(self, upload: dict[str, Any]) -> float:
        latest = _unix(upload["Initiated"])
        try:
            parts = self.call(
                "LIST PARTS",
                self.client.list_parts,
                Key=upload["Key"],
                UploadId=upload["UploadId"],
            )
        except BlobMissing:
            return latest
        for part in parts.get("Parts", []):
            latest = max(latest, _unix(part["LastModified"]))
        return latest

    # start-up --------------------------------------------------------------------------
    def check(self) -> None:
        """Bucket there, credentials accepted, objects writable, readable and deletable
        under the prefix, Valkey reachable for the pins: else BlobStoreUnavailable."""
        where = f"BLOB_STORE=s3, {self.where()}"
        try:
            # a LIST first: unlike HEAD its errors have a body that names the cause
            self.client.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix, MaxKeys=1)
            probe = f"{self.prefix}tmp/start-check-{uuid.uuid4().hex}"
            self.client.put_object(Bucket=self.bucket, Key=probe, Body=b"contextq start check")
            self.client.head_object(Bucket=self.bucket, Key=probe)
            self.client.delete_object(Bucket=self.bucket, Key=probe)
            self.client.list_multipart_uploads(Bucket=self.bucket, Prefix=probe, MaxUploads=1)
        except Exception as exc:
            why = describe_error(exc, bucket=self.bucket)
            raise BlobStoreUnavailable(f"{where}: {why}") from exc
        try:
            self.pins._redis().ping()
        except BlobStoreUnavailable:
            raise
        except Exception as exc:
            raise BlobStoreUnavailable(
                f"{where}: Valkey/Redis at REDIS_URL cannot be reached for the blob pins ({exc})"
            ) from exc


def _unix(value: datetime) -> float:
    return value.timestamp()
