"""ZIP archives: every entry listed, the supported members read, within the bomb limits.

The archive is checked first (`safety.check_archive`: entry count, declared size,
ratio). Then, in archive order, each member is copied out under a byte cap (declared
sizes can lie) into scratch space under a name of our own — never the member's path —
and processed like an uploaded file by the same registry, with what is left of the
output budget (MAX_TOKENS_PER_FILE). Images, audio, nested archives, encrypted and
unsupported members are listed with the reason they were not read; members after the
budget is spent are listed as not read for that reason.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from contextq import tokens
from contextq.errors import HostileInput, InvalidInput
from contextq.files.detect import detect
from contextq.files.markdown import escape_cell
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo, human_bytes
from contextq.files.safety import check_archive

MIN_MEMBER_TOKENS = 50  # below this much budget left, no more members are read
_JUNK = ("__MACOSX/", ".DS_Store", "Thumbs.db")
_NOT_SENT = {"image": "an image: upload it on its own", "audio": "audio: upload it on its own"}


@dataclass
class _Entry:
    name: str
    size: int
    read: str  # "read" or why it was not


class ArchiveProcessor:
    name = "archive"

    def accepts(self, info: StreamInfo) -> bool:
        return info.file_type == "zip"

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        settings = ctx.settings
        check_archive(path, settings, what="zip archive")
        scratch = Path(tempfile.mkdtemp(prefix="zip-", dir=ctx.work_dir))
        try:
            with zipfile.ZipFile(path) as zf:
                members = [i for i in zf.infolist() if not i.is_dir() and not _junk(i.filename)]
                reader = _MemberReader(zf, scratch, ctx)
                entries = [reader.read(member) for member in members]
        except zipfile.BadZipFile as exc:
            raise InvalidInput(f"this zip archive is damaged ({exc})") from exc
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        trunc = TruncationInfo()
        listing = _listing(info.filename, entries, settings.MAX_ARRAY_ITEMS, trunc)
        content = "\n\n".join([listing, *reader.sections])
        unread = sum(1 for e in entries if e.read == _BUDGET_SPENT)
        trunc.count("members not read (output limit reached)", unread)
        read = sum(1 for e in entries if e.read == "read")
        return FileExtractionResult(
            success=True,
            file_type=info.file_type,
            category="document",
            media_type=info.media_type,
            content=content,
            truncation=trunc,
            metadata={
                "entries": len(entries),
                "members_read": read,
                "uncompressed_bytes": sum(e.size for e in entries),
            },
            full_text_tokens=tokens.count_tokens(listing) + reader.member_tokens,
        )


_BUDGET_SPENT = "not read: the output limit was reached"


def _junk(name: str) -> bool:
    return name.startswith(_JUNK[0]) or name.rsplit("/", 1)[-1] in _JUNK[1:]


class _MemberReader:
    """Copies each member out under a cap and processes it while budget is left."""

    def __init__(self, zf: zipfile.ZipFile, scratch: Path, ctx: ProcessContext) -> None:
        self.zf = zf
        self.scratch = scratch
        self.ctx = ctx
        self.left = ctx.settings.MAX_TOKENS_PER_FILE
        self.sections: list[str] = []
        self.member_tokens = 0
        self._count = 0

    def read(self, member: zipfile.ZipInfo) -> _Entry:
        entry = _Entry(member.filename, member.file_size, "read")
        if member.flag_bits & 0x1:
            entry.read = "not read: encrypted"
        elif self.left < MIN_MEMBER_TOKENS:
            entry.read = _BUDGET_SPENT
        else:
            entry.read = self._process(member)
        return entry

    def _process(self, member: zipfile.ZipInfo) -> str:
        base = member.filename.rsplit("/", 1)[-1]
        self._count += 1
        target = self.scratch / f"m{self._count}{Path(base).suffix[:16]}"
        self._copy(member, target)
        try:
            kind = detect(target, base)
            if kind.category in _NOT_SENT or kind.file_type == "zip":
                return "not read: " + _NOT_SENT.get(kind.category, "a nested archive")
            if self.ctx.process_part is None:  # a processor called outside the pipeline
                return "not read: members are read through the pipeline only"
            settings = self.ctx.settings.model_copy(update={"MAX_TOKENS_PER_FILE": self.left})
            result = self.ctx.process_part(target, base, settings=settings, work_dir=self.scratch)
        finally:
            target.unlink(missing_ok=True)
        if not result.success:
            return f"not read: {result.error}"
        self.left -= result.processed_token_count or 0
        self.member_tokens += result.token_count or 0
        self.sections.append(f"## {escape_cell(member.filename)}\n\n{result.content or ''}")
        return "read"

    def _copy(self, member: zipfile.ZipInfo, target: Path) -> None:
        limit = self.ctx.settings.MAX_ARCHIVE_UNCOMPRESSED_BYTES
        copied = 0
        with self.zf.open(member) as src, target.open("wb") as dst:
            while chunk := src.read(1 << 20):
                copied += len(chunk)
                if copied > limit:
                    raise HostileInput(
                        f"zip member {member.filename[:200]!r} expands past {limit} bytes "
                        "(MAX_ARCHIVE_UNCOMPRESSED_BYTES); it looks like a zip bomb"
                    )
                dst.write(chunk)


def _listing(filename: str, entries: list[_Entry], max_rows: int, trunc: TruncationInfo) -> str:
    total = sum(e.size for e in entries)
    read = sum(1 for e in entries if e.read == "read")
    lines = [
        f"# Archive: {escape_cell(filename)}",
        "",
        f"{len(entries)} files, {human_bytes(total)} uncompressed; {read} read below.",
        "",
        "| file | size | read |",
        "| --- | --- | --- |",
    ]
    for entry in entries[:max_rows]:
        lines.append(
            f"| {escape_cell(entry.name)} | {human_bytes(entry.size)} | {escape_cell(entry.read)} |"
        )
    if len(entries) > max_rows:
        lines.append(f"| … {len(entries) - max_rows} more files | | |")
        trunc.record("items", max_rows, len(entries))
    return "\n".join(lines)
