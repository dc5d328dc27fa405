"""Tables: exact totals, head and tail rows, column and cell limits, every sheet."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextq.files import csv_scan, tabular
from contextq.files.result import FileExtractionResult
from tests.engine.files.conftest import SENTINEL, Samples

Run = Callable[..., FileExtractionResult]
S = Samples


def grid(rows: int, cols: int = 3, *, name: str = "") -> list[list[object]]:
    """Header + `rows` data rows; first and last data rows carry the sentinel."""
    out: list[list[object]] = [[f"h{c}" for c in range(cols)]]
    for r in range(rows):
        first = (
            f"{SENTINEL}{name}-first"
            if r == 0
            else f"{SENTINEL}{name}-last"
            if r == rows - 1
            else f"r{r}"
        )
        out.append([first] + [r * 10 + c for c in range(1, cols)])
    return out


# (filename, bytes factory, must_include, must_not_include, truncation summary)
VECTORS: list[tuple[str, Callable[[], bytes], list[str], list[str], str]] = [
    (
        "small.csv",
        lambda: S.csv(5),
        [
            f"{SENTINEL}-first",
            f"{SENTINEL}-last",
            "Total rows: 5 (header not counted); columns: 3.",
        ],
        ["rows omitted"],
        "",
    ),
    (
        "rows.csv",
        lambda: S.csv(5000),
        [
            f"{SENTINEL}-first",
            f"{SENTINEL}-last",
            "r19c1",
            "r4990c1",
            "… 4970 rows omitted …",
            "Total rows: 5000",
            "Showing rows 1-20 and 4991-5000",
        ],
        ["r20c1", "r4989c1"],
        "rows: 30 of 5000",
    ),
    (
        "wide.csv",
        lambda: S.csv(3, 100),
        ["col49", "first 50 columns shown"],
        ["col50"],
        "columns: 50 of 100",
    ),
    (
        "cells.csv",
        lambda: S.csv(4, 2, cell=lambda r, c: "y" * 600 if c else SENTINEL),
        [SENTINEL, "y" * 500 + "…"],
        ["y" * 501],
        "4 cells truncated",
    ),
    (
        "crlf.csv",
        lambda: S.csv(100, newline="\r\n"),
        [f"{SENTINEL}-last"],
        ["\r"],
        "rows: 30 of 100",
    ),
    (
        "semi.csv",
        lambda: S.csv(40, delimiter=";"),
        [f"| {SENTINEL}-first | r0c1 | r0c2 |"],
        [],
        "rows: 30 of 40",
    ),
    (
        "tabs.tsv",
        lambda: S.csv(40, delimiter="\t"),
        [f"| {SENTINEL}-first | r0c1 | r0c2 |"],
        [],
        "rows: 30 of 40",
    ),
    ("pipes.csv", lambda: b"a,b\n" + f"x|y,{SENTINEL}\n".encode(), [r"x\|y"], [], ""),
    (
        "book.xlsx",
        lambda: S.xlsx({"Data": grid(5000), "Notes": grid(3, name="-notes")}),
        [
            f"{SENTINEL}-first",
            f"{SENTINEL}-last",
            f"{SENTINEL}-notes-last",
            "## Sheet: Data",
            "## Sheet: Notes",
            "Total rows: 5000",
            "Total rows: 3",
        ],
        ["| r20 |"],
        "rows: 33 of 5003",
    ),
    (
        "stream.xlsx",
        lambda: S.xlsx({"Only": grid(1000)}, write_only=True),
        [f"{SENTINEL}-last", "Total rows: 1000"],
        [],
        "rows: 30 of 1000",
    ),
    (
        "book.xlsm",
        lambda: S.xlsx({"M": grid(40, 60)}),
        [f"{SENTINEL}-last"],
        [],
        "rows: 30 of 40, columns: 50 of 60",
    ),
    (
        "old.xls",
        lambda: S.xls({"Legacy": grid(300), "Two": grid(2, name="-two")}),
        [f"{SENTINEL}-last", f"{SENTINEL}-two-last", "Total rows: 300"],
        [],
        "rows: 32 of 302",
    ),
    (
        "calc.ods",
        lambda: S.ods({"Calc": grid(250)}),
        [f"{SENTINEL}-first", f"{SENTINEL}-last", "Total rows: 250"],
        [],
        "rows: 30 of 250",
    ),
]


@pytest.mark.parametrize(
    ("filename", "factory", "must_include", "must_not_include", "summary"),
    VECTORS,
    ids=[v[0] for v in VECTORS],
)
def test_tabular_vectors(
    run: Run,
    filename: str,
    factory: Callable[[], bytes],
    must_include: list[str],
    must_not_include: list[str],
    summary: str,
) -> None:
    result = run(filename, factory())
    assert result.success, result.error
    assert result.category == "tabular"
    assert result.content is not None
    for text in must_include:
        assert text in result.content, text
    for text in must_not_include:
        assert text not in result.content, text
    assert result.truncation.summary.split(", tokens:")[0] == summary


def test_xlsx_from_write_only_mode_has_no_dimension_but_exact_rows(
    write: Callable[[str, bytes], Path], run: Run
) -> None:
    import openpyxl

    path = write("w.xlsx", S.xlsx({"S": grid(777)}, write_only=True))
    wb = openpyxl.load_workbook(path, read_only=True)
    assert wb.worksheets[0].max_row is None  # no dimension record
    wb.close()
    result = run("w.xlsx", path.read_bytes())
    assert result.metadata["rows"] == 777


def test_quoted_newlines_are_not_rows(run: Run) -> None:
    rows = [["id", "text"]] + [[str(i), f"line one\nline two {i}\r\nthree"] for i in range(100)]
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    data = buf.getvalue().encode()
    assert data.count(b"\n") > 300
    result = run("quoted.csv", data)
    assert result.metadata["rows"] == 100
    assert result.metadata["count_method"] == "byte scan"
    assert result.content is not None
    assert "line one line two 99" in result.content  # the tail row, newline flattened


def test_fast_scan_matches_csv_module_on_chunk_edges(
    write: Callable[[str, bytes], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tiny scan chunks put every quote, CRLF and `""` on a chunk edge somewhere."""
    text = (
        'a,b\r\n"x ""quoted"" y","multi\r\nline"\r\n\r\n5\'11",plain "quote" inside\r\n'
        '"",\r\n,,\r\n"end"' * 7
    )
    path = write("edge.csv", text.encode())
    expected = reference(text)
    for size in (1, 2, 3, 5, 8, 13):
        monkeypatch.setattr(csv_scan, "SCAN_CHUNK_BYTES", size)
        scan = csv_scan.scan_records(path, quote=b'"', delimiter=b",")
        assert (scan.records, scan.trailing_blank, scan.ends_in_quote) == (*expected, False)


