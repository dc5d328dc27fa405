"""Real-world files made by the libraries and tools that write those formats (issue 12).

Each vector is (filename, bytes factory, must_include, must_not_include), in the
markitdown test-vector style. The engine test (`test_vectors.py`) and the real-queue
test (`tests/integration/test_files_real_world.py`) both run the whole table.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

ARTICLE_SENTINEL = "STRIPES-ARE-UNIQUE-4471"


@dataclass(frozen=True)
class Vector:
    filename: str
    make: Callable[[], bytes]
    must_include: tuple[str, ...]
    must_not_include: tuple[str, ...] = ()


# --- legacy encodings ------------------------------------------------------------------

_CSV_ROWS = {
    "cp932": [["名前", "住所", "電話番号"], ["山田太郎", "東京都千代田区一丁目", "03-1234-5678"]],
    "gbk": [["姓名", "地址", "电话"], ["张伟", "北京市朝阳区建国路", "010-12345678"]],
    "big5": [["姓名", "地址", "電話"], ["陳大文", "台北市信義區市府路", "02-12345678"]],
    "euc-kr": [
        ["이름", "주소", "전화번호"],
        ["김철수", "서울특별시 강남구 테헤란로", "02-1234-5678"],
    ],
}
_PROSE = {
    "cp932": "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。",
    "gbk": "学而时习之，不亦说乎？有朋自远方来，不亦乐乎？人不知而不愠，不亦君子乎？",
    "big5": "學而時習之，不亦說乎？有朋自遠方來，不亦樂乎？人不知而不慍，不亦君子乎？",
    "euc-kr": "나라의 말이 중국과 달라 문자와 서로 통하지 아니하기에 이런 까닭으로 어리석은 백성이",
}


def legacy_csv(encoding: str) -> bytes:
    import csv

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")  # as Excel saves them
    header, first = _CSV_ROWS[encoding]
    writer.writerow(header)
    for i in range(30):
        writer.writerow([first[0] if i == 0 else f"{first[0]}{i}", first[1], first[2]])
    return buf.getvalue().encode(encoding)


def legacy_text(encoding: str, *, code: bool = False) -> bytes:
    line = _PROSE[encoding]
    if code:
        return "\n".join(f'MESSAGE_{i} = "{line}"' for i in range(20)).encode(encoding)
    return "\n".join(line for _ in range(20)).encode(encoding)


def _legacy_vectors() -> list[Vector]:
    vectors = []
    for enc, rows in _CSV_ROWS.items():
        tag = enc.replace("-", "")
        vectors.append(
            Vector(
                f"{tag}.csv",
                lambda e=enc: legacy_csv(e),
                (f"| {' | '.join(rows[0])} |", rows[1][1], "Total rows: 30"),
                ("\ufffd", "binary"),
            )
        )
        first_words = _PROSE[enc][:8]
        vectors.append(
            Vector(f"{tag}.txt", lambda e=enc: legacy_text(e), (first_words,), ("\ufffd",))
        )
        vectors.append(
            Vector(
                f"{tag}.py", lambda e=enc: legacy_text(e, code=True), ("MESSAGE_19", first_words)
            )
        )
    return vectors


# --- notebooks (nbformat) --------------------------------------------------------------


def notebook() -> bytes:
    import nbformat
    from nbformat import v4

    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        v4.new_markdown_cell("# Sales analysis\n\nWe load the **quarterly** figures."),
        v4.new_code_cell(
            "total = sum([120, 340, 560])\nprint('TOTAL-IS', total)",
            execution_count=1,
            outputs=[v4.new_output("stream", name="stdout", text="TOTAL-IS 1020\n")],
        ),
        v4.new_code_cell(
            "total / 3",
            execution_count=2,
            outputs=[
                v4.new_output("execute_result", data={"text/plain": "340.0"}, execution_count=2)
            ],
        ),
        v4.new_code_cell(
            "1 / 0",
            execution_count=3,
            outputs=[
                v4.new_output(
                    "error",
                    ename="ZeroDivisionError",
                    evalue="division by zero",
                    traceback=[
                        "\x1b[0;31m-------------------------------------------\x1b[0m",
                        "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero",
                    ],
                )
            ],
        ),
        v4.new_code_cell(
            "plot()",
            execution_count=4,
            outputs=[
                v4.new_output(
                    "display_data", data={"image/png": "iVBORw0KGgo=", "text/html": "<img>"}
                )
            ],
        ),
        v4.new_raw_cell("RAW-CELL-TEXT"),
    ]
    return nbformat.writes(nb).encode()


# --- PDF with a table and soft hyphens (fpdf2) -----------------------------------------

INVOICE_ROWS = [
    ["Item", "Qty", "Price"],
    ["B-07", "", "-23"],
    ["Widget", "3", "289"],
    ["Gadget", "1", "12.50"],
]


def invoice_pdf(pages: int = 1) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for page in range(pages):
        pdf.add_page()
        pdf.multi_cell(
            w=60,
            text=(
                "The committee is con\u00adfirm\u00ading the pre\u00adlim\u00adi\u00adnary "
                "results of the in\u00adves\u00adti\u00adga\u00adtion, which were "
                "dis\u00adcussed at length. "
            )
            * 3,
        )
        pdf.ln()
        pdf.cell(text=f"Invoice INV-2024-{page:04d}")
        pdf.ln()
        with pdf.table() as table:
            for values in INVOICE_ROWS:
                row = table.row()
                for value in values:
                    row.cell(value)
        pdf.ln()
        pdf.cell(text="Payable within 30 days.")
    return bytes(pdf.output())


def text_pdf(pages: int, lines_per_page: int = 40) -> bytes:
    """Prose only: no table, no ruling line (the PDFium-only baseline)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    for page in range(1, pages + 1):
        pdf.add_page()
        for line in range(lines_per_page):
            pdf.cell(text=f"Page {page} line {line}: the quick brown fox jumps over the lazy dog")
            pdf.ln()
    return bytes(pdf.output())


