"""A bounded local cache of remote blobs, `DATA_DIR/cache/blobs` (one per host).

The engine reads files by path (parsers seek), so a worker processing an S3 blob first
streams it to a local file: into `tmp/`, hashed on the way (a copy whose sha256 or
size is wrong is refused, never used), then linked into place under its sha256. Every
process of the host shares the directory.

- A reader holds a shared `flock` on the file while it uses it, and checks the path
  still names the inode it locked (the file may have been evicted just before).
- Eviction (after each download) removes the least recently used files (mtime, which
  every use refreshes) until the total is within `max_bytes`, skipping any file a
  reader holds (it takes the exclusive lock without waiting).
- A blob larger than `max_bytes` (or with `max_bytes` 0) is downloaded for its reader
  alone and removed when the reader is done.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from store.blobstore.base import BlobMissing, BlobReader

log = logging.getLogger("contextq.storage")

TEMP_MAX_AGE_S = 24 * 3600.0


class DamagedDownload(Exception):
    pass


class LocalCache:
    def __init__(self, root: Path, *, max_bytes: int) -> None:
        self.root = root
        self.tmp = root / "tmp"
        self.max_bytes = max_bytes

    def path(self, sha256: str) -> Path:
        return self.root / sha256

    @contextlib.contextmanager
    def local_copy(
        self, sha256: str, *, size: int, fetch: Callable[[], BlobReader]
    ) -> Iterator[Path]:
        """A local file with the blob's bytes for the block (downloaded when missing)."""
        if size > self.max_bytes:
            with self._private_copy(sha256, fetch) as path:
                yield path
            return
        for _ in range(3):
            fd = self._open_locked(sha256)
            if fd is None:
                self._download(sha256, fetch)
                self.evict(keep=sha256)
                continue
            try:
                yield self.path(sha256)
                return
            finally:
                os.close(fd)
        raise BlobMissing(f"{sha256}: the local copy kept disappearing")  # pragma: no cover

    def _open_locked(self, sha256: str) -> int | None:
        """An fd of the cached file under a shared lock (its mtime refreshed), or None."""
        path = self.path(sha256)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                os.utime(fd)
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)  # evicted while we waited
        return None

    def _download(self, sha256: str, fetch: Callable[[], BlobReader]) -> None:
        tmp = self._fetch_to_temp(sha256, fetch)
        try:
            os.link(tmp, self.path(sha256))  # never over a copy another process placed
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)

    @contextlib.contextmanager
    def _private_copy(self, sha256: str, fetch: Callable[[], BlobReader]) -> Iterator[Path]:
        tmp = self._fetch_to_temp(sha256, fetch)
        try:
            yield Path(tmp)
        finally:
            Path(tmp).unlink(missing_ok=True)

    def _fetch_to_temp(self, sha256: str, fetch: Callable[[], BlobReader]) -> str:
        self.tmp.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.tmp, prefix=f"{sha256[:16]}-")
        digest, written = hashlib.sha256(), 0
        try:
            with os.fdopen(fd, "wb") as out, fetch() as reader:
                for chunk in reader:
                    digest.update(chunk)
                    out.write(chunk)
                    written += len(chunk)
            if digest.hexdigest() != sha256:
                raise DamagedDownload(
                    f"blob {sha256}: the stored object's bytes do not match its name "
                    f"({written} bytes read)"
                )
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return tmp

    def evict(self, *, keep: str | None = None) -> int:
        """Remove least recently used files until the cache fits; returns how many."""
        entries = []
        for path in self.root.glob("*"):
            if len(path.name) != 64:
                continue
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            entries.append((st.st_mtime, st.st_size, path))
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            if path.name != keep and _remove_unless_held(path):
                total -= size
                removed += 1
        self._remove_stale_temps()
        return removed

    def _remove_stale_temps(self) -> None:
        cutoff = time.time() - TEMP_MAX_AGE_S  # a process died mid-download
        for path in self.tmp.glob("*"):
            with contextlib.suppress(FileNotFoundError):
                if path.stat().st_mtime < cutoff:
                    path.unlink()


def _remove_unless_held(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.stat(path).st_ino != os.fstat(fd).st_ino:
            return False
        path.unlink()
        return True
    except (BlockingIOError, FileNotFoundError):
        return False  # a reader holds it, or someone else removed it
    finally:
        os.close(fd)
