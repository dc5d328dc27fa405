"""How a user message's attached files are given to the model (SPEC §6).

- Documents (every category but image and audio) go into one user message per
  inclusion, just above their user message: `{"documents": [{"citation_id", "title",
  "contents", "metadata"}]}`, where `metadata` always says what was left out.
- Images are image parts of the user message (OpenAI `image_url` with a `data:` URL and
  `detail`; Anthropic `image` with a base64 source) when the model takes images.
- Audio is an `input_audio` part (OpenAI format, a model that takes audio, MP3 or WAV).
- Otherwise a text line names the file with its description, and the file is listed
  with the reason. A file that is not ready is listed (pending or failed) with a reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from contextq.assembly.citations import CitationMap, file_key
from contextq.assembly.counting import audio_tokens, image_tokens, json_tokens
from contextq.assembly.inputs import FileView
from contextq.catalog import ModelLimits

IMAGE_DETAIL = "high"
AUDIO_FORMATS = {"audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/wav": "wav", "audio/x-wav": "wav"}
ANTHROPIC_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


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
    fmt: str,
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
            _image(view, out, limits=limits, fmt=fmt, encoding=encoding)
        else:
            _audio(view, out, limits=limits, fmt=fmt, encoding=encoding)
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


def _text_part(text: str, fmt: str, encoding: str) -> tuple[dict[str, Any], int]:
    part = {"type": "text", "text": text}
    return part, json_tokens(part, encoding)


def _label(view: FileView, kind: str) -> str:
    return f"Attached {kind}: {view.filename or view.id}"


def _add_text_line(
    view: FileView, out: Attached, *, kind: str, why: str, fmt: str, enc: str
) -> None:
    description = " ".join((view.text or "").split())
    line = f"[{_label(view, kind)}. {description} Not included: {why}.]"
    part, tokens = _text_part(line, fmt, enc)
    out.parts.append(part)
    out.part_tokens += tokens
    out.notes.append(FileNote(view.id, f"{why}; the message names the file instead"))


def _image(view: FileView, out: Attached, *, limits: ModelLimits, fmt: str, encoding: str) -> None:
    name = limits.model or limits.catalog_id or "this model"
    if not limits.takes("image"):
        why = f"{name} takes no image input"
        _add_text_line(view, out, kind="image", why=why, fmt=fmt, enc=encoding)
        return
    media = view.media_type or ""
    if not view.data_b64 or (fmt == "anthropic" and media not in ANTHROPIC_IMAGE_TYPES):
        why = "its processed image is missing from storage; upload it again"
        out.notes.append(FileNote(view.id, why))
        return
    label, label_tokens = _text_part(_label(view, "image"), fmt, encoding)
    width = int(view.metadata.get("width") or 0)
    height = int(view.metadata.get("height") or 0)
    if fmt == "anthropic":
        source = {"type": "base64", "media_type": media, "data": view.data_b64}
        part: dict[str, Any] = {"type": "image", "source": source}
    else:
        url = f"data:{media};base64,{view.data_b64}"
        part = {"type": "image_url", "image_url": {"url": url, "detail": IMAGE_DETAIL}}
    out.parts.extend([label, part])
    out.part_tokens += label_tokens + image_tokens(width, height, limits.provider, IMAGE_DETAIL)


def _audio(view: FileView, out: Attached, *, limits: ModelLimits, fmt: str, encoding: str) -> None:
    name = limits.model or limits.catalog_id or "this model"
    audio_format = AUDIO_FORMATS.get(view.media_type or "")
    if fmt == "anthropic":
        why = "the Anthropic Messages API takes no audio input"
    elif not limits.takes("audio"):
        why = f"{name} takes no audio input"
    elif audio_format is None:
        why = f"input_audio takes MP3 or WAV, not {view.media_type or 'this format'}"
    elif not view.data_b64:
        why = "its processed audio is missing from storage; upload it again"
    else:
        label, label_tokens = _text_part(_label(view, "audio"), fmt, encoding)
        part = {
            "type": "input_audio",
            "input_audio": {"data": view.data_b64, "format": audio_format},
        }
        out.parts.extend([label, part])
        seconds = float(view.metadata.get("kept_s") or view.metadata.get("duration_s") or 0.0)
        out.part_tokens += label_tokens + audio_tokens(seconds, limits.provider)
        return
    _add_text_line(view, out, kind="audio", why=why, fmt=fmt, enc=encoding)


def provisional_ids(documents: Sequence[Document], citations: CitationMap) -> dict[str, int]:
    return {d.source_key: citations.provisional(d.source_key) for d in documents}
