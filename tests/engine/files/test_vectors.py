"""Real-world files through the whole engine (`process_file` with the built-in registry).

The vector table lives in `real_world.py`; each file is made by the library that
writes its format. Plus the property test: no processed text holds a control
character (tab and newline aside), a noncharacter, a lone surrogate or U+FFFD.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from contextq.files.pipeline import process_file
from contextq.files.registry import MemoryConversionCache
from contextq.settings import Settings
from tests.engine.files import real_world
from tests.engine.files.real_world import VECTORS, Vector

FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffd\ufffe\uffff\ud800-\udfff]")


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.filename)
def test_vector(vector: Vector, write: Callable[[str, bytes], Path], settings: Settings) -> None:
    path = write(vector.filename, vector.make())
    result = process_file(path, vector.filename, settings=settings, cache=MemoryConversionCache())
    assert result.success, result.error
    content = result.content or ""
    for text in vector.must_include:
        assert text in content, (text, content[:3000])
    for text in vector.must_not_include:
        assert text not in content, (text, content[:3000])
    assert not FORBIDDEN.search(content)


def test_invoice_heading_comes_before_its_table(write: Callable[[str, bytes], Path]) -> None:
    path = write("invoice.pdf", real_world.invoice_pdf())
    content = process_file(path, "invoice.pdf", settings=Settings()).content or ""
    assert content.index("Invoice INV-2024-0000") < content.index("| Item | Qty | Price |")
    assert content.index("| Gadget | 1 | 12.50 |") < content.index("Payable within 30 days.")


def test_pdf_metadata_counts_table_pages(write: Callable[[str, bytes], Path]) -> None:
    path = write("invoices.pdf", real_world.invoice_pdf(pages=3))
    result = process_file(path, "invoices.pdf", settings=Settings(MAX_TOKENS_PER_FILE=50_000))
    assert result.metadata["table_pages"] == 3 and result.metadata["pages"] == 3
    text_only = write("prose.pdf", real_world.text_pdf(3))
    prose = process_file(text_only, "prose.pdf", settings=Settings())
    assert "table_pages" not in prose.metadata and "|" not in (prose.content or "")


def test_legacy_encoding_is_named_in_metadata(write: Callable[[str, bytes], Path]) -> None:
    for name, encoding in (("a.csv", "cp932"), ("b.csv", "big5"), ("c.txt", "euc-kr")):
        data = (
            real_world.legacy_csv(encoding)
            if name.endswith(".csv")
            else real_world.legacy_text(encoding)
        )
        result = process_file(write(name, data), name, settings=Settings())
        assert result.success, result.error
        decoded = data.decode(result.metadata["encoding"])  # the named codec reads it back
        assert decoded.splitlines()[0].split(",")[0][:4] in (result.content or "")


def test_web_page_names_its_extraction_and_source(write: Callable[[str, bytes], Path]) -> None:
    result = process_file(
        write("zebra.html", real_world.encyclopedia_page()), "zebra.html", settings=Settings()
    )
    assert result.metadata["extraction"] == "main content"
    assert result.metadata["url"] == "https://en.wikipedia.org/wiki/Zebra"
    assert result.metadata["converter"] == "trafilatura"
    serp = process_file(
        write("r.html", real_world.search_results_page()), "r.html", settings=Settings()
    )
    assert serp.metadata["tracking_links"] == {"unwrapped": 8, "dropped": 1}


def test_docx_comment_count_in_metadata(write: Callable[[str, bytes], Path]) -> None:
    result = process_file(
        write("r.docx", real_world.docx_with_comments()), "r.docx", settings=Settings()
    )
    assert result.metadata["comments"] == 1


def test_feed_items_are_counted_and_cut(write: Callable[[str, bytes], Path]) -> None:
    result = process_file(
        write("f.rss", real_world.rss_feed()), "f.rss", settings=Settings(MAX_ARRAY_ITEMS=2)
    )
    assert result.metadata["feed"] == "rss" and result.metadata["items"] == 3
    assert result.truncation.shown["items"] == 2 and result.truncation.total["items"] == 3
    assert "Post number 2" not in (result.content or "")


def test_jpeg_sent_without_exif_and_fields_in_metadata(
    write: Callable[[str, bytes], Path],
) -> None:
    from PIL import Image

    data = real_world.jpeg_with_gps()
    assert Image.open(io.BytesIO(data)).getexif().get_ifd(0x8825)  # the sample has GPS
    result = process_file(write("p.jpg", data), "p.jpg", settings=Settings())
    assert result.binary is not None and result.binary_media_type == "image/jpeg"
    sent = Image.open(io.BytesIO(result.binary))
    assert not sent.getexif() and b"Exif" not in result.binary
    assert sent.size == (320, 240)
    assert sent.tobytes() == Image.open(io.BytesIO(data)).tobytes()  # lossless: same pixels
    exif = result.metadata["exif"]
    assert exif["description"] == "Harbour at dawn" and exif["author"] == "Ada Lovelace"
    assert exif["camera"] == "Canon EOS 5D" and exif["date"] == "2024:05:01 06:30:00"
    assert exif["had_gps_location"] is True
    assert "52" not in str(exif)  # the coordinates themselves are never copied
    assert "GPS location removed" in (result.content or "")


def test_resized_png_and_webp_lose_their_metadata(write: Callable[[str, bytes], Path]) -> None:
    from PIL import Image

    exif = Image.Exif()
    exif[0x013B] = "Someone"
    exif.get_ifd(0x8825)[1] = "N"
    for fmt, name in (("PNG", "a.png"), ("WEBP", "b.webp")):
        out = io.BytesIO()
        Image.new("RGB", (64, 64), (1, 2, 3)).save(out, format=fmt, exif=exif)
        result = process_file(write(name, out.getvalue()), name, settings=Settings())
        assert result.binary is not None
        assert not Image.open(io.BytesIO(result.binary)).getexif(), fmt
        assert result.metadata["exif"]["author"] == "Someone"


def test_zip_over_budget_says_what_was_left_out(write: Callable[[str, bytes], Path]) -> None:
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(6):
            zf.writestr(f"doc{i}.txt", f"MEMBER-{i} " + "word " * 400)
    result = process_file(
        write("many.zip", out.getvalue()), "many.zip", settings=Settings(MAX_TOKENS_PER_FILE=900)
    )
    assert result.success
    content = result.content or ""
    assert "MEMBER-0" in content and "MEMBER-5" not in content
    assert "not read: the output limit was reached" in content
    assert result.truncation.counts["members not read (output limit reached)"] >= 1
    assert result.metadata["entries"] == 6


def test_zip_bomb_member_is_refused(write: Callable[[str, bytes], Path]) -> None:
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("zeros.txt", b"\x00" * (8 << 20))
    result = process_file(
        write("bomb.zip", out.getvalue()), "bomb.zip", settings=Settings(MAX_ARCHIVE_RATIO=50)
    )
    assert not result.success and "zip bomb" in (result.error or "")


def test_every_document_type_has_a_converter() -> None:
    """A format in the table without a converter would fail as if the file were broken."""
    from contextq.files.documents import CONVERTERS
    from contextq.files.formats import EXTENSIONS

    document_types = {f.file_type for f in EXTENSIONS.values() if f.category == "document"}
    assert document_types - {"zip"} <= set(CONVERTERS)


def test_not_a_notebook_is_told_apart_from_a_gap(write: Callable[[str, bytes], Path]) -> None:
    result = process_file(write("x.ipynb", b'{"hello": 1}'), "x.ipynb", settings=Settings())
    assert not result.success
    assert "not a Jupyter notebook" in (result.error or "")


_TEXTISH = st.text(
    alphabet=st.characters(codec=None, exclude_categories=()), min_size=0, max_size=300
)


@hsettings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    payload=st.one_of(
        st.binary(max_size=400),
        _TEXTISH.map(lambda t: t.encode("utf-8", "surrogatepass")),
        _TEXTISH.map(lambda t: t.encode("utf-16", "surrogatepass")),
        st.lists(_TEXTISH, max_size=5).map(
            lambda cells: ",".join(cells).encode("utf-8", "surrogatepass")
        ),
    ),
    name=st.sampled_from(["a.txt", "b.csv", "c.json", "d.md", "e.py", "f.xml", "g.html", "h"]),
)
def test_processed_text_is_always_clean(
    payload: bytes, name: str, write: Callable[[str, bytes], Path]
) -> None:
    result = process_file(write(name, payload), name, settings=Settings())
    if result.success:
        assert not FORBIDDEN.search(result.content or ""), repr(result.content)
    else:
        assert result.error


@hsettings(max_examples=40, deadline=None)
@given(st.text(max_size=200), st.sampled_from(["json", "csv", "txt"]))
def test_counts_are_consistent(text: str, kind: str) -> None:
    """processed ≤ token_count always; equal when nothing was cut."""
    import json
    import tempfile

    data = (
        json.dumps({"k": text}) if kind == "json" else f"a,b\n{text},1\n" if kind == "csv" else text
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"f.{kind}"
        path.write_bytes(data.encode("utf-8", "surrogatepass"))
        result = process_file(path, path.name, settings=Settings(MAX_TOKENS_PER_FILE=60))
    if not result.success:
        return
    assert result.processed_token_count is not None and result.token_count is not None
    assert result.processed_token_count <= result.token_count
    if not result.truncation.truncated:
        assert result.processed_token_count == result.token_count


def test_zip_member_lets_the_callers_time_limit_through(
    write: Callable[[str, bytes], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A time limit hit inside a member must end the whole file, not just the member."""
    from contextq.files import text

    class TimeLimit(Exception):
        pass

    def slow(*_args: object, **_kw: object) -> str:
        raise TimeLimit

    monkeypatch.setattr(text, "sniff_encoding", slow)
    data = real_world.zipped_folder()
    with pytest.raises(TimeLimit):
        process_file(write("f.zip", data), "f.zip", settings=Settings(), reraise=(TimeLimit,))
