"""Detection: extension first, then the bytes decide.

The extension proposes a format; the content confirms it, overrides it with
the format it really is (a PNG named `.csv` is read as a PNG), or refuses it
(`category="unsupported"`: an executable named `.pdf`, binary junk named
`.txt`, a zip named `.docx` with no `word/` inside). Only plain magic bytes
are used — fast, and no model to load.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

import olefile

from contextq.files import formats
from contextq.files.formats import Format
from contextq.files.registry import StreamInfo
from contextq.files.text import detect_legacy_encoding

HEAD_BYTES = 8192

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"
_EXECUTABLE_MAGIC = (
    b"\x7fELF",
    b"\xfe\xed\xfa\xce",
    b"\xfe\xed\xfa\xcf",
    b"\xce\xfa\xed\xfe",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
    b"\x00asm",
)
_ARCHIVE_MAGIC = (
    b"\x1f\x8b",  # gzip
    b"BZh9",
    b"\xfd7zXZ\x00",
    b"7z\xbc\xaf\x27\x1c",
    b"Rar!\x1a\x07",
    b"\x28\xb5\x2f\xfd",  # zstd
)
_ODF_MIMETYPES = {
    b"application/vnd.oasis.opendocument.spreadsheet": "ods",
    b"application/vnd.oasis.opendocument.text": "odt",
    b"application/epub+zip": "epub",
}
_ZIP_BASED = frozenset({"docx", "pptx", "xlsx", "xlsm", "ods", "odt", "epub"})
_BMP_DIB_SIZES = {12, 16, 40, 52, 56, 64, 108, 124}
_M4A_BRANDS = {b"M4A ", b"M4B ", b"M4P ", b"mp42", b"mp41", b"isom", b"iso2", b"dash", b"f4a "}


def detect(path: Path, filename: str) -> StreamInfo:
    """What `path` is, judged by `filename`'s extension and then by its bytes."""
    size = path.stat().st_size
    name = _basename(filename)
    ext = _extension(name)
    claimed = formats.EXTENSIONS.get(ext) or formats.BARE_NAMES.get(name.lower())
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES)
    fmt = _decide(path, head, claimed)
    return StreamInfo(
        filename=name,
        extension=ext,
        file_type=fmt.file_type,
        category=fmt.category,
        media_type=fmt.media_type,
        size=size,
    )


def _basename(filename: str) -> str:
    return filename.replace("\\", "/").rsplit("/", 1)[-1].strip()


def _extension(name: str) -> str:
    if "." not in name.lstrip("."):
        return ""
    return "." + name.rsplit(".", 1)[-1].lower()


def _decide(path: Path, head: bytes, claimed: Format | None) -> Format:
    if not head:  # empty: the API refuses it; here it is simply empty text of its kind
        return claimed or formats.TEXT
    sniffed = sniff(path, head)
    if sniffed is None:  # looks like text; a binary extension over text: read as what it is
        return claimed if claimed is not None and _is_textual(claimed) else _text_kind(head)
    if claimed is not None and _compatible(claimed, sniffed):
        return claimed
    if sniffed is formats.ZIP and claimed is not None and claimed.file_type in _ZIP_BASED:
        return formats.MISNAMED_ZIP  # a `.docx` without `word/` is no document of that kind
    return sniffed


def _is_textual(fmt: Format) -> bool:
    return fmt.category in formats.TEXTUAL_CATEGORIES or fmt.file_type in formats.TEXTUAL_TYPES


def _compatible(claimed: Format, sniffed: Format) -> bool:
    if claimed.file_type == sniffed.file_type:
        return True
    pairs = {("xlsm", "xlsx"), ("ogg", "opus"), ("opus", "ogg"), ("m4a", "m4a")}
    return (claimed.file_type, sniffed.file_type) in pairs


def _text_kind(head: bytes) -> Format:
    """Text with no (or a binary) extension: a few cheap looks at how it starts."""
    start = head.lstrip(_UTF8_BOM).lstrip()[:512].lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return formats.EXTENSIONS[".html"]
    if start.startswith(b"<?xml"):
        return formats.EXTENSIONS[".xml"]
    if start.startswith(b"{\\rtf"):
        return formats.EXTENSIONS[".rtf"]
    return formats.TEXT


def _riff(kind: bytes) -> Callable[[bytes], bool]:
    return lambda h: h[:4] == b"RIFF" and h[8:12] == kind


def _bmp(head: bytes) -> bool:
    return (
        head.startswith(b"BM")
        and len(head) >= 18
        and int.from_bytes(head[14:18], "little") in _BMP_DIB_SIZES
    )


def _id3(head: bytes) -> bool:
    return head.startswith(b"ID3") and head[3:4] in (b"\x02", b"\x03", b"\x04")


def _executable(head: bytes) -> bool:
    return head.startswith(_EXECUTABLE_MAGIC) or (head.startswith(b"MZ") and b"\x00" in head[:64])