def reference(text: str) -> tuple[int, int]:
    """csv.reader's record count and the number of blank records at the end."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    trailing = 0
    while trailing < len(rows) and not rows[len(rows) - 1 - trailing]:
        trailing += 1
    return len(rows), trailing


CELLS = st.sampled_from(["a", "b c", '"q,""x"""', '"multi\nline"', "", "5'11\"", '"a\r\nb"'])


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.lists(CELLS, min_size=0, max_size=4).map(",".join), max_size=30),
    newline=st.sampled_from(["\n", "\r\n"]),
    trailing=st.booleans(),
    chunk=st.sampled_from([1, 3, 16, 1 << 20]),
)
def test_fast_scan_equals_csv_reader(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[str],
    newline: str,
    trailing: bool,
    chunk: int,
) -> None:
    text = newline.join(lines) + (newline if trailing else "")
    path = tmp_path_factory.mktemp("scan") / "p.csv"
    path.write_bytes(text.encode())
    old = csv_scan.SCAN_CHUNK_BYTES
    csv_scan.SCAN_CHUNK_BYTES = chunk
    try:
        scan = csv_scan.scan_records(path, quote=b'"', delimiter=b",")
    finally:
        csv_scan.SCAN_CHUNK_BYTES = old
    assert (scan.records, scan.trailing_blank) == reference(text)
    assert not scan.ends_in_quote


def test_lone_cr_files_fall_back_to_csv_reader(run: Run) -> None:
    data = "h1,h2\r" + "".join(f"{SENTINEL}{i},x\r" for i in range(100))
    result = run("mac.csv", data.encode())
    assert result.success, result.error
    assert result.metadata["rows"] == 100
    assert result.metadata["count_method"] == "csv.reader"
    assert f"{SENTINEL}99" in (result.content or "")


def test_utf16_csv_is_read_through_csv_reader(run: Run) -> None:
    data = S.csv(100).decode()
    result = run("u16.csv", data.encode("utf-16"))
    assert result.success, result.error
    assert result.metadata["rows"] == 100
    assert f"{SENTINEL}-last" in (result.content or "")


def test_header_only_and_blank_lines(run: Run) -> None:
    result = run("h.csv", b"a,b\n")
    assert result.success and result.metadata["rows"] == 0
    # blank lines inside are empty rows (as csv.reader yields them); before the header
    # and at the end of the file they are not rows
    result = run("blank.csv", b"\n\na,b\n\n1,2\n\n\n3,4\n\n\n")
    assert result.metadata["rows"] == 5


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_fast_path_agrees_with_the_small_file_path_on_blank_lines(run: Run, newline: str) -> None:
    body = [f"{SENTINEL}{i},x" if i % 7 else "" for i in range(200)]
    text = newline.join(["\n", "h1,h2", *body, f"{SENTINEL}-end,y", "", "", ""])
    result = run("blanks.csv", text.encode())
    assert result.metadata["count_method"] == "byte scan"
    assert result.metadata["rows"] == 201
    small = run("blanks.csv", text.encode(), DEFAULT_ROWS_HEAD=500)
    assert "count_method" not in small.metadata
    assert small.metadata["rows"] == 201
    assert f"{SENTINEL}-end" in (result.content or "")


