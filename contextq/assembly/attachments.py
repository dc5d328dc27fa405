"""How a user message's attached files are given to the model
(docs/history.md#how-files-are-given-to-the-model).

- Documents (every category but image and audio) go into one user message per
  inclusion, just above their user message: `{"documents": [{"citation_id", "title",
  "contents", "metadata"}]}`, where `metadata` always says what was left out.
- Images are image parts of the user message in the target format (OpenAI `image_url`
  with a `data:` URL and `detail`; Anthropic `image` with a base64 source; …: the
  format's `image_part`) when the model takes images and the format takes their type.
- Audio is an audio part (OpenAI's `input_audio`, MP3 or WAV: the format's
  `audio_part`) when the model takes audio and the format has such a part.
- Otherwise a text line names the file with its description, and the file is listed
  with the reason. A file that is not ready is listed (pending or failed) with a reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from contextq.assembly.citations import CitationMap, file_key
from contextq.assembly.counting import audio_tokens, image_tokens, json_tokens
from contextq.assembly.inputs import FileView
from contextq.catalog import ModelLimits


class PartFormat(Protocol):
    """What the files need of a wire format (`contextq.assembly.wire.WireFormat` is one):
    its parts, and which images and audio it takes."""

    @property
    def image_types(self) -> frozenset[str] | None: ...
    @property
    def no_audio(self) -> str | None: ...
    def text_part(self, text: str) -> dict[str, Any]: ...
    def image_part(self, media_type: str, data_b64: str, detail: str) -> dict[str, Any]: ...
    def audio_part(self, media_type: str, data_b64: str) -> dict[str, Any] | str: ...


IMAGE_DETAIL = "high"


@dataclass(frozen=True, slots=True)
class FileNote:
    file_id: str
    reason: str
    pending: bool = False  # still processing (else: not included for good, for now)


@dataclass(frozen=True, slots=True)
class Document:
    """One entry of a documents message; its citation id is given when rendered."""

    source_key: str
    file_id: str
    title: str
    contents: str
    metadata: str
    source: Literal["file", "project"] = "file"
    chunk: Mapping[str, Any] | None = None


@dataclass(slots=True)
class Attached:
    """What one user message's files become."""

    documents: list[Document] = field(default_factory=list)
    parts: list[dict[str, Any]] = field(default_factory=list)  # in the target format
    part_tokens: int = 0
    notes: list[FileNote] = field(default_factory=list)


def documents_text(documents: Sequence[Document], ids: Mapping[str, int]) -> str:
    """The text of a documents message (compact keys, readable spacing, UTF-8 kept)."""
    entries = [
        {
            "citation_id": ids[d.source_key],
            "title": d.title,
            "contents": d.contents,
            "metadata": d.metadata,
        }
        for d in documents
    ]
    return json.dumps({"documents": entries}, ensure_ascii=False)


def document_metadata(view: FileView) -> str:
    """`document (pdf), 12 pages; truncated: lines 200 of 365` — always saying what was
    left out ("nothing left out" when nothing was)."""
    kind = view.category + (f" ({view.file_type})" if view.file_type else "")
    facts = [kind]
    meta = view.metadata
    for key, label in (("pages", "pages"), ("sheets", "sheets"), ("slides", "slides")):
        value = meta.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            facts.append(f"{int(value)} {label}")
    rows = meta.get("total_rows", meta.get("rows"))
    if isinstance(rows, int) and not isinstance(rows, bool):
        facts.append(f"{rows} rows")
    left_out = f"truncated: {view.truncation_summary}" if view.truncation_summary else None
    return ", ".join(facts) + "; " + (left_out or "nothing left out")


