"""Small real documents, images and audio made by real libraries, each with a sentinel.

Factories return bytes; tests write them under tmp_path with the extension
they want (a PDF named .png, ...).
"""

from __future__ import annotations

import io
import math
import struct
import wave
import zipfile
from typing import Any

SENTINEL = "ZEBRA-7741-MAGENTA"


# --- documents ------------------------------------------------------------------------------


def docx_bytes(paragraphs: list[str] | None = None, *, heading: str = "Quarterly report") -> bytes:
    import docx

    document = docx.Document()
    document.add_heading(heading, level=1)
    for text in paragraphs or [f"The sentinel is {SENTINEL}."]:
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def docx_pages_bytes(pages: int, words_per_page: int = 350) -> bytes:
    """A long DOCX: one heading, paragraphs and a page break per page, a sentinel per page."""
    import docx
    from docx.enum.text import WD_BREAK

    document = docx.Document()
    filler = " ".join(f"word{i % 97}" for i in range(words_per_page))
    for page in range(1, pages + 1):
        document.add_heading(f"Section {page}", level=2)
        document.add_paragraph(f"{sentinel_for(page)} {filler}")
        table = document.add_table(rows=2, cols=3)
        for r in range(2):
            for c in range(3):
                table.cell(r, c).text = f"r{r}c{c}p{page}"
        document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def sentinel_for(page: int) -> str:
    return f"SENTINEL-PAGE-{page:04d}"


def pptx_bytes(slides: int = 2) -> bytes:
    from pptx import Presentation

    presentation = Presentation()
    layout = presentation.slide_layouts[1]
    for n in range(1, slides + 1):
        slide = presentation.slides.add_slide(layout)
        slide.shapes.title.text = f"Slide title {n}"
        slide.placeholders[1].text = f"{SENTINEL} on slide {n}"
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def pdf_bytes(
    pages: int = 1,
    *,
    text: str | None = None,
    user_password: str | None = None,
    per_page_sentinel: bool = False,
    blank: bool = False,
    lines_per_page: int = 1,
) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in range(1, pages + 1):
        pdf.add_page()
        if blank:
            pdf.rect(20, 20, 50, 50, style="F")  # drawing only, no text layer
            continue
        body = text or SENTINEL
        if per_page_sentinel:
            body = f"{sentinel_for(page)} {body}"
        for line in range(lines_per_page):
            suffix = f" line {line}" if lines_per_page > 1 else ""
            pdf.cell(0, 6, f"{body}{suffix}", new_x="LMARGIN", new_y="NEXT")
    if user_password is not None:
        pdf.set_encryption(owner_password="owner-secret", user_password=user_password)
    return bytes(pdf.output())


def html_bytes() -> bytes:
    return (
        "<!doctype html><html><head><title>Page title</title>"
        "<script>var hidden = 'SCRIPT-ONLY-TEXT';</script></head>"
        f"<body><h1>Heading one</h1><p>Body with {SENTINEL}.</p>"
        "<ul><li>alpha</li><li>beta</li></ul></body></html>"
    ).encode()


