"""Benchmarks for PDF tables, web pages and the whole text for indexing (issue 12).

Run through `bench/files.py --only pdf|html|fulltext` (or all of it). Each figure has
its baseline measured in the same run:

(p) PDF: a 50-page text-only PDF and a 50-page table-heavy PDF (an invoice table per
    page, made by fpdf2), PDFium alone vs PDFium with table detection (ruling segments,
    pdfplumber's table finder, cell text from PDFium); markitdown's default
    (pdfplumber + pdfminer on every page) on the table-heavy one. Target: at most
    2 times PDFium alone on the text-only PDF.
(h) HTML: our conversion per page (the kind of page decides: an article's main content
    by trafilatura, every item of a results page, a thread or a listing; links
    unwrapped; what was left out counted) vs markitdown's whole-page conversion of the
    same page; seven pages (tests/engine/files/real_world.py and web_samples.py).
(f) Full text: the sections of a 300-page PDF after `process_file` (from the
    conversion cache) vs its processing time. Target: ≤ 10 %.
"""

from __future__ import annotations

import io
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contextq.files import pdf
from contextq.settings import Settings
from tests.engine.files import real_world


def median_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def bench_pdf(quick: bool) -> None:
    pages = 10 if quick else 50
    repeat = 3 if quick else 15
    text_only = real_world.text_pdf(pages)
    tables = real_world.invoice_pdf(pages)
    print(f"\n(p) PDF, {pages} pages: PDFium alone vs PDFium with table detection")
    pdf.extract_text(tables)  # warm: imports and first-call costs of both libraries
    for label, data in (("text-only", text_only), ("table-heavy", tables)):
        plain: list[float] = []
        with_tables: list[float] = []
        for _ in range(repeat):  # alternated: load from other work hits both alike
            plain.append(median_time(lambda d=data: pdf.extract_text(d, tables=False), 1)[0])
            t, found = median_time(lambda d=data: pdf.extract_text(d), 1)
            with_tables.append(t)
        t_plain, t_tables = statistics.median(plain), statistics.median(with_tables)
        print(
            f"    {label:11s} {len(data) / 1024:6.0f} KB: PDFium {t_plain * 1000:7.1f} ms, "
            f"with tables {t_tables * 1000:7.1f} ms = {t_tables / t_plain:.2f}x"
            + (" (target <= 2x)" if label == "text-only" else "")
            + f"; table pages {found.table_pages}/{pages}"
        )
    from markitdown import MarkItDown
    from markitdown import StreamInfo as MdStreamInfo

    md = MarkItDown()
    t_md, converted = median_time(
        lambda: md.convert_stream(io.BytesIO(tables), stream_info=MdStreamInfo(extension=".pdf")),
        1,
    )
    ours = "\n".join(pdf.extract_text(tables).pages)
    print(
        f"    table-heavy via markitdown's default: {t_md * 1000:.0f} ms; pipe tables "
        f"found: ours {ours.count('| B-07 |  | -23 |')}, markitdown "
        f"{str(converted.markdown).count('B-07')} rows with B-07 (its own layout)"
    )


def bench_html(quick: bool) -> None:
    from contextq.files import mdconvert
    from contextq.files.webpage import convert_webpage
    from tests.engine.files import web_samples

    repeat = 5 if quick else 20
    pages = [
        ("encyclopedia (small)", real_world.encyclopedia_page()),
        ("results (small)", real_world.search_results_page()),
        *(
            (page.filename.split(" ")[0] + " " + page.kind, page.make())
            for page in web_samples.PAGES
        ),
    ]
    convert_webpage(pages[0][1])  # warm: trafilatura's and markdownify's imports
    mdconvert.convert(pages[0][1], "html")
    print("\n(h) HTML: ours (the page's kind decides its content) vs markitdown's whole page")
    for label, data in pages:
        t_ours, ours = median_time(lambda d=data: convert_webpage(d), repeat)
        t_whole, whole = median_time(lambda d=data: mdconvert.convert(d, "html"), repeat)
        print(
            f"    {label:28s} {len(data) / 1024:4.0f} KB: ours {t_ours * 1000:6.1f} ms "
            f"({ours.extraction}, {ours.kept_chars} of {ours.page_chars} page chars, "
            f"{sum(ours.left_out.values())} blocks left out); markitdown whole page "
            f"{t_whole * 1000:6.1f} ms ({len(whole)} chars) = {t_ours / t_whole:.2f}x"
        )


def bench_fulltext(work: Path, quick: bool) -> None:
    from contextq.files.fulltext import iter_sections
    from contextq.files.pipeline import process_file
    from contextq.files.registry import MemoryConversionCache

    pages = 60 if quick else 300
    path = work / "long.pdf"
    path.write_bytes(real_world.text_pdf(pages))
    settings = Settings()
    process_file(path, "warm.pdf", settings=settings, cache=MemoryConversionCache())
    processing: list[float] = []
    sectioning: list[float] = []
    count = 0
    for _ in range(3 if quick else 5):
        cache = MemoryConversionCache()
        start = time.perf_counter()
        process_file(path, "long.pdf", settings=settings, cache=cache)
        processing.append(time.perf_counter() - start)
        start = time.perf_counter()
        full = iter_sections(path, "long.pdf", settings=settings, cache=cache)
        count = sum(1 for _ in full)
        sectioning.append(time.perf_counter() - start)
    t_proc, t_sec = statistics.median(processing), statistics.median(sectioning)
    print(
        f"\n(f) full text of a {pages}-page PDF: process_file {t_proc * 1000:.0f} ms; "
        f"sections afterwards {t_sec * 1000:.1f} ms = {t_sec / t_proc * 100:.1f} % "
        f"(target <= 10 %); {count} sections, {full.total_tokens_indexed} tokens"
    )


def run(work: Path, quick: bool, wanted: set[str]) -> None:
    if "pdf" in wanted:
        bench_pdf(quick)
    if "html" in wanted:
        bench_html(quick)
    if "fulltext" in wanted:
        bench_fulltext(work, quick)
