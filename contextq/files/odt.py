"""ODT → markdown: headings and paragraphs of content.xml (markitdown has no ODT converter)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import defusedxml
import defusedxml.ElementTree as DET

from contextq.errors import HostileInput, InvalidInput
from contextq.files.safety import bounded_read
from contextq.settings import Settings

_ODF_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def odt_to_markdown(path: Path, settings: Settings) -> str:
    """Headings and paragraphs of an ODT's content.xml, parsed with defusedxml."""
    try:
        with zipfile.ZipFile(path) as zf:
            xml = bounded_read(zf, "content.xml", settings.MAX_ARCHIVE_UNCOMPRESSED_BYTES)
    except KeyError as exc:
        raise InvalidInput("this ODT has no content.xml; it is not an OpenDocument text") from exc
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InvalidInput(f"this ODT could not be read: it looks corrupt ({exc})") from exc
    try:
        root = DET.fromstring(xml)
    except defusedxml.DefusedXmlException as exc:
        raise HostileInput(f"this ODT's XML uses forbidden constructs ({exc})") from exc
    except DET.ParseError as exc:
        raise InvalidInput(f"this ODT's content.xml is not valid XML ({exc})") from exc
    heading, paragraph = f"{{{_ODF_TEXT}}}h", f"{{{_ODF_TEXT}}}p"
    blocks: list[str] = []
    for element in root.iter():
        if element.tag not in (heading, paragraph):
            continue
        text = "".join(element.itertext()).strip()
        if not text:
            continue
        if element.tag == heading:
            level = element.get(f"{{{_ODF_TEXT}}}outline-level", "1")
            depth = min(max(int(level) if level.isdigit() else 1, 1), 6)
            text = "#" * depth + " " + text
        blocks.append(text)
    return "\n\n".join(blocks) + "\n"