def attach(
    views: Sequence[FileView],
    *,
    limits: ModelLimits,
    wire: PartFormat,
    encoding: str,
) -> Attached:
    """The attachments of one user message (its `file_ids` resolved to views, in order)."""
    out = Attached()
    for view in views:
        if view.status != "ready":
            out.notes.append(_not_ready(view))
        elif view.is_document:
            if view.text is None:
                out.notes.append(
                    FileNote(view.id, "its processed text is missing; upload it again")
                )
            else:
                out.documents.append(_document(view))
        elif view.category == "image":
            _image(view, out, limits=limits, wire=wire, encoding=encoding)
        else:
            _audio(view, out, limits=limits, wire=wire, encoding=encoding)
    return out


def _document(view: FileView) -> Document:
    return Document(
        source_key=file_key(view.id),
        file_id=view.id,
        title=view.filename or view.id,
        contents=view.text or "",
        metadata=document_metadata(view),
    )


def _not_ready(view: FileView) -> FileNote:
    if view.status == "missing":
        return FileNote(view.id, "the file was deleted after it was attached; upload it again")
    if view.status == "failed":
        error = (view.error or "unknown error").strip()
        return FileNote(view.id, f"the file failed to process: {error}")
    return FileNote(
        view.id,
        f"the file is still being processed (status: {view.status}); "
        "it is included once it is ready",
        pending=True,
    )


def _text_part(text: str, wire: PartFormat, encoding: str) -> tuple[dict[str, Any], int]:
    part = wire.text_part(text)
    return part, json_tokens(part, encoding)


def _label(view: FileView, kind: str) -> str:
    return f"Attached {kind}: {view.filename or view.id}"


def _add_text_line(
    view: FileView, out: Attached, *, kind: str, why: str, wire: PartFormat, enc: str
) -> None:
    description = " ".join((view.text or "").split())
    line = f"[{_label(view, kind)}. {description} Not included: {why}.]"
    part, tokens = _text_part(line, wire, enc)
    out.parts.append(part)
    out.part_tokens += tokens
    out.notes.append(FileNote(view.id, f"{why}; the message names the file instead"))


def _image(
    view: FileView, out: Attached, *, limits: ModelLimits, wire: PartFormat, encoding: str
) -> None:
    name = limits.model or limits.catalog_id or "this model"
    if not limits.takes("image"):
        why = f"{name} takes no image input"
        _add_text_line(view, out, kind="image", why=why, wire=wire, enc=encoding)
        return
    media = view.media_type or ""
    taken = wire.image_types is None or media in wire.image_types
    if not view.data_b64 or not taken:
        why = "its processed image is missing from storage; upload it again"
        out.notes.append(FileNote(view.id, why))
        return
    label, label_tokens = _text_part(_label(view, "image"), wire, encoding)
    width = int(view.metadata.get("width") or 0)
    height = int(view.metadata.get("height") or 0)
    part = wire.image_part(media, view.data_b64, IMAGE_DETAIL)
    out.parts.extend([label, part])
    out.part_tokens += label_tokens + image_tokens(width, height, limits.provider, IMAGE_DETAIL)


def _audio(
    view: FileView, out: Attached, *, limits: ModelLimits, wire: PartFormat, encoding: str
) -> None:
    name = limits.model or limits.catalog_id or "this model"
    part: dict[str, Any] | str | None = None
    if wire.no_audio is not None:
        why = wire.no_audio
    elif not limits.takes("audio"):
        why = f"{name} takes no audio input"
    else:
        part = wire.audio_part(view.media_type or "", view.data_b64 or "")
        if isinstance(part, str):
            why = part
        elif not view.data_b64:
            why = "its processed audio is missing from storage; upload it again"
        else:
            label, label_tokens = _text_part(_label(view, "audio"), wire, encoding)
            out.parts.extend([label, part])
            seconds = float(view.metadata.get("kept_s") or view.metadata.get("duration_s") or 0.0)
            out.part_tokens += label_tokens + audio_tokens(seconds, limits.provider)
            return
    _add_text_line(view, out, kind="audio", why=why, wire=wire, enc=encoding)


def provisional_ids(documents: Sequence[Document], citations: CitationMap) -> dict[str, int]:
    return {d.source_key: citations.provisional(d.source_key) for d in documents}
