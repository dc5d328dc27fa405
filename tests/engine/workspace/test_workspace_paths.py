"""Workspace paths: normalisation, the traversal corpus, symlinks planted on disk, and the
two mappings (container ↔ host), all containment-checked (docs/workspaces.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contextq.errors import ValidationFailed
from contextq.workspace import (
    container_to_host_path,
    host_to_container_path,
    normalize_path,
    workspace_root,
)
from tests.engine.workspace.hostile_paths import HOSTILE_PATHS


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "workspaces" / "owner1" / "conv1"
    root.mkdir(parents=True)
    return root


def test_the_corpus_is_large_enough() -> None:
    assert len(HOSTILE_PATHS) >= 30
    assert len(set(HOSTILE_PATHS)) == len(HOSTILE_PATHS)


@pytest.mark.parametrize("path", HOSTILE_PATHS, ids=lambda p: repr(p)[:40])
def test_every_hostile_path_is_refused_with_a_reason(path: str, root: Path) -> None:
    with pytest.raises(ValidationFailed) as caught:
        normalize_path(path)
    assert str(caught.value)
    assert caught.value.field == "path"
    if path not in ("", "/workspace"):  # the mapping accepts the root itself
        with pytest.raises(ValidationFailed):
            container_to_host_path(root, path)


def test_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(ValidationFailed, match="U\\+D800"):
        normalize_path("a\ud800b.txt")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("report.csv", "report.csv"),
        ("/workspace/report.csv", "report.csv"),
        ("/workspace/tool-results/abc.json", "tool-results/abc.json"),
        ("a//b/./c.txt", "a/b/c.txt"),
        ("./a.txt", "a.txt"),
        ("dir/", "dir"),
        ("...", "..."),  # three dots is a name, not a parent
        ("a..b/c..", "a..b/c.."),
        ("données/été.txt", "données/été.txt"),
        ("cafe\u0301.txt", "caf\u00e9.txt"),  # NFD is stored as NFC
        ("日本語/表.csv", "日本語/表.csv"),
        ("with space.txt", "with space.txt"),
        ("%41.txt", "%41.txt"),  # a percent sign that encodes no separator is a character
    ],
)
def test_valid_paths_normalise(given: str, expected: str) -> None:
    assert normalize_path(given) == expected


def test_the_root_itself_only_where_allowed() -> None:
    assert normalize_path("", allow_root=True) == ""
    assert normalize_path("/workspace", allow_root=True) == ""
    assert normalize_path("/workspace/", allow_root=True) == ""
    with pytest.raises(ValidationFailed, match="workspace itself"):
        normalize_path("/workspace/")


def test_a_name_of_255_bytes_passes_and_256_does_not() -> None:
    assert normalize_path("a" * 255) == "a" * 255
    with pytest.raises(ValidationFailed, match="255 bytes"):
        normalize_path("a" * 256)
    with pytest.raises(ValidationFailed, match="255 bytes"):
        normalize_path("é" * 128)  # 256 bytes in UTF-8


def test_container_to_host_maps_inside_the_root(root: Path) -> None:
    assert container_to_host_path(root, "/workspace/a/b.txt") == root / "a" / "b.txt"
    assert container_to_host_path(root, "a/b.txt") == root / "a" / "b.txt"
    assert container_to_host_path(root, "/workspace") == root


def test_host_to_container_maps_back(root: Path) -> None:
    assert host_to_container_path(root, root / "a" / "b.txt") == "/workspace/a/b.txt"
    assert host_to_container_path(root, str(root)) == "/workspace"
    assert host_to_container_path(root, f"{root}/x/../y.txt") == "/workspace/y.txt"


@pytest.mark.parametrize(
    "outside",
    ["/etc/passwd", "../conv2/a.txt", "../../owner2/conv/a.txt", "/", "../_private-data/x"],
)
def test_host_to_container_refuses_what_is_outside(root: Path, outside: str) -> None:
    host = outside if outside.startswith("/") else str(root / outside)
    with pytest.raises(ValidationFailed):
        host_to_container_path(root, host)


def test_host_to_container_refuses_a_sibling_with_the_same_prefix(root: Path) -> None:
    sibling = root.parent / (root.name + "-other") / "a.txt"
    with pytest.raises(ValidationFailed, match="outside"):
        host_to_container_path(root, sibling)


def test_a_symlink_planted_on_the_way_is_refused_both_ways(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    os.symlink(outside, root / "link")
    os.symlink(outside / "secret.txt", root / "file-link.txt")
    (root / "real").mkdir()
    os.symlink("../link", root / "real" / "hop")
    for path in ("link/secret.txt", "link", "file-link.txt", "real/hop/secret.txt"):
        with pytest.raises(ValidationFailed, match="symbolic link"):
            container_to_host_path(root, path)
        with pytest.raises(ValidationFailed, match="symbolic link"):
            host_to_container_path(root, root / path)


def test_a_symlink_inside_pointing_inside_is_refused_too(root: Path) -> None:
    (root / "data").mkdir()
    os.symlink(root / "data", root / "alias")
    with pytest.raises(ValidationFailed, match="symbolic link"):
        container_to_host_path(root, "alias/a.txt")


def test_workspace_root_refuses_ids_that_could_name_other_trees(tmp_path: Path) -> None:
    assert workspace_root(tmp_path, "abc123", "def456") == tmp_path / "abc123" / "def456"
    for bad in ("_private-data", "_trash", "..", ".", "a/b", "", "a b", "x" * 65):
        with pytest.raises(ValidationFailed):
            workspace_root(tmp_path, bad, "conv")
        with pytest.raises(ValidationFailed):
            workspace_root(tmp_path, "owner", bad)