# --- web pages ---------------------------------------------------------------------------


def encyclopedia_page() -> bytes:
    languages = "".join(
        f'<li class="interlanguage-link"><a href="https://xx{i}.example.org/wiki/Zebra" '
        f'hreflang="x{i}">Language {i}</a></li>'
        for i in range(154)
    )
    menu = "".join(f'<li><a href="/wiki/Portal:{i}">Portal {i}</a></li>' for i in range(40))
    body = " ".join(
        f"<p>Paragraph {i}: zebras are African equines with distinctive black-and-white "
        f"striped coats, and each animal's pattern is unique to it. "
        f"{ARTICLE_SENTINEL if i == 5 else ''}</p>"
        for i in range(12)
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<title>Zebra - Wikipedia</title>"
        '<link rel="canonical" href="https://en.wikipedia.org/wiki/Zebra"></head><body>'
        f'<div id="mw-navigation"><nav id="p-navigation"><h2>Navigation menu</h2><ul>{menu}</ul>'
        "<button>move to sidebar</button><button>hide</button></nav></div>"
        f'<div id="p-lang" class="sidebar"><h3>Languages</h3><ul>{languages}</ul></div>'
        '<main id="content"><h1 id="firstHeading">Zebra</h1>'
        f'<div id="bodyContent"><h2>Taxonomy</h2>{body}'
        "<table class='wikitable'><tr><th>Species</th><th>Range</th></tr>"
        "<tr><td>Plains zebra</td><td>East Africa</td></tr>"
        "<tr><td>Grevy's zebra</td><td>Kenya</td></tr></table></div></main>"
        "<footer><ul><li>Privacy policy</li><li>About Wikipedia</li><li>Disclaimers</li></ul>"
        "</footer></body></html>"
    ).encode()


def _bing_link(target: str) -> str:
    import base64

    encoded = base64.urlsafe_b64encode(target.encode()).decode().rstrip("=")
    return f"https://www.bing.com/ck/a?!&amp;&amp;p=9fe1&amp;ptn=3&amp;ver=2&amp;u=a1{encoded}&amp;ntb=1"


def search_results_page() -> bytes:
    results = "".join(
        f'<li class="b_algo"><h2><a href="{_bing_link(f"https://example.org/zebra{chr(65 + i)}")}">'
        f"Zebra result {i}</a></h2><p>Snippet {i} about zebras.</p></li>"
        for i in range(8)
    )
    unreadable = '<a href="/ck/a?!&&p=77aa&ptn=3&ver=2&hsh=4">Related searches</a>'
    return (
        "<html><head><title>zebra - Search</title></head><body>"
        f'<ol id="b_results">{results}</ol>{unreadable}</body></html>'
    ).encode()


# --- feeds -------------------------------------------------------------------------------


def rss_feed() -> bytes:
    items = "".join(
        f"<item><title>Post number {i}</title><link>https://example.com/posts/{i}?utm_source=rss</link>"
        f"<pubDate>Mon, 0{i + 1} Jan 2024 10:00:00 GMT</pubDate>"
        f"<description>&lt;p&gt;Body of post {i} with &lt;b&gt;bold words&lt;/b&gt;."
        "&lt;/p&gt;</description></item>"
        for i in range(3)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
        "<title>Example Blog</title><link>https://example.com/</link>"
        f"<description>News</description>{items}</channel></rss>"
    ).encode()


