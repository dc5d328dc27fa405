"""Public models of the projects API (docs/projects.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from api.schemas.files import UtcDatetime
from service.projects import MAX_INSTRUCTIONS_CHARS, MAX_NAME_CHARS, ProjectView
from store.search import ChunkHit


class ProjectCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    instructions: str | None = Field(
        default=None,
        max_length=MAX_INSTRUCTIONS_CHARS,
        description="opens the project's documents in every context that names the project",
    )


class ProjectUpdate(BaseModel):
    """Only the fields given change; `instructions: null` clears them."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS)
    instructions: str | None = Field(default=None, max_length=MAX_INSTRUCTIONS_CHARS)


class ProjectPublic(BaseModel):
    id: str
    name: str
    instructions: str | None
    file_count: int = Field(description="files in the project, whatever their status")
    ready_count: int = Field(description="files ready")
    token_count: int = Field(description="sum of the ready files' processed tokens")
    chunk_count: int = Field(description="search chunks of the ready files")
    created_at: UtcDatetime
    updated_at: UtcDatetime

    @classmethod
    def of(cls, view: ProjectView) -> ProjectPublic:
        p, s = view.project, view.stats
        return cls(
            id=p.id,
            name=p.name,
            instructions=p.instructions,
            file_count=s.file_count,
            ready_count=s.ready_count,
            token_count=s.token_count,
            chunk_count=s.chunk_count,
            created_at=p.created_at,
            updated_at=p.updated_at,
        )


class ProjectList(BaseModel):
    data: list[ProjectPublic]
    next_cursor: str | None


class ChunkLocation(BaseModel):
    index: int = Field(description="0-based index of the chunk in its file")
    page: int | None = Field(description="page of a document (PDF page, slide), else null")
    sheet: str | None = Field(description="sheet of a workbook, else null")
    line_start: int | None = Field(description="first line (text) or data row (table)")
    line_end: int | None = Field(description="last line or data row, inclusive")


SearchMode = Literal["hybrid", "bm25", "dense"]


class SearchHit(BaseModel):
    chunk_id: int
    file_id: str
    title: str = Field(description="the file's name")
    text: str
    score: float = Field(
        description="higher is better; comparable within one search (hybrid: the fused "
        "reciprocal-rank score; bm25: the engine's bm25; dense: the cosine)"
    )
    chunk: ChunkLocation

    @classmethod
    def of(cls, hit: ChunkHit) -> SearchHit:
        return cls(
            chunk_id=hit.chunk_id,
            file_id=hit.file_id,
            title=hit.title,
            text=hit.text,
            score=hit.score,
            chunk=ChunkLocation(
                index=hit.index,
                page=hit.page,
                sheet=hit.sheet,
                line_start=hit.line_start,
                line_end=hit.line_end,
            ),
        )


class SearchResults(BaseModel):
    data: list[SearchHit]
    next_cursor: None = Field(default=None, description="always null: one page of results")


class FileUpdate(BaseModel):
    """`PATCH /v1/files/{id}`: move the file into a project, or out of it with null."""

    model_config = ConfigDict(extra="forbid")

    project_id: str | None = Field(max_length=64)