# (test on the first bytes, extension whose table row it means), first match wins
_MAGIC: tuple[tuple[Callable[[bytes], bool], str], ...] = (
    (lambda h: h.startswith(b"\x89PNG\r\n\x1a\n"), ".png"),
    (lambda h: h.startswith(b"\xff\xd8\xff"), ".jpg"),
    (lambda h: h.startswith((b"GIF87a", b"GIF89a")), ".gif"),
    (_riff(b"WEBP"), ".webp"),
    (_riff(b"WAVE"), ".wav"),
    (lambda h: h.startswith((b"II*\x00", b"MM\x00*")), ".tiff"),
    (_bmp, ".bmp"),
    (lambda h: b"%PDF-" in h[:1024], ".pdf"),
    (lambda h: h.startswith(b"fLaC"), ".flac"),
    (lambda h: h.startswith(b"OggS") and b"OpusHead" in h[:512], ".opus"),
    (lambda h: h.startswith(b"OggS"), ".ogg"),
    (lambda h: h[4:8] == b"ftyp" and h[8:12] in _M4A_BRANDS, ".m4a"),
    (lambda h: _id3(h) or _mpeg_sync(h), ".mp3"),
)


def sniff(path: Path, head: bytes) -> Format | None:
    """The format the bytes declare, `UNSUPPORTED_BINARY` for unknown binary, None for text."""
    if not head.startswith((*_UTF16_BOMS, _UTF8_BOM)):  # FF FE also looks like MPEG sync
        for test, extension in _MAGIC:
            if test(head):
                return formats.EXTENSIONS[extension]
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _sniff_zip(path)
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return _sniff_ole2(path)
    if _executable(head):
        return formats.EXECUTABLE
    if head.startswith(_ARCHIVE_MAGIC):
        return formats.Format("archive", "unsupported", "application/octet-stream")
    return None if _looks_textual(head) else formats.UNSUPPORTED_BINARY


def _mpeg_sync(head: bytes) -> bool:
    """An MPEG audio frame header: 11 sync bits, a valid layer, bitrate and sample rate."""
    if len(head) < 4 or head[0] != 0xFF or head[1] & 0xE0 != 0xE0:
        return False
    version = (head[1] >> 3) & 0x3
    layer = (head[1] >> 1) & 0x3
    bitrate = head[2] >> 4
    rate = (head[2] >> 2) & 0x3
    return version != 1 and layer != 0 and bitrate not in (0, 15) and rate != 3


def _sniff_zip(path: Path) -> Format:
    ext = formats.EXTENSIONS
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            if "mimetype" in names:
                info = zf.getinfo("mimetype")
                if info.file_size <= 256:
                    mimetype = zf.read("mimetype").strip()
                    kind = _ODF_MIMETYPES.get(mimetype)
                    if kind:
                        return formats.by_file_type(kind)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError):
        return formats.DAMAGED_ZIP
    tops = {n.split("/", 1)[0] for n in names}
    if "word" in tops:
        return ext[".docx"]
    if "ppt" in tops:
        return ext[".pptx"]
    if "xl" in tops:
        return ext[".xlsm"] if "xl/vbaProject.bin" in names else ext[".xlsx"]
    return formats.ZIP


def _sniff_ole2(path: Path) -> Format:
    """Old Office compound files: an Excel workbook or an Outlook message; others refused."""
    try:
        with olefile.OleFileIO(str(path)) as ole:
            streams = {"/".join(s).lower() for s in ole.listdir()}
    except Exception:  # any parse problem means "not a file we can read"
        return formats.OLE2
    if "workbook" in streams or "book" in streams:
        return formats.EXTENSIONS[".xls"]
    if any(s.startswith("__substg1.0_") for s in streams):
        return formats.EXTENSIONS[".msg"]
    return formats.OLE2


def _looks_textual(head: bytes) -> bool:
    """Text vs binary on the first bytes: NULs and control characters say binary."""
    if head.startswith(_UTF16_BOMS):
        return True
    head = head.removeprefix(_UTF8_BOM)
    # a few stray NULs in text are tolerated (they are stripped); many mean binary or UTF-16
    if head.count(b"\x00") * 10 > len(head):
        return _utf16_without_bom(head)
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13, 27, 8))
    if controls * 20 > len(head):  # over 5% control characters
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a multi-byte character cut by the sample is fine; legacy 8-bit text is mostly
        # ASCII; CJK text in a legacy encoding (cp932, GBK, Big5, EUC-KR) is mostly high
        # bytes and is told from binary by detecting its encoding, before any verdict
        if exc.start >= len(head) - 3 or sum(1 for b in head if b >= 0x80) * 3 < len(head):
            return True

        return detect_legacy_encoding(head) is not None
    return True


def _utf16_without_bom(head: bytes) -> bool:
    """UTF-16 text without a BOM: NULs on every other byte and the rest printable."""
    even, odd = head[0::2], head[1::2]
    for zeros, chars in ((odd, even), (even, odd)):
        if zeros.count(0) * 10 >= len(zeros) * 9 and all(
            c >= 32 or c in (9, 10, 13) for c in chars
        ):
            return True
    return False
