"""The workspace directory on disk: atomic writes, file/directory conflicts, symlinks
planted on disk (also swapped in after staging), removal (docs/workspaces.md)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from contextq.errors import ValidationFailed
from contextq.workspace import WorkspaceTree


@pytest.fixture
def tree(tmp_path: Path) -> WorkspaceTree:
    return WorkspaceTree(tmp_path / "ws" / "owner" / "conv", fsync=True)


def put(tree: WorkspaceTree, relative: str, data: bytes) -> None:
    staged = tree.stage(relative)
    try:
        staged.write(data)
        staged.publish()
    finally:
        staged.abort()


def read(tree: WorkspaceTree, relative: str) -> bytes:
    with tree.open_file(relative) as fh:
        return fh.read()


def test_write_read_replace_remove(tree: WorkspaceTree) -> None:
    put(tree, "a/b/c.txt", b"one")
    assert read(tree, "a/b/c.txt") == b"one"
    assert (tree.root / "a" / "b" / "c.txt").read_bytes() == b"one"
    assert tree.kind("a") == "dir" and tree.kind("a/b/c.txt") == "file"
    assert tree.kind("nope") is None
    put(tree, "a/b/c.txt", b"two")
    assert read(tree, "a/b/c.txt") == b"two"
    assert tree.remove("a/b/c.txt") is True
    assert not (tree.root / "a").exists()  # emptied directories go too
    assert tree.remove("a/b/c.txt") is False


def test_no_temp_file_is_left_behind(tree: WorkspaceTree) -> None:
    put(tree, "x.txt", b"x")
    staged = tree.stage("y/z.txt")
    staged.write(b"half")
    staged.abort()
    assert sorted(p.name for p in tree.root.rglob("*")) == ["x.txt"]


def test_a_reader_never_sees_a_partial_file(tree: WorkspaceTree) -> None:
    old, new = b"a" * 1_000_000, b"b" * 1_000_000
    put(tree, "big.bin", old)
    seen: set[bytes] = set()
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            data = (tree.root / "big.bin").read_bytes()
            seen.add(data[:1] + data[-1:] + str(len(data)).encode())

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        staged = tree.stage("big.bin")
        for i in range(0, len(new), 4096):
            staged.write(new[i : i + 4096])
        assert (tree.root / "big.bin").read_bytes() == old  # still the old bytes
        staged.publish()
    finally:
        stop.set()
        thread.join()
    assert seen <= {b"aa1000000", b"bb1000000"}
    assert read(tree, "big.bin") == new


def test_a_file_cannot_replace_a_directory_nor_hold_files(tree: WorkspaceTree) -> None:
    put(tree, "dir/inner.txt", b"x")
    with pytest.raises(ValidationFailed, match="is a directory"):
        tree.stage("dir")
    put(tree, "plain.txt", b"x")
    with pytest.raises(ValidationFailed, match="is a file"):
        tree.stage("plain.txt/child.txt")
    with pytest.raises(ValidationFailed, match="is a directory"):
        tree.open_file("dir")
    with pytest.raises(ValidationFailed, match="is a directory"):
        tree.remove("dir")
    assert read(tree, "dir/inner.txt") == b"x"


def test_a_directory_appearing_after_staging_is_not_overwritten(tree: WorkspaceTree) -> None:
    staged = tree.stage("later")
    staged.write(b"x")
    (tree.root / "later").mkdir()
    (tree.root / "later" / "keep.txt").write_text("keep")
    with pytest.raises(ValidationFailed, match="is a directory"):
        staged.publish()
    staged.abort()
    assert (tree.root / "later" / "keep.txt").read_text() == "keep"


def test_symlinks_planted_on_disk_are_never_followed(tree: WorkspaceTree, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    put(tree, "seed.txt", b"x")
    os.symlink(outside, tree.root / "link")
    os.symlink(outside / "secret.txt", tree.root / "secret.txt")
    for path in ("link/new.txt", "link/secret.txt"):
        with pytest.raises(ValidationFailed, match="symbolic link"):
            tree.stage(path)
    for path in ("link/secret.txt", "secret.txt"):
        with pytest.raises(ValidationFailed, match="symbolic link"):
            tree.open_file(path)
    with pytest.raises(ValidationFailed, match="symbolic link"):
        tree.kind("secret.txt")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret"


def test_a_directory_swapped_for_a_symlink_after_staging_is_not_followed(
    tree: WorkspaceTree, tmp_path: Path
) -> None:
    """The rename goes through the descriptor of the directory staging opened: a
    sandbox that swaps that directory for a link cannot redirect the write."""
    outside = tmp_path / "outside"
    outside.mkdir()
    staged = tree.stage("sub/file.txt")
    staged.write(b"payload")
    os.rename(tree.root / "sub", tree.root / "moved")
    os.symlink(outside, tree.root / "sub")
    staged.publish()
    assert list(outside.iterdir()) == []
    assert (tree.root / "moved" / "file.txt").read_bytes() == b"payload"


def test_a_special_file_is_refused(tree: WorkspaceTree) -> None:
    put(tree, "seed.txt", b"x")
    os.mkfifo(tree.root / "pipe")
    with pytest.raises(ValidationFailed, match="not a regular file"):
        tree.open_file("pipe")


def test_remove_tree_moves_aside_then_deletes(tree: WorkspaceTree, tmp_path: Path) -> None:
    put(tree, "a/b.txt", b"x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    os.symlink(outside, tree.root / "link")
    tree.remove_tree(tmp_path / "trash")
    assert not tree.root.exists()
    assert list((tmp_path / "trash").iterdir()) == []
    assert (outside / "keep.txt").read_text() == "keep"  # links are not followed
