"""Workspaces (docs/workspaces.md): one directory per conversation that a sandbox mounts at
`/workspace`, its paths, atomic writes, portions of its files, and tool results kept as
files.

- `paths`         normalise and check a workspace path; `container_to_host_path`,
                  `host_to_container_path`
- `tree`          the directory on disk through directory descriptors (no symlink is
                  ever followed); atomic writes (`stage` → `publish`)
- `portions`      lines / rows / pages of a file from `offset`, with the file engine's
                  readers
- `tool_results`  where a large tool result is written and with which extension
"""

from contextq.workspace.paths import (
    CONTAINER_ROOT,
    container_path,
    container_to_host_path,
    host_to_container_path,
    normalize_path,
    workspace_root,
)
from contextq.workspace.tree import StagedFile, WorkspaceTree

__all__ = [
    "CONTAINER_ROOT",
    "StagedFile",
    "WorkspaceTree",
    "container_path",
    "container_to_host_path",
    "host_to_container_path",
    "normalize_path",
    "workspace_root",
]
