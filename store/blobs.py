"""Content-addressed blobs on disk: temp file → fsync → rename, named by SHA-256.

Nothing on disk is ever named after user input.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from contextq.settings import Settings, get_settings


class BlobTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"upload is larger than {limit} bytes")
        self.limit = limit


class BlobStore:
    def __init__(self, root: Path, *, fsync: bool = True) -> None:
        self.root = root
        self.tmp = root / "tmp"
        self.fsync = fsync

    def path(self, sha256: str) -> Path:
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise ValueError("not a sha256 hex digest")
        return self.root / sha256[:2] / sha256[2:4] / sha256

    def _new_temp(self) -> tuple[int, str]:
        self.tmp.mkdir(parents=True, exist_ok=True)
        return tempfile.mkstemp(dir=self.tmp, prefix="blob-")

    def _commit(self, tmp_path: str, sha256: str) -> Path:
        final = self.path(sha256)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp_path, final)  # atomic; identical content may replace identical content
        if not self.fsync:
            return final
        dir_fd = os.open(final.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return final

    def writer(self, *, limit: int | None = None) -> BlobWriter:
        """A streaming writer: `write()` chunks, then `commit()` (or `abort()`)."""
        return BlobWriter(self, limit=limit)

    def put_bytes(self, data: bytes) -> str:
        """Store `data` (fsync + rename); returns its sha256."""
        w = self.writer()
        try:
            w.write(data)
            return w.commit()[0]
        except BaseException:
            w.abort()
            raise

    def read_bytes(self, sha256: str) -> bytes:
        return self.path(sha256).read_bytes()

    def delete(self, sha256: str) -> None:
        self.path(sha256).unlink(missing_ok=True)


class BlobWriter:
    """Hashes and writes a blob as it arrives; nothing is held in memory.

    Over `limit` bytes `write()` raises BlobTooLarge and the temp file is removed.
    """

    def __init__(self, store: BlobStore, *, limit: int | None = None) -> None:
        self._store = store
        self.limit = limit
        fd, self._tmp_path = store._new_temp()
        self._fh = os.fdopen(fd, "wb")
        self._digest = hashlib.sha256()
        self.size = 0
        self._done = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        self.size += len(data)
        if self.limit is not None and self.size > self.limit:
            self.abort()
            raise BlobTooLarge(self.limit)
        self._digest.update(data)
        self._fh.write(data)

    def commit(self) -> tuple[str, int]:
        """fsync, rename to the content hash; returns (sha256, size). When a blob with
        this hash is already stored (same bytes uploaded before) the temp file is dropped:
        no second fsync."""
        sha = self._digest.hexdigest()
        final = self._store.path(sha)
        try:
            if final.stat().st_size == self.size:
                # refresh mtime: blob clean-up spares blobs touched in the last minute, so
                # a delete of another row with these bytes cannot remove it under us
                os.utime(final)
                self.abort()
                return sha, self.size
        except FileNotFoundError:
            pass
        try:
            self._fh.flush()
            if self._store.fsync:
                os.fsync(self._fh.fileno())
            self._fh.close()
            self._store._commit(self._tmp_path, sha)
        except BaseException:
            self.abort()
            raise
        self._done = True
        return sha, self.size

    def abort(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            self._fh.close()
        finally:
            Path(self._tmp_path).unlink(missing_ok=True)


def get_blob_store(settings: Settings | None = None) -> BlobStore:
    settings = settings or get_settings()
    return BlobStore(settings.blob_dir, fsync=settings.blob_fsync)
