"""Fixtures for the file engine: settings, a core registry, and sample-file factories.

`samples` factories return bytes made by real libraries (csv, openpyxl,
xlwt, odfpy, Pillow, wave, fpdf2, python-docx) with `SENTINEL` inside;
`write(name, data)` puts them under tmp_path with whatever name a test wants
(a PNG named `.csv`, ...). They are generic: any processor's tests can use them.
"""

from __future__ import annotations

import csv
import io
import json
import struct
import wave
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from contextq.files.pipeline import process_file
from contextq.files.registry import PRIORITY_GENERIC, Registry
from contextq.files.result import FileExtractionResult
from contextq.settings import Settings

SENTINEL = "CTXQ-SENTINEL-4711"


class Samples:
    """Byte factories for real sample files."""

    sentinel = SENTINEL

    @staticmethod
    def csv(
        rows: int = 10,
        cols: int = 3,
        *,
        delimiter: str = ",",
        newline: str = "\n",
        cell: Callable[[int, int], Any] | None = None,
    ) -> bytes:
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter=delimiter, lineterminator=newline)
        writer.writerow([f"col{c}" for c in range(cols)])
        for r in range(rows):
            writer.writerow(
                [
                    cell(r, c)
                    if cell
                    else (
                        f"{SENTINEL}-first"
                        if r == 0 and c == 0
                        else f"{SENTINEL}-last"
                        if r == rows - 1 and c == 0
                        else f"r{r}c{c}"
                    )
                    for c in range(cols)
                ]
            )
        return buf.getvalue().encode()

    @staticmethod
    def xlsx(sheets: dict[str, Sequence[Sequence[Any]]], *, write_only: bool = False) -> bytes:
        import openpyxl

        wb = openpyxl.Workbook(write_only=write_only)
        if not write_only:
            wb.remove(wb.active)
        for name, rows in sheets.items():
            ws = wb.create_sheet(name)
            for row in rows:
                ws.append(list(row))
        out = io.BytesIO()
        wb.save(out)
        return out.getvalue()

    @staticmethod
    def xls(sheets: dict[str, Sequence[Sequence[Any]]]) -> bytes:
        import xlwt

        wb = xlwt.Workbook()
        for name, rows in sheets.items():
            ws = wb.add_sheet(name)
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    ws.write(r, c, value)
        out = io.BytesIO()
        wb.save(out)
        return out.getvalue()

    @staticmethod
    def ods(sheets: dict[str, Sequence[Sequence[Any]]]) -> bytes:
        from odf.opendocument import OpenDocumentSpreadsheet
        from odf.table import Table, TableCell, TableRow
        from odf.text import P

        doc = OpenDocumentSpreadsheet()
        for name, rows in sheets.items():
            table = Table(name=name)
            for row in rows:
                tr = TableRow()
                for value in row:
                    if isinstance(value, int | float):
                        tc = TableCell(valuetype="float", value=value)
                    else:
                        tc = TableCell(valuetype="string")
                    tc.addElement(P(text=str(value)))
                    tr.addElement(tc)
                table.addElement(tr)
            doc.spreadsheet.addElement(table)
        out = io.BytesIO()
        doc.save(out)
        return out.getvalue()

    @staticmethod
    def odt(text: str = SENTINEL) -> bytes:
        from odf.opendocument import OpenDocumentText
        from odf.text import P

        doc = OpenDocumentText()
        doc.text.addElement(P(text=text))
        out = io.BytesIO()
        doc.save(out)
        return out.getvalue()

    @staticmethod
    def epub() -> bytes:
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as zf:
            zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
            zf.writestr("META-INF/container.xml", "<container/>")
            zf.writestr("OEBPS/ch1.xhtml", f"<html><body><p>{SENTINEL}</p></body></html>")
        return out.getvalue()

    @staticmethod
    def zip(entries: dict[str, bytes]) -> bytes:
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in entries.items():
                zf.writestr(name, data)
        return out.getvalue()

    @staticmethod
    def docx() -> bytes:
        import docx

        document = docx.Document()
        document.add_paragraph(SENTINEL)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()

    @staticmethod
    def pdf() -> bytes:
        from fpdf import FPDF

        pdf = FPDF()
        pdf.add_page()
        pdf.set_font("helvetica", size=12)
        pdf.cell(text=SENTINEL)
        return bytes(pdf.output())

    @staticmethod
    def image(fmt: str, size: tuple[int, int] = (8, 8)) -> bytes:
        from PIL import Image

        out = io.BytesIO()
        Image.new("RGB", size, (200, 30, 30)).save(out, format=fmt)
        return out.getvalue()

    @staticmethod
    def wav(seconds: float = 0.1, rate: int = 8000) -> bytes:
        out = io.BytesIO()
        with wave.open(out, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(b"\x00\x01" * int(seconds * rate))
        return out.getvalue()

    @staticmethod
    def mp3_frames() -> bytes:
        """MPEG-1 Layer III frame headers (128 kbit/s, 44.1 kHz) with silent payloads."""
        frame = b"\xff\xfb\x90\x64" + b"\x00" * 413
        return frame * 4

    @staticmethod
    def id3() -> bytes:
        return b"ID3\x04\x00\x00\x00\x00\x00\x0a" + b"\x00" * 10 + Samples.mp3_frames()

    @staticmethod
    def flac() -> bytes:
        return b"fLaC\x80\x00\x00\x22" + b"\x00" * 34

    @staticmethod
    def ogg(opus: bool) -> bytes:
        head = b"OpusHead\x01\x01\x38\x01\x80\xbb\x00\x00\x00\x00\x00" if opus else b"\x01vorbis"
        return b"OggS\x00\x02" + b"\x00" * 20 + bytes([1, len(head)]) + head

    @staticmethod
    def m4a() -> bytes:
        return struct.pack(">I", 24) + b"ftypM4A \x00\x00\x02\x00M4A isom" + b"\x00" * 32

    @staticmethod
    def elf() -> bytes:
        return b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x02\x00\x3e\x00" + bytes(range(256)) * 4

    @staticmethod
    def pe() -> bytes:
        return b"MZ\x90\x00\x03\x00\x00\x00\x04\x00" + b"\x00" * 50 + bytes(range(256)) * 4

    @staticmethod
    def junk(n: int = 4096) -> bytes:
        import random

        rng = random.Random(42)
        return bytes(rng.randrange(256) for _ in range(n))

    @staticmethod
    def json(value: Any) -> bytes:
        return json.dumps(value).encode()


@pytest.fixture
def samples() -> type[Samples]:
    return Samples


@pytest.fixture
def settings() -> Settings:
    return Settings(ENVIRONMENT="test")


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, bytes | str], Path]:
    counter = iter(range(1_000_000))

    def _write(name: str, data: bytes | str) -> Path:
        folder = tmp_path / f"f{next(counter)}"
        folder.mkdir()
        path = folder / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    return _write


def core_registry() -> Registry:
    """Text, tables and structured formats only (no documents, images or audio)."""
    from contextq.files.structured import StructuredProcessor
    from contextq.files.tabular import TabularProcessor
    from contextq.files.text import TextProcessor

    registry = Registry()
    registry.register(TabularProcessor())
    registry.register(StructuredProcessor())
    registry.register(TextProcessor(), priority=PRIORITY_GENERIC)
    return registry


@pytest.fixture
def run(
    write: Callable[[str, bytes | str], Path], settings: Settings
) -> Callable[..., FileExtractionResult]:
    """`run(name, data, **setting_overrides)`: process one file with the core registry."""
    registry = core_registry()

    def _run(name: str, data: bytes | str, **overrides: Any) -> FileExtractionResult:
        s = settings.model_copy(update=overrides) if overrides else settings
        return process_file(write(name, data), name, settings=s, registry=registry)

    return _run
