"""Workspace paths (docs/workspaces.md): what an agent may name, and where it lands on the host.

A workspace is a real directory a sandbox bind-mounts at `/workspace`. Paths are
relative POSIX paths; `/workspace/…` is accepted and mapped. Everything else is refused
with `ValidationFailed` and a reason a person can act on:

- `..` components (also written `%2e%2e`, with fullwidth or one-dot-leader dots, …),
  absolute host paths, backslashes and drive letters (`C:\\`);
- NUL, control and format characters (bidi overrides, zero-width joiners), line and
  paragraph separators, unassigned and private-use code points, percent-encoded
  separators (`..%2f`): the tells of a path built to fool a check or a person;
- names over NAME_MAX_BYTES, paths over PATH_MAX_BYTES or DEPTH_MAX components;
- names reserved for the workspace's own temp files (`.~cq-…`);
- a symlink anywhere on the way (checked on disk, component by component), and anything
  that resolves outside the root.

Names are normalised to NFC, `.` and empty components dropped (`a//./b` is `a/b`); the
check runs on the normalised form. `container_to_host_path` and `host_to_container_path`
are the two mappings, both containment-checked after normalisation.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path, PurePosixPath

from contextq.errors import ValidationFailed

CONTAINER_ROOT = "/workspace"
NAME_MAX_BYTES = 255  # one component, UTF-8 (NAME_MAX of Linux filesystems)
PATH_MAX_BYTES = 1024  # the whole relative path, UTF-8
DEPTH_MAX = 32
TEMP_PREFIX = ".~cq-"  # the workspace's own temp files (atomic writes)

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_PERCENT_TELL = re.compile(r"%(?:2[eEfF]|5[cC]|00)")
_DRIVE = re.compile(r"^[A-Za-z]:")
# owner and conversation ids as directory names: never `_private-data`, `.` or `..`
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")


def _refuse(reason: str, field: str = "path") -> ValidationFailed:
    return ValidationFailed(reason, field=field)


def _check_characters(text: str) -> None:
    if "\x00" in text:
        raise _refuse("the path contains a NUL character")
    if "\\" in text:
        raise _refuse("the path contains a backslash; use / between names")
    for ch in text:
        if unicodedata.category(ch) in _REFUSED_CATEGORIES:
            raise _refuse(
                f"the path contains the character U+{ord(ch):04X} "
                f"({unicodedata.name(ch, 'unnamed')}); control, format and unassigned "
                "characters are not allowed in workspace paths"
            )


def _check_name(name: str) -> None:
    if name == "..":
        raise _refuse("`..` is not allowed in workspace paths")
    folded = unicodedata.normalize("NFKC", name)
    if folded != name and (folded.strip(".") == "" or "/" in folded or "\\" in folded):
        raise _refuse(
            f"the name {name!r} reads as {folded!r} once normalised (NFKC); "
            "look-alike dots and slashes are not allowed"
        )
    if _PERCENT_TELL.search(name):
        raise _refuse(
            f"the name {name!r} holds a percent-encoded dot, slash, backslash or NUL; "
            "send the path decoded once"
        )
    if len(name.encode("utf-8")) > NAME_MAX_BYTES:
        raise _refuse(f"a name in the path is over {NAME_MAX_BYTES} bytes (UTF-8)")
    if name.startswith(TEMP_PREFIX):
        raise _refuse(f"names starting with {TEMP_PREFIX!r} are reserved for the workspace")


def normalize_path(path: str, *, allow_root: bool = False) -> str:
    """The canonical relative form of a workspace path (`a/b.csv`), or ValidationFailed.
    `/workspace/a/b.csv` maps to `a/b.csv`; `allow_root` accepts `` and `/workspace`
    (the workspace itself, for listings)."""
    if not isinstance(path, str):
        raise _refuse("the path must be a string")
    _check_characters(path)
    text = unicodedata.normalize("NFC", path)
    if text == CONTAINER_ROOT or text.startswith(CONTAINER_ROOT + "/"):
        text = text[len(CONTAINER_ROOT) :]
    elif text.startswith("/"):
        raise _refuse(
            "absolute paths are not allowed: give a path relative to the workspace, "
            f"or one under {CONTAINER_ROOT}/"
        )
    if _DRIVE.match(text):
        raise _refuse("drive letters are not allowed: give a relative POSIX path")
    names = [n for n in text.split("/") if n not in ("", ".")]
    for name in names:
        _check_name(name)
    if not names and not allow_root:
        raise _refuse("the path names the workspace itself; name a file inside it")
    if len(names) > DEPTH_MAX:
        raise _refuse(f"the path is over {DEPTH_MAX} directories deep")
    relative = "/".join(names)
    if len(relative.encode("utf-8")) > PATH_MAX_BYTES:
        raise _refuse(f"the path is over {PATH_MAX_BYTES} bytes (UTF-8)")
    return relative


def path_names(relative: str) -> list[str]:
    """The components of a normalised path (`""` → [])."""
    return [n for n in relative.split("/") if n]


def check_id(value: str, what: str) -> str:
    """An owner or conversation id usable as a directory name (letters, digits, `-`)."""
    if not _ID.match(value):
        raise ValidationFailed(f"{what} {value[:70]!r} cannot name a workspace directory")
    return value


def workspace_root(base: Path, owner_id: str, conversation_id: str) -> Path:
    """`<base>/<owner_id>/<conversation_id>`: the directory a sandbox mounts."""
    return base / check_id(owner_id, "owner id") / check_id(conversation_id, "conversation id")


def _no_symlink_on_the_way(root: Path, names: list[str]) -> None:
    current = root
    for name in names:
        current = current / name
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return  # nothing further exists yet: nothing to follow
        if stat.S_ISLNK(mode):
            raise _refuse("the path goes through a symbolic link; links are not followed")


def container_to_host_path(root: Path, path: str) -> Path:
    """The host path of a workspace path (relative or `/workspace/…`), or ValidationFailed.
    Checked after normalisation: no symlink on the way on disk, and inside `root` once
    resolved."""
    relative = normalize_path(path, allow_root=True)
    names = path_names(relative)
    _no_symlink_on_the_way(root, names)
    host = root.joinpath(*names)
    resolved_root = root.resolve()
    if not host.resolve().is_relative_to(resolved_root):
        raise _refuse("the path resolves outside the workspace")
    return host


def host_to_container_path(root: Path, host_path: Path | str) -> str:
    """`/workspace/…` for a host path inside `root`, or ValidationFailed (outside, through
    a symlink, or not a valid workspace path)."""
    raw = os.fspath(host_path)
    if "\x00" in raw:
        raise _refuse("the path contains a NUL character")
    host = Path(os.path.normpath(os.path.abspath(raw)))
    base = Path(os.path.normpath(os.path.abspath(root)))
    if not host.is_relative_to(base):
        raise _refuse("the host path is outside the workspace")
    relative = host.relative_to(base).as_posix()
    if relative == ".":
        relative = ""
    relative = normalize_path(relative, allow_root=True)
    names = path_names(relative)
    _no_symlink_on_the_way(base, names)
    if not base.joinpath(*names).resolve().is_relative_to(base.resolve()):
        raise _refuse("the path resolves outside the workspace")
    return str(PurePosixPath(CONTAINER_ROOT, *names))


def container_path(relative: str) -> str:
    """`/workspace/<relative>` of a normalised path."""
    return f"{CONTAINER_ROOT}/{relative}" if relative else CONTAINER_ROOT
