"""Word comments: read from `word/comments.xml`, each with the text it is anchored to.

markitdown (mammoth) leaves comments out; a reviewer's remarks are often what a user
wants read. Both parts are parsed with defusedxml under the archive byte cap.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import defusedxml
import defusedxml.ElementTree as DET
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from contextq.errors import HostileInput
from contextq.files.safety import bounded_read
from contextq.settings import Settings

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
ANCHOR_MAX_CHARS = 200


@dataclass(frozen=True)
class Comment:
    author: str
    date: str
    text: str
    anchor: str  # the document text the comment is attached to


def read_comments(path: Path, settings: Settings) -> list[Comment]:
    """The document's comments in order; [] when it has none."""
    limit = settings.MAX_ARCHIVE_UNCOMPRESSED_BYTES
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        if "word/comments.xml" not in names:
            return []
        comments_xml = bounded_read(zf, "word/comments.xml", limit)
        document_xml = (
            bounded_read(zf, "word/document.xml", limit) if ("word/document.xml" in names) else b""
        )
    anchors = _anchors(document_xml) if document_xml else {}
    found = []
    for element in _parse(comments_xml).iter(f"{_W}comment"):
        cid = element.get(f"{_W}id", "")
        text = _paragraphs(element)
        if not text:
            continue
        found.append(
            Comment(
                author=element.get(f"{_W}author", "") or "",
                date=(element.get(f"{_W}date", "") or "")[:10],
                text=text,
                anchor=anchors.get(cid, ""),
            )
        )
    return found


def comments_markdown(comments: list[Comment]) -> str:
    lines = ["## Comments", ""]
    for c in comments:
        who = f"**{c.author}**" if c.author else "**(no author)**"
        when = f" ({c.date})" if c.date else ""
        anchor = (
            c.anchor if len(c.anchor) <= ANCHOR_MAX_CHARS else c.anchor[:ANCHOR_MAX_CHARS] + "…"
        )
        on = f', on "{anchor}"' if anchor else ""
        lines.append(f"- {who}{when}{on}: {c.text}")
    return "\n".join(lines) + "\n"


def _parse(xml: bytes) -> Any:
    try:
        return DET.fromstring(xml)
    except defusedxml.DefusedXmlException as exc:
        raise HostileInput(f"this DOCX's XML uses forbidden constructs ({exc})") from exc


def _paragraphs(element: Any) -> str:
    paragraphs = []
    for p in element.iter(f"{_W}p"):
        text = "".join(t.text or "" for t in p.iter(f"{_W}t")).strip()
        if text:
            paragraphs.append(text)
    return " / ".join(paragraphs)


def _anchors(document_xml: bytes) -> dict[str, str]:
    """Comment id → the text between its commentRangeStart and commentRangeEnd."""
    open_ids: dict[str, list[str]] = {}
    anchors: dict[str, str] = {}
    try:
        for _event, elem in iterparse(io.BytesIO(document_xml), events=("end",)):
            tag = elem.tag
            if tag == f"{_W}commentRangeStart":
                open_ids[elem.get(f"{_W}id", "")] = []
            elif tag == f"{_W}commentRangeEnd":
                cid = elem.get(f"{_W}id", "")
                anchors[cid] = " ".join("".join(open_ids.pop(cid, [])).split())
            elif tag == f"{_W}t" and open_ids:
                for parts in open_ids.values():
                    if sum(map(len, parts)) < ANCHOR_MAX_CHARS * 2:
                        parts.append(elem.text or "")
    except DefusedXmlException as exc:
        raise HostileInput(f"this DOCX's XML uses forbidden constructs ({exc})") from exc
    except ET.ParseError:
        return anchors  # the body is markitdown's to judge; comments keep no anchor
    return anchors