def epub_bytes() -> bytes:
    """A minimal valid EPUB 3 written by hand."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        zf.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        zf.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
            'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            '<dc:identifier id="id">urn:uuid:1</dc:identifier><dc:title>Epub Title</dc:title>'
            "<dc:creator>Ann Author</dc:creator><dc:language>en</dc:language></metadata>"
            '<manifest><item id="c1" href="chapter1.xhtml" media-type="application/xhtml+xml"/>'
            '</manifest><spine><itemref idref="c1"/></spine></package>',
        )
        zf.writestr(
            "OEBPS/chapter1.xhtml",
            '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
            "<title>Chapter 1</title></head><body><h1>Chapter One</h1>"
            f"<p>Once upon a time {SENTINEL}.</p></body></html>",
        )
    return out.getvalue()


def odt_bytes() -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    document = OpenDocumentText()
    document.text.addElement(H(outlinelevel=1, text="ODT heading"))
    document.text.addElement(P(text=f"ODT body {SENTINEL}."))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def rtf_bytes() -> bytes:
    return (
        r"{\rtf1\ansi\deff0{\fonttbl{\f0 Times New Roman;}}{\info{\title HIDDEN-INFO-TITLE}}"
        r"{\colortbl;\red255\green0\blue0;}"
        r"\f0\fs24 RTF heading\par "
        "Body with " + SENTINEL + r" and caf\'e9 \u8364? euro.\par"
        r"{\*\generator HIDDEN-GENERATOR;}}"
    ).encode("ascii")


def msg_bytes(subject: str = "Quarterly numbers", body: str | None = None) -> bytes:
    """A minimal Outlook .msg: an OLE compound file (CFB v3) with MAPI string streams.

    Written by hand (no library here writes CFB): one FAT sector, the directory,
    the MiniFAT and the mini stream that holds every (small) property stream.
    """
    end, free, fat_sect, no_stream = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD, 0xFFFFFFFF
    streams = {
        "__substg1.0_0037001F": subject.encode("utf-16-le"),
        "__substg1.0_0C1F001F": "ann@example.com".encode("utf-16-le"),
        "__substg1.0_0E04001F": "Bob Builder".encode("utf-16-le"),
        "__substg1.0_1000001F": (body or f"Hello Bob, the code is {SENTINEL}.").encode("utf-16-le"),
        "__properties_version1.0": b"\0" * 32,
    }
    mini, minifat, starts = bytearray(), [], {}
    for name, data in streams.items():
        count = max(1, -(-len(data) // 64))
        starts[name] = len(mini) // 64
        mini += data.ljust(count * 64, b"\0")
        minifat += [starts[name] + i + 1 for i in range(count - 1)] + [end]

    def entry(name: str, kind: int, child: int, right: int, start: int, size: int) -> bytes:
        raw = name.encode("utf-16-le") + b"\0\0"
        return (
            raw.ljust(64, b"\0")
            + struct.pack("<HBB", len(raw), kind, 1)
            + struct.pack("<III", no_stream, right, child)
            + b"\0" * 16
            + b"\0" * 4
            + b"\0" * 16
            + struct.pack("<IQ", start, size)
        )

    n_dir = -(-(len(streams) + 1) * 128 // 512)
    n_minifat = -(-len(minifat) * 4 // 512)
    n_mini = -(-len(mini) // 512)
    dir_start, minifat_start = 1, 1 + n_dir
    mini_start = minifat_start + n_minifat
    names = list(streams)
    entries = entry("Root Entry", 5, 1, no_stream, mini_start, len(mini))
    for i, name in enumerate(names):
        right = i + 2 if i + 1 < len(names) else no_stream
        entries += entry(name, 2, no_stream, right, starts[name], len(streams[name]))
    fat = [fat_sect]
    for first, count in ((dir_start, n_dir), (minifat_start, n_minifat), (mini_start, n_mini)):
        fat += [first + i + 1 for i in range(count - 1)] + [end]
    header = (
        bytes.fromhex("D0CF11E0A1B11AE1")
        + b"\0" * 16
        + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
        + b"\0" * 6
        + struct.pack("<IIIIIIIII", 0, 1, dir_start, 0, 4096, minifat_start, n_minifat, end, 0)
        + struct.pack("<I", 0)
        + struct.pack("<I", free) * 108
    )

    def sectors(data: bytes, count: int, fill: bytes = b"\0") -> bytes:
        return data.ljust(count * 512, fill)

    return (
        header
        + sectors(b"".join(struct.pack("<I", v) for v in fat), 1, b"\xff")
        + sectors(entries, n_dir)
        + sectors(b"".join(struct.pack("<I", v) for v in minifat), n_minifat, b"\xff")
        + sectors(bytes(mini), n_mini)
    )


def zip_bomb_docx(entries: int = 0, declared: int = 0) -> bytes:
    """A DOCX-shaped zip that holds many entries and/or one hugely compressible part."""
    out = io.BytesIO()
    real = docx_bytes()
    with (
        zipfile.ZipFile(io.BytesIO(real)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for item in src.infolist():
            dst.writestr(item, src.read(item.filename))
        for n in range(entries):
            dst.writestr(f"word/media/pad{n}.bin", b"")
        if declared:
            with dst.open("word/bomb.bin", "w", force_zip64=True) as fh:
                chunk = b"\0" * (1 << 20)
                for _ in range(declared // len(chunk)):
                    fh.write(chunk)
    return out.getvalue()


# --- images ---------------------------------------------------------------------------------


def image_bytes(
    fmt: str,
    size: tuple[int, int] = (64, 48),
    *,
    mode: str = "RGB",
    noise: bool = False,
    exif_orientation: int | None = None,
    frames: int = 1,
) -> bytes:
    from PIL import Image

    def make(seed: int) -> Any:
        if noise:
            import os

            return Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3)).convert(mode)
        img = Image.new(mode, size, color=_colour(mode, seed))
        return img

    out = io.BytesIO()
    first = make(0)
    kwargs: dict[str, Any] = {}
    if exif_orientation is not None:
        exif = Image.Exif()
        exif[0x0112] = exif_orientation
        kwargs["exif"] = exif.tobytes()
    if frames > 1:
        kwargs.update(save_all=True, append_images=[make(i) for i in range(1, frames)])
    first.save(out, format=fmt, **kwargs)
    return out.getvalue()


def _colour(mode: str, seed: int) -> Any:
    if mode in ("L", "P"):
        return (seed * 40) % 256
    if mode == "RGBA":
        return (200, (seed * 60) % 256, 30, 255)
    return (200, (seed * 60) % 256, 30)


def png_bomb_bytes(width: int = 30_000, height: int = 30_000) -> bytes:
    """A valid-looking PNG whose header declares huge dimensions; the file is tiny."""
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grayscale
    row = b"\0" + b"\0" * width
    idat = zlib.compress(row * 4)  # only a few rows: the decoder must refuse before reading
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


# --- audio ----------------------------------------------------------------------------------


def wav_bytes(seconds: float = 1.0, rate: int = 8000, channels: int = 1) -> bytes:
    out = io.BytesIO()
    frames = int(seconds * rate)
    with wave.open(out, "wb") as wf:
        wf.setnchannels(channels)
        wf.setsampwidth(2)
        wf.setframerate(rate)
        samples = bytearray()
        for i in range(frames):
            value = int(12000 * math.sin(2 * math.pi * 440 * i / rate))
            samples += struct.pack("<h", value) * channels
        wf.writeframes(bytes(samples))
    return out.getvalue()


def encoded_audio_bytes(
    container: str,
    codec: str,
    seconds: float = 1.0,
    rate: int = 44100,
    channels: int = 2,
    title: str | None = None,
    bitrate: int | None = None,
) -> bytes:
    """Audio encoded with PyAV (mp3, flac, ogg/vorbis, ogg/opus, m4a/aac) with a sine wave."""
    import av
    import numpy as np

    out = io.BytesIO()
    layout = "stereo" if channels == 2 else "mono"
    with av.open(out, "w", format=container) as output:
        if title is not None:
            output.metadata["title"] = title
        stream = output.add_stream(codec, rate=rate, layout=layout)
        if bitrate is not None:
            stream.bit_rate = bitrate
        frame_size = stream.codec_context.frame_size or 1024
        sample_fmt = stream.codec_context.format.name
        total = int(seconds * rate)
        t0 = 0
        while t0 < total:
            n = min(frame_size, total - t0)
            t = np.arange(t0, t0 + n) / rate
            wave_ = 0.3 * np.sin(2 * np.pi * 440 * t)
            frame = _frame(wave_, sample_fmt, layout, channels)
            frame.sample_rate = rate
            frame.pts = t0
            for packet in stream.encode(frame):
                output.mux(packet)
            t0 += n
        for packet in stream.encode(None):
            output.mux(packet)
    return out.getvalue()


def _frame(wave_: Any, fmt: str, layout: str, channels: int) -> Any:
    import av
    import numpy as np

    if fmt in ("s16", "s16p"):
        samples = (wave_ * 32767).astype(np.int16)
    elif fmt in ("s32", "s32p"):
        samples = (wave_ * 2**31 * 0.99).astype(np.int32)
    else:
        samples = wave_.astype(np.float32)
    if fmt.endswith("p"):
        array = np.tile(samples, (channels, 1))
    else:
        array = np.repeat(samples, channels).reshape(1, -1)
    return av.AudioFrame.from_ndarray(array, format=fmt, layout=layout)


# --- a registry of the media processors only (the pipeline with real detection) ------------


def media_registry() -> Any:
    from contextq.files.audio import AudioProcessor
    from contextq.files.documents import DocumentProcessor
    from contextq.files.images import ImageProcessor
    from contextq.files.registry import Registry

    registry = Registry()
    for processor in (ImageProcessor(), AudioProcessor(), DocumentProcessor()):
        registry.register(processor)
    return registry
