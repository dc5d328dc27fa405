"""The `filesystem` blob store: files on disk, temp file → fsync → rename, named by SHA-256.

Nothing on disk is ever named after user input.

Deleting a blob never races a writer that is about to reference it. A writer that finds
its bytes already stored *pins* that blob: it takes a shared `flock` on it, checks the
path still names the inode it opened, refreshes its mtime, and only then commits the row
that points at it (a writer whose bytes are new renames a fresh temp file into place:
fresh mtime too). A deleter (`delete_if_unused`) takes the exclusive lock without
waiting, and under it requires the mtime to be older than its cutoff and, when asked,
no row to point at the blob, checked right then; only then does it unlink. So either
the writer pinned first (the mtime is fresh: kept), or the deleter unlinked first (the
writer sees the inode gone and stores its own copy). The cutoff (a grace of minutes
to an hour) is far longer than a writer takes from pin to commit.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from store.blobstore.base import (
    READ_CHUNK,
    BlobMissing,
    BlobStore,
    BlobStoreUnavailable,
    BlobTooLarge,
    check_sha256,
)


class FileReader:
    """An open blob file (`store.blobs.BlobReader`)."""

    def __init__(self, fh: BinaryIO, size: int) -> None:
        self._fh = fh
        self.size = size

    def read(self, n: int = -1) -> bytes:
        return self._fh.read(n)

    def __iter__(self) -> Iterator[bytes]:
        while chunk := self._fh.read(READ_CHUNK):
            yield chunk

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> FileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FilesystemBlobStore(BlobStore):
    kind = "filesystem"

    def __init__(self, root: Path, *, fsync: bool = True) -> None:
        self.root = root
        self.tmp = root / "tmp"
        self.fsync = fsync

    def path(self, sha256: str) -> Path:
        """Where the blob lives (this backend's own detail: tests and the sweep use it)."""
        check_sha256(sha256)
        return self.root / sha256[:2] / sha256[2:4] / sha256

    def open(self, sha256: str) -> FileReader:
        try:
            fh = open(self.path(sha256), "rb")  # noqa: SIM115 - the reader owns it
        except FileNotFoundError:
            raise BlobMissing(sha256) from None
        return FileReader(fh, os.fstat(fh.fileno()).st_size)

    def size(self, sha256: str) -> int | None:
        try:
            return self.path(sha256).stat().st_size
        except FileNotFoundError:
            return None

    @contextlib.contextmanager
    def local_copy(self, sha256: str) -> Iterator[Path]:
        path = self.path(sha256)  # already local: the file itself
        if not path.is_file():
            raise BlobMissing(sha256)
        yield path

    def check(self) -> None:
        try:
            self.tmp.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=self.tmp, prefix="check-")
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise BlobStoreUnavailable(
                f"BLOB_STORE=filesystem: cannot write under {self.root} ({exc}); "
                "check DATA_DIR and its permissions"
            ) from exc

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

    def writer(self, *, limit: int | None = None) -> FileBlobWriter:
        """A streaming writer: `write()` chunks, then `commit()` (or `abort()`)."""
        return FileBlobWriter(self, limit=limit)

    def delete(self, sha256: str) -> None:
        self.path(sha256).unlink(missing_ok=True)

    def read_bytes(self, sha256: str) -> bytes:
        try:
            return self.path(sha256).read_bytes()
        except FileNotFoundError:
            raise BlobMissing(sha256) from None

    def pin(self, sha256: str, size: int) -> bool:
        """Claim the stored blob of these bytes for a row about to be committed: True
        (its mtime refreshed, under a shared lock) when it is there whole, else False
        (the caller stores its own copy)."""
        path = self.path(sha256)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # waits while a deleter decides about it
            held = os.fstat(fd)
            try:
                current = os.stat(path).st_ino
            except FileNotFoundError:
                return False  # unlinked while we waited
            if current != held.st_ino or held.st_size != size:
                return False
            os.utime(fd)
            return True
        finally:
            os.close(fd)  # releases the lock

    def delete_if_unused(
        self, sha256: str, *, older_than: float, unreferenced: Callable[[], bool] | None = None
    ) -> bool:
        """Unlink the blob when nobody holds it, its mtime is before `older_than` (unix
        time) and `unreferenced()` (asked under the lock) agrees. True when deleted."""
        path = self.path(sha256)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # never waits for a writer
            if not self._still_old(path, fd, older_than):
                return False
            if unreferenced is not None and not unreferenced():
                return False
            path.unlink()
            return True
        except BlockingIOError:
            return False  # a writer is pinning it right now
        finally:
            os.close(fd)

    @staticmethod
    def _still_old(path: Path, fd: int, older_than: float) -> bool:
        """The inode we hold is still the one at `path`, and nobody touched it since."""
        held = os.fstat(fd)
        try:
            current = os.stat(path).st_ino
        except FileNotFoundError:
            return False
        return current == held.st_ino and held.st_mtime < older_than

    def stored(self, *, older_than: float) -> Iterator[str]:
        """The sha256 of every stored blob whose mtime is before `older_than`."""
        for top in sorted(self.root.glob("[0-9a-f][0-9a-f]")):
            for path in top.glob("[0-9a-f][0-9a-f]/*"):
                try:
                    if path.stat().st_mtime < older_than and len(path.name) == 64:
                        yield path.name
                except FileNotFoundError:
                    continue

    def remove_abandoned_temps(self, *, older_than: float) -> int:
        """Temp files nobody wrote to since `older_than` (a process died mid-upload)."""
        removed = 0
        if not self.tmp.is_dir():
            return 0
        for path in self.tmp.glob("blob-*"):
            try:
                if path.stat().st_mtime < older_than:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        return removed


class FileBlobWriter:
    """Hashes and writes a blob as it arrives; nothing is held in memory.

    Over `limit` bytes `write()` raises BlobTooLarge and the temp file is removed.
    """

    wants_flush = False  # every write goes straight to the temp file

    def __init__(self, store: FilesystemBlobStore, *, limit: int | None = None) -> None:
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

    def flush(self) -> None:
        pass

    def commit(self) -> tuple[str, int]:
        """fsync, rename to the content hash; returns (sha256, size). When a blob with
        this hash is already stored (same bytes uploaded before) the temp file is dropped:
        no second fsync."""
        sha = self._digest.hexdigest()
        if self._store.pin(sha, self.size):  # stored before: keep it (see the module doc)
            self.abort()
            return sha, self.size
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