def test_unclosed_quote_fails_clearly(run: Run) -> None:
    data = S.csv(60) + b'"never closed,' + b"x" * 200_000
    result = run("open.csv", data)
    assert not result.success
    assert result.error is not None and "quote" in result.error


def test_field_over_the_csv_limit_fails_clearly(run: Run) -> None:
    data = b'a,b\n1,"' + b"y" * 300_000 + b'"\n'
    result = run("field.csv", data)
    assert not result.success
    assert result.error is not None and "131072" in result.error
    assert "near data row 1" in result.error


def test_corrupt_workbook_is_a_clear_failure(run: Run) -> None:
    broken = S.zip({"xl/workbook.xml": b"<not really", "[Content_Types].xml": b"<x/>"})
    result = run("bad.xlsx", broken)
    assert not result.success
    assert result.error


def test_xlsx_values_dates_strings_and_booleans(run: Run) -> None:
    import datetime

    rows = [
        ["name", "when", "ok", "amount", "formula"],
        [SENTINEL, datetime.datetime(2024, 3, 15, 12, 30), True, 1.5, "=1+1"],  # no cached value
        ["inline ünïcode", datetime.date(2023, 1, 2), False, 42, None],
        *[[f"r{i}", None, None, i, None] for i in range(40)],
        [f"{SENTINEL}-tail", datetime.datetime(2025, 1, 1), True, -3.25, None],
    ]
    result = run("values.xlsx", S.xlsx({"V": rows}))
    content = result.content or ""
    assert f"| {SENTINEL} | 2024-03-15 12:30:00 | TRUE | 1.5 |  |" in content
    assert "| inline ünïcode | 2023-01-02 00:00:00 | FALSE | 42 |  |" in content
    assert f"| {SENTINEL}-tail | 2025-01-01 00:00:00 | TRUE | -3.25 |  |" in content
    assert result.metadata["rows"] == 43


def test_xlsx_sheet_with_a_dtd_is_refused(write: Callable[[str, bytes], Path], run: Run) -> None:
    import zipfile as zf_mod

    good = S.xlsx({"S": grid(3)})
    src = zf_mod.ZipFile(io.BytesIO(good))
    out = io.BytesIO()
    with zf_mod.ZipFile(out, "w", zf_mod.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]>' + data
            dst.writestr(item, data)
    result = run("dtd.xlsx", out.getvalue())
    assert not result.success
    assert "DTD" in (result.error or "")


def test_xlsx_first_rows_stop_early(write: Callable[[str, bytes], Path]) -> None:
    from contextq.files.xlsx_stream import first_rows

    path = write("f.xlsx", S.xlsx({"S": grid(500)}, write_only=True))
    rows = first_rows(path, 5)
    assert rows[0] == ["h0", "h1", "h2"]
    assert rows[1][0] == f"{SENTINEL}-first"
    assert len(rows) == 6


def test_xlsx_many_columns_are_capped_but_counted(run: Run) -> None:
    result = run("wide.xlsx", S.xlsx({"W": grid(3, 300)}))
    assert result.metadata["columns"] == 300
    assert "columns: 50 of 300" in result.truncation.summary


def _people_csv(rows: int) -> str:
    return "id,name,note\n" + "".join(f"{i},name {i},some words for row {i}\n" for i in range(rows))


def test_token_count_is_the_whole_table_not_the_shown_rows(run: Run) -> None:
    from contextq import tokens

    text = _people_csv(3000)
    result = run("people.csv", text)
    assert result.truncation.summary.startswith("rows: 30 of 3000")
    assert result.token_count == tokens.count_tokens(text)  # exact under 8 MiB
    assert result.processed_token_count is not None
    assert result.processed_token_count < result.token_count
    assert "token_count_exact" not in result.metadata


def test_token_count_of_a_large_table_is_extrapolated_and_flagged(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextq import tokens

    monkeypatch.setattr(tabular, "EXACT_TOKEN_COUNT_MAX_BYTES", 10_000)
    monkeypatch.setattr(tabular, "TOKEN_SAMPLE_BYTES", 50_000)
    text = _people_csv(20_000)
    result = run("big.csv", text)
    exact = tokens.count_tokens(text)
    assert result.metadata["token_count_exact"] is False
    assert "extrapolated from the first" in result.metadata["token_count_method"]
    assert result.token_count is not None
    assert abs(result.token_count - exact) / exact < 0.05  # uniform rows: within 5%
