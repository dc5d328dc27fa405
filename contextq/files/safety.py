"""Guards that run before any third-party parser opens a file."""

from __future__ import annotations

import zipfile
from pathlib import Path

from contextq.errors import HostileInput, InvalidInput
from contextq.settings import Settings


def check_archive(path: Path, settings: Settings, *, what: str = "archive") -> None:
    """Refuse zip bombs before openpyxl/python-docx/markitdown see the file.

    Checks the entry count, the summed declared uncompressed size and the
    compression ratio. Declared sizes can lie, so readers that decompress
    entries themselves must also bound their reads (see `bounded_read`).
    """
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except zipfile.BadZipFile as exc:
        raise InvalidInput(
            f"this {what} is not a valid zip container (corrupt or truncated)"
        ) from exc
    if len(infos) > settings.MAX_ARCHIVE_ENTRIES:
        raise HostileInput(
            f"this {what} holds {len(infos)} entries, over the limit of "
            f"{settings.MAX_ARCHIVE_ENTRIES} (MAX_ARCHIVE_ENTRIES); it looks like a zip bomb"
        )
    total = sum(i.file_size for i in infos)
    if total > settings.MAX_ARCHIVE_UNCOMPRESSED_BYTES:
        raise HostileInput(
            f"this {what} expands to {total} bytes, over the limit of "
            f"{settings.MAX_ARCHIVE_UNCOMPRESSED_BYTES} (MAX_ARCHIVE_UNCOMPRESSED_BYTES)"
        )
    compressed = sum(i.compress_size for i in infos) or 1
    if total > 1024 * 1024 and total / compressed > settings.MAX_ARCHIVE_RATIO:
        raise HostileInput(
            f"this {what} expands {total / compressed:.0f} times (limit "
            f"{settings.MAX_ARCHIVE_RATIO:.0f}, MAX_ARCHIVE_RATIO); it looks like a zip bomb"
        )


def bounded_read(zf: zipfile.ZipFile, name: str, limit: int) -> bytes:
    """Read one entry, refusing more than `limit` bytes whatever the header declares."""
    with zf.open(name) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise HostileInput(f"zip entry {name!r} expands past {limit} bytes")
    return data
