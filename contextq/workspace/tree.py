"""A workspace directory on disk, touched only through directory file descriptors.

Every operation walks from the root one component at a time with `O_NOFOLLOW`
(`openat`), so a symlink planted anywhere on the way — even one swapped in by a sandbox
between a check and the use — is refused, never followed. Writes are atomic: the bytes
go to a temp file in the target's own directory (`.~cq-…`), are fsynced when the blob
policy says so, and are renamed over the name through the same directory descriptor;
a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Literal

from contextq.errors import ValidationFailed
from contextq.workspace.paths import TEMP_PREFIX, path_names

Kind = Literal["file", "dir"]
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_MODE = 0o644
DIR_MODE = 0o755


def _refuse(reason: str) -> ValidationFailed:
    return ValidationFailed(reason, field="path")


class WorkspaceTree:
    """The directory of one workspace; paths given are normalised relative paths
    (`contextq.workspace.paths.normalize_path`)."""

    def __init__(self, root: Path, *, fsync: bool) -> None:
        self.root = root
        self.fsync = fsync

    # -- walking ------------------------------------------------------------------------

    def _open_root(self, *, create: bool) -> int:
        if create:
            self.root.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        return os.open(self.root, _DIR_FLAGS)

    def _open_dirs(self, names: list[str], *, create: bool) -> tuple[int, int]:
        """A descriptor of the directory `names` (opened component by component, never
        through a symlink) and how many of its components this call created. Raises
        FileNotFoundError when one is missing and not `create`."""
        fd = self._open_root(create=create)
        created_from = len(names)
        try:
            for depth, name in enumerate(names):
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, DIR_MODE, dir_fd=fd)
                        created_from = min(created_from, depth)
                    child = self._open_child_dir(fd, names, depth)
                except OSError as exc:
                    raise self._walk_error(exc, fd, names, depth) from None
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd, len(names) - created_from

    def _open_child_dir(self, fd: int, names: list[str], depth: int) -> int:
        try:
            return os.open(names[depth], _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            raise self._walk_error(exc, fd, names, depth) from None

    @staticmethod
    def _walk_error(exc: OSError, fd: int, names: list[str], depth: int) -> Exception:
        where = "/".join(names[: depth + 1])
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            return exc
        try:  # O_DIRECTORY|O_NOFOLLOW answers ENOTDIR for a link too: ask what it is
            is_link = stat.S_ISLNK(os.stat(names[depth], dir_fd=fd, follow_symlinks=False).st_mode)
        except OSError:
            is_link = exc.errno == errno.ELOOP
        if is_link:
            return _refuse(f"`{where}` is a symbolic link; links are not followed")
        return _refuse(f"`{where}` is a file, not a directory: it cannot hold other files")

    @contextlib.contextmanager
    def _parent(self, relative: str, *, create: bool = False) -> Iterator[tuple[int, str]]:
        names = path_names(relative)
        fd, _created = self._open_dirs(names[:-1], create=create)
        try:
            yield fd, names[-1]
        finally:
            os.close(fd)

    # -- reading ------------------------------------------------------------------------

    def kind(self, relative: str) -> Kind | None:
        """ "file", "dir" or None (nothing there). A symlink or a special file (FIFO,
        device, socket) is refused."""
        if not relative:
            return "dir"
        try:
            with self._parent(relative) as (fd, name):
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        return _kind_of(st.st_mode, relative)

    def open_file(self, relative: str) -> BinaryIO:
        """The regular file at `relative`, open for reading (FileNotFoundError when it is
        missing; ValidationFailed for a directory, link or special file)."""
        with self._parent(relative) as (dir_fd, name):
            try:
                # O_NONBLOCK: a FIFO planted there must not hang the open (no effect on files)
                flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
                fd = os.open(name, flags, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise _refuse(
                        f"`{relative}` is a symbolic link; links are not followed"
                    ) from None
                raise
        if _kind_of(os.fstat(fd).st_mode, relative) != "file":
            os.close(fd)
            raise _refuse(f"`{relative}` is a directory, not a file")
        return os.fdopen(fd, "rb")

    # -- writing ------------------------------------------------------------------------

    def stage(self, relative: str) -> StagedFile:
        """A temp file next to `relative` to write the new bytes into; `publish()` renames
        it into place. Refused when a parent is a file or `relative` is a directory."""
        names = path_names(relative)
        dir_fd, created = self._open_dirs(names[:-1], create=True)
        try:
            try:
                st = os.stat(names[-1], dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                pass
            else:
                if _kind_of(st.st_mode, relative) == "dir":
                    raise _refuse(
                        f"`{relative}` is a directory; a file cannot replace it "
                        "(delete the files inside it first)"
                    )
            tmp = f"{TEMP_PREFIX}{secrets.token_hex(8)}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(tmp, flags, FILE_MODE, dir_fd=dir_fd)
        except BaseException:
            os.close(dir_fd)
            if created:
                self.prune_empty(names[:-1])
            raise
        return StagedFile(
            self,
            names=names,
            dir_fd=dir_fd,
            tmp_name=tmp,
            fh=os.fdopen(fd, "wb"),
            created_dirs=created,
        )

    def remove(self, relative: str) -> bool:
        """Delete the file at `relative` (False when nothing was there) and the
        directories it leaves empty. A directory is refused."""
        names = path_names(relative)
        try:
            dir_fd, _ = self._open_dirs(names[:-1], create=False)
        except FileNotFoundError:
            return False
        try:
            try:
                st = os.stat(names[-1], dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                return False
            if stat.S_ISDIR(st.st_mode):
                raise _refuse(f"`{relative}` is a directory; delete the files inside it")
            os.unlink(names[-1], dir_fd=dir_fd)
            self._sync_dir(dir_fd)
        finally:
            os.close(dir_fd)
        self.prune_empty(names[:-1])
        return True

    def prune_empty(self, dir_names: list[str]) -> None:
        """Remove the directories of `dir_names` (deepest first) that are empty."""
        for depth in range(len(dir_names), 0, -1):
            try:
                parent, _ = self._open_dirs(dir_names[: depth - 1], create=False)
            except (FileNotFoundError, ValidationFailed):
                return
            try:
                os.rmdir(dir_names[depth - 1], dir_fd=parent)
            except OSError:
                return  # not empty (or gone): its parents are not empty either
            finally:
                os.close(parent)

    def _sync_dir(self, dir_fd: int) -> None:
        if self.fsync:
            os.fsync(dir_fd)

    def remove_tree(self, trash: Path) -> None:
        """Delete the whole workspace: renamed out of the way first (a sandbox still
        writing cannot recreate what is being deleted), then removed without following
        links."""
        if not self.root.exists():
            return
        trash.mkdir(parents=True, exist_ok=True)
        doomed = trash / secrets.token_hex(8)
        try:
            os.rename(self.root, doomed)
        except FileNotFoundError:
            return
        shutil.rmtree(doomed, ignore_errors=True)


class StagedFile:
    """New bytes of one workspace file, in a temp file beside it until `publish()`."""

    def __init__(
        self,
        tree: WorkspaceTree,
        *,
        names: list[str],
        dir_fd: int,
        tmp_name: str,
        fh: BinaryIO,
        created_dirs: int,
    ) -> None:
        self._tree = tree
        self._names = names
        self._dir_fd: int | None = dir_fd
        self._tmp = tmp_name
        self._fh = fh
        self._created = created_dirs
        self.size = 0

    @property
    def relative(self) -> str:
        return "/".join(self._names)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._fh.write(data)
        self.size += len(data)

    def finish(self) -> None:
        """Flush (and fsync under the blob policy): call before the rows are written."""
        if not self._fh.closed:
            self._fh.flush()
            if self._tree.fsync:
                os.fsync(self._fh.fileno())
            self._fh.close()

    def publish(self) -> None:
        """Rename into place, atomically. Refused if a directory appeared there since."""
        self.finish()
        dir_fd = self._require_open()
        name = self._names[-1]
        try:
            os.rename(self._tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except (IsADirectoryError, NotADirectoryError):
            raise _refuse(f"`{self.relative}` is a directory; a file cannot replace it") from None
        self._tree._sync_dir(dir_fd)
        self._close_dir()

    def abort(self) -> None:
        """Drop the temp file and the directories staging created (a no-op once
        published)."""
        if self._dir_fd is None:
            return
        with contextlib.suppress(OSError):
            self._fh.close()
        with contextlib.suppress(OSError):
            os.unlink(self._tmp, dir_fd=self._dir_fd)
        self._close_dir()
        if self._created:
            self._tree.prune_empty(self._names[:-1])

    def _require_open(self) -> int:
        if self._dir_fd is None:
            raise RuntimeError("the staged file was already published or aborted")
        return self._dir_fd

    def _close_dir(self) -> None:
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None


def _kind_of(mode: int, relative: str) -> Kind:
    if stat.S_ISLNK(mode):
        raise _refuse(f"`{relative}` is a symbolic link; links are not followed")
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    raise _refuse(f"`{relative}` is not a regular file")
