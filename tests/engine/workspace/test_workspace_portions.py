"""Later portions of workspace files: lines, data rows under the header, pages, with
the file engine's readers (docs/workspaces.md `?view=processed&offset=&limit=`)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from contextq.errors import ValidationFailed
from contextq.files.detect import detect
from contextq.settings import Settings
from contextq.workspace.portions import Portion, read_portion
from tests.engine.files.conftest import Samples
from tests.engine.files.media_samples import pdf_bytes, sentinel_for


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(DATA_DIR=tmp_path / "data")


def portion(tmp_path: Path, name: str, data: bytes, settings: Settings, **kw: object) -> Portion:
    path = tmp_path / name
    path.write_bytes(data)
    return read_portion(path, detect(path, name), settings=settings, **kw)  # type: ignore[arg-type]


def big_csv(rows: int) -> bytes:
    lines = ["id,name,value"] + [f"{i},name-{i},{i * 7}" for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def test_csv_rows_25000_to_25019_come_with_the_header(tmp_path: Path, settings: Settings) -> None:
    got = portion(tmp_path, "r.csv", big_csv(50_000), settings, offset=25_000, limit=20)
    lines = got.text.splitlines()
    assert lines[0] == "| id | name | value |"
    assert lines[1].startswith("| ---")
    assert lines[2] == "| 25000 | name-25000 | 175000 |"
    assert lines[-1] == "| 25019 | name-25019 | 175133 |"
    assert len(lines) == 22
    assert (got.unit, got.returned, got.next_offset, got.total) == ("rows", 20, 25_020, None)


def test_csv_end_of_file_gives_the_total(tmp_path: Path, settings: Settings) -> None:
    got = portion(tmp_path, "r.csv", big_csv(100), settings, offset=95, limit=20)
    assert (got.returned, got.next_offset, got.total) == (5, None, 100)
    assert "| 99 | name-99 | 693 |" in got.text
    past = portion(tmp_path, "r.csv", big_csv(100), settings, offset=500, limit=20)
    assert (past.returned, past.next_offset, past.total) == (0, None, 100)
    assert past.text.splitlines()[0] == "| id | name | value |"


def test_csv_rows_are_counted_as_the_table_processor_counts_them(
    tmp_path: Path, settings: Settings
) -> None:
    """Blank lines before the header and at the end are no rows; one between rows is an
    empty row; a quoted field may span lines."""
    data = b'\n\nid,text\n0,"two\nlines"\n\n2,after blank\n3,last\n\n\n'
    got = portion(tmp_path, "q.csv", data, settings, offset=0, limit=10)
    assert got.total == 4
    rows = got.text.splitlines()[2:]
    assert rows[0].startswith("| 0 | two")
    assert rows[1] == "|  |  |"
    assert rows[2] == "| 2 | after blank |"
    from contextq.files.pipeline import process_file

    processed = process_file(tmp_path / "q.csv", "q.csv", settings=settings)
    assert processed.metadata["rows"] == got.total


def test_tsv_and_sniffed_semicolons(tmp_path: Path, settings: Settings) -> None:
    tsv = portion(tmp_path, "t.tsv", b"a\tb\n1\t2\n3\t4\n", settings, offset=1, limit=1)
    assert tsv.text.splitlines()[2] == "| 3 | 4 |"
    semi = portion(tmp_path, "s.csv", b"a;b\n1;2\n3;4\n", settings, offset=0, limit=5)
    assert semi.text.splitlines()[0] == "| a | b |"


def test_rows_stop_at_max_total_output(tmp_path: Path) -> None:
    settings = Settings(DATA_DIR=tmp_path / "d", MAX_TOTAL_OUTPUT=2000)
    got = portion(tmp_path, "r.csv", big_csv(1000), settings, offset=0, limit=1000)
    assert got.truncated
    assert 0 < got.returned < 1000
    assert got.next_offset == got.returned
    assert len(got.text) < 3000


def test_text_lines_from_an_offset(tmp_path: Path, settings: Settings) -> None:
    data = "\ufeff" + "".join(f"line {i}\r\n" for i in range(1000))
    got = portion(tmp_path, "log.txt", data.encode(), settings, offset=500, limit=3)
    assert got.text == "line 500\nline 501\nline 502"
    assert (got.unit, got.next_offset, got.total) == ("lines", 503, None)
    first = portion(tmp_path, "log.txt", data.encode(), settings, offset=0, limit=1)
    assert first.text == "line 0"  # the BOM is not part of the first line
    end = portion(tmp_path, "log.txt", data.encode(), settings, offset=998, limit=10)
    assert (end.text, end.next_offset, end.total) == ("line 998\nline 999", None, 1000)


def test_a_huge_line_is_cut_and_said_so(tmp_path: Path) -> None:
    settings = Settings(DATA_DIR=tmp_path / "d", MAX_TOTAL_OUTPUT=1000)
    data = ("x" * 5000 + "\nshort\n").encode()
    got = portion(tmp_path, "one.txt", data, settings, offset=0, limit=5)
    assert got.truncated and got.returned == 1 and got.next_offset == 1
    assert got.text.endswith("…[line cut]")
    assert len(got.text) < 1100


def test_structured_files_read_by_lines(tmp_path: Path, settings: Settings) -> None:
    data = b"a: 1\nb:\n  - x\n  - y\n"
    got = portion(tmp_path, "d.yaml", data, settings, offset=1, limit=2)
    assert (got.unit, got.text, got.next_offset) == ("lines", "b:\n  - x", 3)


def test_compact_json_reads_by_lines_of_its_indented_form(
    tmp_path: Path, settings: Settings
) -> None:
    data = json.dumps({"rows": [{"id": i, "name": f"n{i}"} for i in range(1000)]}).encode()
    assert data.count(b"\n") == 0
    got = portion(tmp_path, "r.json", data, settings, offset=2, limit=4)
    assert got.text.splitlines() == ["    {", '      "id": 0,', '      "name": "n0"', "    },"]
    assert (got.next_offset, got.total) == (6, 4 * 1000 + 4)
    broken = portion(tmp_path, "b.json", b'{"a": 1,\n"b": ', settings, offset=1, limit=1)
    assert broken.text == '"b": '  # not JSON after all: its own lines


def test_an_encoding_other_than_utf8(tmp_path: Path, settings: Settings) -> None:
    data = "".join(f"ligne {i} été\n" for i in range(20)).encode("utf-16")
    got = portion(tmp_path, "u.txt", data, settings, offset=10, limit=1)
    assert got.text == "ligne 10 été"


def test_xlsx_rows_by_sheet(tmp_path: Path, settings: Settings) -> None:
    data = Samples.xlsx(
        {
            "First": [["h1", "h2"], *[[f"a{i}", i] for i in range(100)]],
            "Second": [["x"], *[[f"b{i}"] for i in range(10)]],
        }
    )
    got = portion(tmp_path, "w.xlsx", data, settings, offset=50, limit=2)
    assert got.sheet == "First"
    assert got.text.splitlines()[0] == "| h1 | h2 |"
    assert got.text.splitlines()[2:] == ["| a50 | 50 |", "| a51 | 51 |"]
    second = portion(tmp_path, "w.xlsx", data, settings, offset=8, limit=5, sheet="Second")
    assert second.text.splitlines()[2:] == ["| b8 |", "| b9 |"]
    assert (second.next_offset, second.total) == (None, 10)
    with pytest.raises(ValidationFailed, match="no sheet named 'Nope'"):
        portion(tmp_path, "w.xlsx", data, settings, offset=0, limit=1, sheet="Nope")


def test_pdf_pages(tmp_path: Path, settings: Settings) -> None:
    data = pdf_bytes(5, per_page_sentinel=True)
    got = portion(tmp_path, "doc.pdf", data, settings, offset=2, limit=2)
    assert (got.unit, got.returned, got.next_offset, got.total) == ("pages", 2, 4, 5)
    assert sentinel_for(3) in got.text and sentinel_for(4) in got.text
    assert sentinel_for(2) not in got.text and sentinel_for(5) not in got.text


def test_a_document_without_pages_reads_by_lines(tmp_path: Path, settings: Settings) -> None:
    got = portion(tmp_path, "d.docx", Samples.docx(), settings, offset=0, limit=200)
    assert got.unit == "lines"
    assert Samples.sentinel in got.text


def test_images_have_no_portions(tmp_path: Path, settings: Settings) -> None:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buf, "PNG")
    with pytest.raises(ValidationFailed, match="no text portions"):
        portion(tmp_path, "i.png", buf.getvalue(), settings, offset=0, limit=1)


@pytest.mark.parametrize("limit", [0, 2001])
def test_limit_bounds(tmp_path: Path, settings: Settings, limit: int) -> None:
    with pytest.raises(ValidationFailed, match="limit must be between 1 and 2000 rows"):
        portion(tmp_path, "r.csv", big_csv(10), settings, offset=0, limit=limit)


def test_negative_offset(tmp_path: Path, settings: Settings) -> None:
    with pytest.raises(ValidationFailed, match="offset"):
        portion(tmp_path, "r.csv", big_csv(10), settings, offset=-1, limit=1)