def atom_feed() -> bytes:
    entries = "".join(
        f'<entry><title>Release {i}.0</title><link href="https://example.org/releases/{i}"/>'
        f"<id>urn:uuid:{i}</id><updated>2024-0{i + 1}-15T12:00:00Z</updated>"
        f'<content type="html">&lt;ul&gt;&lt;li&gt;Fixed bug {i}&lt;/li&gt;&lt;/ul&gt;'
        "</content></entry>"
        for i in range(1, 4)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        '<title>Project releases</title><link href="https://example.org/"/>'
        f"<id>urn:uuid:feed</id><updated>2024-04-01T00:00:00Z</updated>{entries}</feed>"
    ).encode()


# --- DOCX with comments (python-docx) ---------------------------------------------------


def docx_with_comments() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Budget review", level=1)
    paragraph = document.add_paragraph("Revenue grew by ")
    figure = paragraph.add_run("42 percent")
    paragraph.add_run(" in the third quarter.")
    document.add_comment(figure, text="Please double-check this figure.", author="Alice Reviewer")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


# --- JPEG with GPS EXIF (Pillow) ---------------------------------------------------------


def jpeg_with_gps() -> bytes:
    from PIL import Image

    image = Image.new("RGB", (320, 240), (30, 120, 200))
    exif = Image.Exif()
    exif[0x010E] = "Harbour at dawn"
    exif[0x013B] = "Ada Lovelace"
    exif[0x010F] = "Canon"
    exif[0x0110] = "Canon EOS 5D"
    exif[0x0132] = "2024:05:01 06:30:00"
    gps = exif.get_ifd(0x8825)
    gps[1], gps[2], gps[3], gps[4] = "N", (52.0, 22.0, 30.0), "E", (4.0, 53.0, 10.0)
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif, quality=90)
    return out.getvalue()


# --- ZIP of a folder ---------------------------------------------------------------------


def zipped_folder() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("project/README.md", "# Project\n\nZIPPED-README-TEXT\n")
        zf.writestr("project/data/prices.csv", "item,price\nwidget,3\ngadget,5\n")
        zf.writestr("project/photo.jpg", jpeg_with_gps())
        zf.writestr("project/inner.zip", b"PK\x05\x06" + b"\x00" * 18)
        zf.writestr("__MACOSX/project/._README.md", b"\x00\x05\x16\x07")
    return out.getvalue()


VECTORS: list[Vector] = [
    *_legacy_vectors(),
    Vector(
        "analysis.ipynb",
        notebook,
        (
            "# Sales analysis",
            "```python\ntotal = sum([120, 340, 560])",
            "TOTAL-IS 1020",
            "340.0",
            "Error: ZeroDivisionError: division by zero",
            "[output not shown: image/png, text/html]",
            "RAW-CELL-TEXT",
        ),
        ("\x1b[", '"cell_type"', "KeyError", "iVBORw0KGgo"),
    ),
    Vector(
        "invoice.pdf",
        invoice_pdf,
        (
            "| Item | Qty | Price |",
            "| B-07 |  | -23 |",
            "| Widget | 3 | 289 |",
            "confirming",
            "discussed",
            "investigation",
            "Invoice INV-2024-0000",
            "Payable within 30 days.",
        ),
        ("\ufffe", "\x02", "\ufffd", "B-07 -23", "con\u00adfirm"),
    ),
    Vector(
        "zebra.html",
        encyclopedia_page,
        (ARTICLE_SENTINEL, "Taxonomy", "| Plains zebra | East Africa |", "Zebra"),
        ("move to sidebar", "Language 153", "Privacy policy", "Portal 39"),
    ),
    Vector(
        "results.html",
        search_results_page,
        ("https://example.org/zebraA", "Zebra result 7", "Related searches"),
        ("/ck/a?", "ptn=3"),
    ),
    Vector(
        "blog.rss",
        rss_feed,
        (
            "# Example Blog",
            "## 1. Post number 0",
            "Mon, 01 Jan 2024",
            "https://example.com/posts/2",
            "**bold words**",
        ),
        ("&lt;", "<description>", "<p>", "utm_source"),
    ),
    Vector(
        "releases.xml",
        atom_feed,
        (
            "# Project releases",
            "## 3. Release 3.0",
            "2024-04-15",
            "https://example.org/releases/2",
            "Fixed bug 1",
        ),
        ("&lt;", "<entry>", "<li>"),
    ),
    Vector(
        "review.docx",
        docx_with_comments,
        (
            "# Budget review",
            "## Comments",
            "Alice Reviewer",
            "Please double-check this figure.",
            '"42 percent"',
        ),
    ),
    Vector(
        "folder.zip",
        zipped_folder,
        (
            "# Archive: folder.zip",
            "project/data/prices.csv",
            "ZIPPED-README-TEXT",
            "| widget | 3 |",
            "an image: upload it on its own",
            "a nested archive",
        ),
        ("__MACOSX",),
    ),
]
