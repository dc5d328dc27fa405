"""Hybrid search on a real PDF (fpdf2), indexed as the worker does (whole text → chunks →
passage vectors), on a real SQLite file and a real PostgreSQL: a paraphrased question
with no word of its answer finds the right page first; the modes; stored vectors."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import text

from contextq.files.fulltext import iter_sections
from contextq.retrieval import embedding
from contextq.retrieval.chunking import ChunkerOptions, chunk_sections, chunk_set_key
from contextq.settings import get_settings
from store import search as search_module
from store.chunks_queries import link_file, store_chunk_set
from store.db import read_session, session_scope
from store.project_tables import Project
from store.search import search_chunks
from store.tables import File, FileStatus
from tests.support.project_files import (
    HANDBOOK_ANSWER_PAGE,
    HANDBOOK_QUESTION,
    handbook_pdf_bytes,
)

BOTH_BACKENDS = pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
ANSWER_PAGE = HANDBOOK_ANSWER_PAGE
QUESTION = HANDBOOK_QUESTION


def index_pdf(tmp_path: Path, owner_id: str, project_id: str) -> int:
    """Indexed as `service.files.indexing` does; returns the chunk set's id."""
    settings = get_settings()
    pdf = tmp_path / "handbook.pdf"
    data = handbook_pdf_bytes()
    pdf.write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    options = ChunkerOptions.from_settings(settings)
    chunked = chunk_sections(iter_sections(pdf, pdf.name, settings=settings), options=options)
    vectors = embedding.chunk_vectors(chunked.chunks)
    with session_scope() as s:
        row = File(owner_id=owner_id, filename=pdf.name, size_bytes=1, sha256=sha,
                   status=FileStatus.READY, project_id=project_id)  # fmt: skip
        s.add(row)
        s.flush()
        chunk_set = store_chunk_set(s, key=chunk_set_key(sha, options), content_sha256=sha,
                                    chunker=options.fingerprint(), chunked=chunked,
                                    vectors=vectors, embedder=embedding.EMBEDDER)  # fmt: skip
        assert chunk_set.id is not None
        link_file(s, file_id=row.id, chunk_set_id=chunk_set.id)
        return chunk_set.id


def search(owner_id: str, project_id: str, query: str, mode: str) -> list:
    with read_session() as s:
        return search_chunks(s, owner_id=owner_id, project_id=project_id, query=query,
                             limit=3, mode=mode)  # type: ignore[arg-type]  # fmt: skip


@BOTH_BACKENDS
def test_a_paraphrased_question_finds_its_page_first_only_with_dense(
    stack, owner, tmp_path: Path
) -> None:
    with session_scope() as s:
        project = Project(owner_id=owner.owner_id, name="handbook")
        s.add(project)
        s.flush()
        project_id = project.id
    set_id = index_pdf(tmp_path, owner.owner_id, project_id)
    search_module.VECTORS.clear()

    hybrid = search(owner.owner_id, project_id, QUESTION, "hybrid")
    dense = search(owner.owner_id, project_id, QUESTION, "dense")
    bm25 = search(owner.owner_id, project_id, QUESTION, "bm25")
    assert hybrid[0].page == ANSWER_PAGE and "Equipment damage" in hybrid[0].text
    assert dense[0].page == ANSWER_PAGE
    assert all(h.page != ANSWER_PAGE for h in bm25)  # no shared word: bm25 cannot see it
    assert hybrid[0].score > hybrid[-1].score
    # a lexical question still works in every mode
    for mode in ("hybrid", "bm25", "dense"):
        found = search(owner.owner_id, project_id, "how many characters must passwords have", mode)
        assert found[0].page == 2, mode

    with read_session() as s:  # vectors stored with the chunks, one row per passage
        rows = s.execute(
            text("SELECT c.embedding, s.embedder FROM chunks c JOIN chunk_sets s "
                 "ON s.id = c.chunk_set_id WHERE s.id = :id"), {"id": set_id}
        ).all()  # fmt: skip
    assert rows and all(r.embedder == embedding.EMBEDDER for r in rows)
    assert all(len(r.embedding) % embedding.DIM == 0 and r.embedding for r in rows)  # int8 rows


@BOTH_BACKENDS
def test_stored_vectors_are_loaded_once_per_process(
    stack, owner, tmp_path: Path, monkeypatch
) -> None:
    with session_scope() as s:
        project = Project(owner_id=owner.owner_id, name="handbook")
        s.add(project)
        s.flush()
        project_id = project.id
    index_pdf(tmp_path, owner.owner_id, project_id)
    search_module.VECTORS.clear()
    loads: list[list[int]] = []
    real = search_module.load_vectors

    def counting(session, set_ids):  # type: ignore[no-untyped-def]
        loads.append(list(set_ids))
        return real(session, set_ids)

    monkeypatch.setattr(search_module, "load_vectors", counting)
    first = search(owner.owner_id, project_id, QUESTION, "hybrid")
    again = search(owner.owner_id, project_id, QUESTION, "hybrid")
    assert len(loads) == 1 and first == again
    with pytest.raises(ValueError, match="mode must be one of"):
        search(owner.owner_id, project_id, QUESTION, "fuzzy")
