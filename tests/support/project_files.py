"""Real files for project tests, made with real libraries (fpdf2, python-docx, csv).

The PDF has one distinct text per page (seeded), and only page `FACT_PAGE` states the
fact `FACT_QUESTION` asks about; its rare words (`Halvorsen`) occur nowhere else.
"""

from __future__ import annotations

import csv
import io
import random

FACT_PAGE = 40
FACT = "The torque wrench calibration interval for the Halvorsen press is 90 days."
FACT_QUESTION = "How often must the torque wrench of the Halvorsen press be calibrated?"
DOCX_FACT = "Visitors to the Oslo plant sign the Quillfeather register at gate B."
CSV_FACT_ROW = ("SKU-77321", "Zephyrine gasket", "48")
MARKDOWN_FACT = "Restart the Brimblecombe daemon with `brimctl restart --soft`."

_TOPICS = [
    "lubrication", "conveyor alignment", "shift handover", "spare parts", "forklift charging",
    "dust extraction", "pallet labelling", "quality sampling", "noise protection",
    "coolant disposal", "valve inspection", "belt tension", "sensor cleaning", "fire drills",
]  # fmt: skip
_SENTENCE = (
    "operators check the line before each shift and record readings in the log while "
    "supervisors review deviations weekly and maintenance teams schedule repairs when "
    "tolerances drift beyond limits documented in the station binder near the panel"
)
_WORDS = _SENTENCE.split()


def page_texts(pages: int, *, seed: int = 11) -> list[str]:
    """One distinct paragraph per page; page FACT_PAGE (1-based) also states FACT."""
    rng = random.Random(seed)
    out = []
    for page in range(1, pages + 1):
        topic = _TOPICS[page % len(_TOPICS)]
        words = " ".join(rng.choice(_WORDS) for _ in range(160))
        text = f"Page {page} covers {topic} procedure {page * 7 + 3}. {words.capitalize()}."
        if page == FACT_PAGE:
            text += " " + FACT
        out.append(text)
    return out


def pdf_bytes(pages: int = 45) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for text in page_texts(pages):
        pdf.add_page()
        pdf.multi_cell(0, 5, text)
    return bytes(pdf.output())


# a staff handbook, one rule per page; HANDBOOK_QUESTION shares no word with its answer
HANDBOOK = [
    "Annual leave accrues at two days for every month of service.",
    "Passwords are rotated every ninety days and contain twelve characters.",
    "The canteen serves subsidised lunches from noon until two.",
    "Fire drills are held every quarter; the assembly point is the north car park.",
    "Receipts must be submitted within thirty days of the purchase.",
    "Equipment damage is covered by the employer when it happens during normal duties.",
    "Parking permits are issued by reception for a monthly fee.",
    "Performance appraisals take place twice a year with the line manager.",
]
HANDBOOK_ANSWER_PAGE = 6
HANDBOOK_QUESTION = "who pays if my work laptop breaks"
_HANDBOOK_FILLER = (
    "This section belongs to the staff handbook, revised by the people team. Questions about "
    "it go to the office manager, and the latest version is kept on the intranet."
)


def handbook_pdf_bytes() -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for number, rule in enumerate(HANDBOOK, 1):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Handbook, section {number}. {_HANDBOOK_FILLER} {rule}")
    return bytes(pdf.output())


def docx_bytes() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Site access policy", level=1)
    document.add_paragraph("Every visitor is escorted by a member of staff at all times.")
    document.add_heading("Registers", level=2)
    document.add_paragraph(DOCX_FACT)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def csv_bytes(rows: int = 300) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["sku", "name", "stock"])
    for i in range(rows):
        if i == rows // 2:
            writer.writerow(CSV_FACT_ROW)
        writer.writerow([f"SKU-{10000 + i}", f"standard part {i}", str(i % 97)])
    return buffer.getvalue().encode()


def markdown_bytes() -> bytes:
    return (
        "# Runbook\n\n## Deploys\n\nDeploy from the main branch after the checks pass.\n\n"
        f"## Daemons\n\n{MARKDOWN_FACT}\n"
    ).encode()


def project_files(pages: int = 45) -> dict[str, tuple[bytes, str]]:
    """filename -> (bytes, content type) of the four kinds."""
    return {
        "manual.pdf": (pdf_bytes(pages), "application/pdf"),
        "policy.docx": (
            docx_bytes(),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
        "stock.csv": (csv_bytes(), "text/csv"),
        "runbook.md": (markdown_bytes(), "text/markdown"),
    }
