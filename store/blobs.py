"""Content-addressed blobs on disk: temp file → fsync → rename, named by SHA-256.

Nothing on disk is ever named after user input.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

from contextq.settings import Settings, get_settings


class BlobTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"upload is larger than {limit} bytes")
        self.limit = limit


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.tmp = root / "tmp"

    def path(self, sha256: str) -> Path:
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise ValueError("not a sha256 hex digest")
        return self.root / sha256[:2] / sha256[2:4] / sha256

    def exists(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def _new_temp(self) -> tuple[int, str]:
        self.tmp.mkdir(parents=True, exist_ok=True)
        return tempfile.mkstemp(dir=self.tmp, prefix="blob-")

    def _commit(self, tmp_path: str, sha256: str) -> Path:
        final = self.path(sha256)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp_path, final)  # atomic; identical content may replace identical content
        dir_fd = os.open(final.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return final

    def put_bytes(self, data: bytes) -> str:
        return self.put_chunks([data])[0]

    def put_chunks(self, chunks: Iterable[bytes], *, limit: int | None = None) -> tuple[str, int]:
        fd, tmp_path = self._new_temp()
        digest, size = hashlib.sha256(), 0
        try:
            with os.fdopen(fd, "wb") as fh:
                for chunk in chunks:
                    size += len(chunk)
                    if limit is not None and size > limit:
                        raise BlobTooLarge(limit)
                    digest.update(chunk)
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            sha = digest.hexdigest()
            self._commit(tmp_path, sha)
            return sha, size
        except BaseException:
            Path(tmp_path).unlink(missing_ok=True)
            raise

    async def put_async_chunks(
        self, chunks: AsyncIterator[bytes], *, limit: int | None = None
    ) -> tuple[str, int]:
        """Stream an async body to disk without holding it in memory."""
        fd, tmp_path = self._new_temp()
        digest, size = hashlib.sha256(), 0
        try:
            with os.fdopen(fd, "wb") as fh:
                async for chunk in chunks:
                    size += len(chunk)
                    if limit is not None and size > limit:
                        raise BlobTooLarge(limit)
                    digest.update(chunk)
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            sha = digest.hexdigest()
            self._commit(tmp_path, sha)
            return sha, size
        except BaseException:
            Path(tmp_path).unlink(missing_ok=True)
            raise

    def read_bytes(self, sha256: str) -> bytes:
        return self.path(sha256).read_bytes()

    def delete(self, sha256: str) -> None:
        self.path(sha256).unlink(missing_ok=True)


def get_blob_store(settings: Settings | None = None) -> BlobStore:
    return BlobStore((settings or get_settings()).blob_dir)
