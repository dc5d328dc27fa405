"""Image metadata: the useful EXIF fields read, and every metadata block stripped losslessly.

An image sent to a model must not carry where it was taken (GPS), who took it with
which serial-numbered camera, or an embedded thumbnail. `strip_metadata` removes the
metadata segments (JPEG APP1 Exif/XMP, APP13 IPTC, comments; PNG eXIf and text chunks;
WebP EXIF and XMP chunks) without decoding the pixels, so nothing is lost in quality.
Colour profiles (JPEG APP2, PNG iCCP) and Adobe's colour-transform marker are kept.
`exif_fields` gives the fields worth knowing (title, author, description, date,
camera) for the file's metadata; GPS coordinates are never copied, only noted.
"""

from __future__ import annotations

import struct
from typing import Any

_BASE_TAGS = {
    0x010E: "description",
    0x013B: "author",
    0x8298: "copyright",
    0x0132: "date",
    0x010F: "make",
    0x0110: "model",
    0x0131: "software",
}
_XP_TAGS = {0x9C9B: "title", 0x9C9D: "author", 0x9C9C: "comment", 0x9C9F: "subject"}
_EXIF_IFD, _GPS_IFD = 0x8769, 0x8825
_EXIF_TAGS = {0x9003: "date", 0xA434: "lens"}
MAX_FIELD_CHARS = 300

_JPEG_DROP = frozenset({0xE1, 0xED, 0xFE})  # APP1 (Exif, XMP), APP13 (IPTC), COM
_PNG_DROP = frozenset({b"eXIf", b"tEXt", b"zTXt", b"iTXt", b"tIME"})
_WEBP_DROP = frozenset({b"EXIF", b"XMP "})


def exif_fields(image: Any) -> dict[str, Any]:
    """Title, author, description, date, camera, … from a Pillow image's EXIF ({} if none)."""
    exif = image.getexif()
    if not exif:
        return {}
    found: dict[str, Any] = {}
    for tag, name in _BASE_TAGS.items():
        _put(found, name, exif.get(tag))
    for tag, name in _XP_TAGS.items():
        _put(found, name, _xp(exif.get(tag)))
    for tag, name in _EXIF_TAGS.items():
        _put(found, name, exif.get_ifd(_EXIF_IFD).get(tag), overwrite=True)
    make, model = found.pop("make", ""), found.pop("model", "")
    camera = model if make and model.lower().startswith(make.lower()) else f"{make} {model}"
    if camera.strip():
        found["camera"] = camera.strip()
    if exif.get_ifd(_GPS_IFD):
        found["had_gps_location"] = True
    return found


def _put(found: dict[str, Any], name: str, value: Any, *, overwrite: bool = False) -> None:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return
    value = " ".join(value.replace("\x00", " ").split())[:MAX_FIELD_CHARS]
    if value and (overwrite or name not in found):
        found[name] = value


def _xp(value: Any) -> str | None:
    """Windows XP* tags: UTF-16LE bytes (Pillow gives bytes or a tuple of ints)."""
    if isinstance(value, tuple):
        value = bytes(v & 0xFF for v in value)
    if isinstance(value, bytes):
        return value.decode("utf-16-le", "replace")
    return None


def strip_metadata(data: bytes, fmt: str) -> tuple[bytes, bool]:
    """`data` without its metadata blocks, and whether any was removed."""
    try:
        if fmt == "JPEG":
            out = _strip_jpeg(data)
        elif fmt == "PNG":
            out = _strip_png(data)
        elif fmt == "WEBP":
            out = _strip_webp(data)
        else:
            return data, False
    except (IndexError, struct.error, ValueError):
        return data, False  # an odd layout: the caller re-encodes instead
    return out, len(out) != len(data)


def _strip_jpeg(data: bytes) -> bytes:
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG")
    out = bytearray(data[:2])
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ValueError("marker expected")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker == 0xDA:  # start of scan: the rest is image data
            out += data[pos:]
            return bytes(out)
        length = struct.unpack(">H", data[pos + 2 : pos + 4])[0]
        if marker not in _JPEG_DROP:
            out += data[pos : pos + 2 + length]
        pos += 2 + length
    raise ValueError("no image data")


def _strip_png(data: bytes) -> bytes:
    out = bytearray(data[:8])
    pos = 8
    while pos + 12 <= len(data):
        length = struct.unpack(">I", data[pos : pos + 4])[0]
        kind = data[pos + 4 : pos + 8]
        end = pos + 12 + length
        if kind not in _PNG_DROP:
            out += data[pos:end]
        pos = end
        if kind == b"IEND":
            return bytes(out)
    raise ValueError("no IEND chunk")


def _strip_webp(data: bytes) -> bytes:
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        raise ValueError("not a WebP")
    body = bytearray()
    pos = 12
    while pos + 8 <= len(data):
        kind = data[pos : pos + 4]
        length = struct.unpack("<I", data[pos + 4 : pos + 8])[0]
        end = pos + 8 + length + (length & 1)
        chunk = bytearray(data[pos:end])
        if kind == b"VP8X":
            chunk[8] &= ~0x0C & 0xFF  # the flags no longer announce EXIF (0x08) or XMP (0x04)
        if kind not in _WEBP_DROP:
            body += chunk
        pos = end
    return b"RIFF" + struct.pack("<I", len(body) + 4) + b"WEBP" + bytes(body)
