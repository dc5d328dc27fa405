"""A project's documents for the context (docs/history.md#how-files-are-given-to-the-model,
docs/projects.md).

No SQL here: `service.projects.project_documents` loads the files and the ranked chunks;
this module turns them into documents, says what each one is and what was left out
(`metadata`), counts what each costs in the documents JSON, and keeps the ones that fit.

A document has a `citation_key` that is stable for what it shows — `file:<file id>` for
a whole file, `chunk:<file id>:<chunk index>` for a chunk — so the assembly can map it to
the conversation's stored citation id (a new one the first time it is cited). Its
`token_count` is what its entry costs in `{"documents": [...]}` with a citation id of up
to `CITATION_ID_DIGITS` digits, plus one token of margin for the join between entries.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextq import tokens

CITATION_ID_DIGITS = 6
_ID_PLACEHOLDER = 10**CITATION_ID_DIGITS - 1
_JOIN_MARGIN = 1


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """Which chunk of a file a document shows (the citation's `chunk`)."""

    index: int
    page: int | None = None

    def as_dict(self) -> dict[str, int | None]:
        return {"index": self.index, "page": self.page}


@dataclass(frozen=True, slots=True)
class ProjectDocument:
    citation_key: str
    file_id: str
    title: str
    contents: str
    metadata: str
    token_count: int
    chunk: ChunkRef | None = None

    def as_document(self, citation_id: int) -> dict[str, Any]:
        """The entry of `{"documents": [...]}`
        (docs/history.md#how-files-are-given-to-the-model)."""
        return {
            "citation_id": citation_id,
            "title": self.title,
            "contents": self.contents,
            "metadata": self.metadata,
        }

    def as_citation(self, citation_id: int) -> dict[str, Any]:
        """The entry of the answer's `citations` (docs/projects.md), `source: "project"`."""
        return {
            "citation_id": citation_id,
            "file_id": self.file_id,
            "title": self.title,
            "source": "project",
            "chunk": None if self.chunk is None else self.chunk.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class FileText:
    """A ready file of the project with its processed text (what goes into context)."""

    file_id: str
    title: str
    category: str
    text: str
    meta: Mapping[str, Any] | None = None
    truncation: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ChunkText:
    """A ranked chunk of a project file."""

    file_id: str
    title: str
    text: str
    index: int
    page: int | None = None
    sheet: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    heading: str | None = None
    chunks_in_file: int | None = None
    category: str | None = None


def documents_json(documents: Sequence[ProjectDocument], citation_ids: Sequence[int]) -> str:
    """`{"documents": [...]}` with these citation ids (in the documents' order)."""
    entries = [d.as_document(i) for d, i in zip(documents, citation_ids, strict=True)]
    return json.dumps({"documents": entries}, ensure_ascii=False)


def project_message_text(
    instructions: str | None, documents: Sequence[ProjectDocument], citation_ids: Sequence[int]
) -> str:
    """The P message's text: the project's instructions, then its documents JSON."""
    body = documents_json(documents, citation_ids)
    return f"{instructions.strip()}\n\n{body}" if instructions and instructions.strip() else body


def frame_tokens(instructions: str | None, encoding: str) -> int:
    """What the P message costs besides its documents: instructions and the JSON wrapper."""
    return tokens.count_tokens(project_message_text(instructions, [], []), encoding)


def _cost(title: str, contents: str, metadata: str, encoding: str) -> int:
    entry = {
        "citation_id": _ID_PLACEHOLDER,
        "title": title,
        "contents": contents,
        "metadata": metadata,
    }
    return tokens.count_tokens(json.dumps(entry, ensure_ascii=False), encoding) + _JOIN_MARGIN


def whole_file_document(file: FileText, *, encoding: str) -> ProjectDocument:
    metadata = file_metadata(file.category, file.meta, file.truncation)
    return ProjectDocument(
        citation_key=f"file:{file.file_id}",
        file_id=file.file_id,
        title=file.title,
        contents=file.text,
        metadata=metadata,
        token_count=_cost(file.title, file.text, metadata, encoding),
    )


def chunk_document(chunk: ChunkText, *, encoding: str) -> ProjectDocument:
    metadata = chunk_metadata(chunk)
    return ProjectDocument(
        citation_key=f"chunk:{chunk.file_id}:{chunk.index}",
        file_id=chunk.file_id,
        title=chunk.title,
        contents=chunk.text,
        metadata=metadata,
        token_count=_cost(chunk.title, chunk.text, metadata, encoding),
        chunk=ChunkRef(chunk.index, chunk.page),
    )


def file_metadata(
    category: str, meta: Mapping[str, Any] | None, truncation: Mapping[str, Any] | None
) -> str:
    """ "document, 12 pages; complete" / "tabular; truncated: rows: 30 of 5000 …"."""
    meta = meta or {}
    parts = [category or "file"]
    pages = meta.get("pages")
    if isinstance(pages, int):
        parts[0] += f", {pages} page{'s' if pages != 1 else ''}"
    if category in ("image", "audio"):
        parts.append(f"the {category} itself is not included, only its description")
    trunc = truncation or {}
    if trunc.get("truncated"):
        parts.append(f"truncated: {trunc.get('summary') or 'cut to fit MAX_TOKENS_PER_FILE'}")
    else:
        parts.append("complete")
    return "; ".join(parts)


def chunk_metadata(chunk: ChunkText) -> str:
    """Names the file, the chunk and where it lies: "report.pdf, chunk 12 of 87, page 40"."""
    where = f"chunk {chunk.index + 1}"
    if chunk.chunks_in_file:
        where += f" of {chunk.chunks_in_file}"
    parts = [chunk.title, where]
    if chunk.page is not None:
        parts.append(f"page {chunk.page}")
    if chunk.sheet is not None:
        parts.append(f"sheet {chunk.sheet}")
    if chunk.line_start is not None:
        unit = "rows" if chunk.category == "tabular" or chunk.sheet is not None else "lines"
        end = chunk.line_end if chunk.line_end is not None else chunk.line_start
        parts.append(f"{unit} {chunk.line_start}-{end}")
    if chunk.heading:
        parts.append(f"under {chunk.heading!r}")
    return ", ".join(parts) + "; an excerpt: the best-matching part of the file for the query"


def pack(documents: Iterable[ProjectDocument], budget_tokens: int) -> list[ProjectDocument]:
    """The documents, in order, that fit `budget_tokens` together: one that does not fit
    is skipped and the next ones are still tried (a smaller one may fit)."""
    kept: list[ProjectDocument] = []
    left = budget_tokens
    for document in documents:
        if document.token_count <= left:
            kept.append(document)
            left -= document.token_count
    return kept


__all__ = [
    "CITATION_ID_DIGITS",
    "ChunkRef",
    "ChunkText",
    "FileText",
    "ProjectDocument",
    "chunk_document",
    "chunk_metadata",
    "documents_json",
    "file_metadata",
    "frame_tokens",
    "pack",
    "project_message_text",
    "whole_file_document",
]
