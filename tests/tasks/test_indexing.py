"""Indexing in the worker's use cases (`service.files.process_file`, `index_file`) over a
real SQLite file and a real PostgreSQL (no worker process; tests/integration runs the
same code in real workers): the whole text, the cap, reuse, deletion, failures."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from contextq.settings import get_settings
from service import files as fs
from service import projects
from store.blobs import get_blob_store
from store.db import read_session, session_scope
from store.project_tables import ChunkRow, FileChunkSet
from store.search import search_chunks
from store.tables import File
from tests.support.db import get_row
from tests.support.project_files import FACT, FACT_PAGE, FACT_QUESTION, csv_bytes, pdf_bytes

BOTH_BACKENDS = pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


def _project(owner, name: str = "handbook") -> str:
    with session_scope() as s:
        return projects.create_project(session=s, owner_id=owner.owner_id, name=name).project.id


def _row(owner, data: bytes, filename: str, project_id: str | None = None) -> File:
    sha = get_blob_store().put_bytes(data)
    row = File(
        owner_id=owner.owner_id,
        filename=filename,
        size_bytes=len(data),
        sha256=sha,
        project_id=project_id,
    )
    with session_scope() as s:
        s.add(row)
    return row


def _processed(owner, data: bytes, filename: str, project_id: str | None = None) -> File:
    row = _row(owner, data, filename, project_id)
    outcome = fs.process_file(settings=get_settings(), file_id=row.id)
    assert (outcome.status, outcome.written) == ("ready", True)
    stored = get_row(File, row.id)
    assert stored is not None
    return stored


def _search(owner, project_id: str, query: str, mode: str = "bm25") -> list:
    """Full-text matches only by default: these tests ask what is indexed, not what is near."""
    with read_session() as s:
        return search_chunks(
            s, owner_id=owner.owner_id, project_id=project_id, query=query, limit=5, mode=mode
        )


def _chunk_rows() -> int:
    with read_session() as s:
        return int(s.execute(select(func.count()).select_from(ChunkRow)).scalar_one())


@BOTH_BACKENDS
def test_a_project_pdf_is_indexed_on_every_page_before_it_is_ready(stack, owner) -> None:
    project_id = _project(owner)
    row = _processed(owner, pdf_bytes(45), "manual.pdf", project_id)
    index = row.meta["index"]
    assert index["status"] == "indexed" and index["complete"] is True
    assert index["chunks"] >= 45  # a chunk never spans two pages
    # the processed artefact is cut to MAX_TOKENS_PER_FILE; the index holds the whole text
    assert row.truncation["truncated"] is True
    with read_session() as s:
        artefact = fs.file_content(
            session=s, settings=get_settings(), owner_id=owner.owner_id, file_id=row.id
        )
    assert FACT not in artefact.text
    hits = _search(owner, project_id, FACT_QUESTION)
    assert hits and hits[0].page == FACT_PAGE and FACT in hits[0].text
    assert hits[0].file_id == row.id and hits[0].title == "manual.pdf"


def test_a_file_in_no_project_is_not_indexed(stack, owner) -> None:
    row = _processed(owner, b"plain words here\n", "a.txt")
    assert "index" not in (row.meta or {})
    assert _chunk_rows() == 0


@pytest.mark.stack_env(MAX_INDEX_TOKENS_PER_FILE="2000")
def test_indexing_stops_at_the_cap_and_says_where(stack, owner) -> None:
    project_id = _project(owner)
    row = _processed(owner, csv_bytes(3000), "stock.csv", project_id)
    index = row.meta["index"]
    assert index["status"] == "indexed" and index["complete"] is False
    assert index["tokens"] <= 2000 and index["chunks"] >= 1
    assert set(index["stopped_at"]) == {"line"} and index["stopped_at"]["line"] > 1
    assert _search(owner, project_id, "10005")  # early rows are searchable
    assert not _search(owner, project_id, "12990")  # rows past the cap are not


@BOTH_BACKENDS
def test_the_same_bytes_reuse_the_chunks_and_delete_frees_them_with_the_last_file(
    stack, owner, make_owner
) -> None:
    bob = make_owner("bob")
    data = pdf_bytes(8)
    first = _processed(owner, data, "manual.pdf", _project(owner))
    rows_after_first = _chunk_rows()
    second = _processed(bob, data, "copy.pdf", _project(bob, "bob's"))
    assert second.meta["index"] == first.meta["index"]
    assert _chunk_rows() == rows_after_first  # no second copy of the chunks
    with read_session() as s:
        links = {
            link.file_id: link.chunk_set_id for link in s.execute(select(FileChunkSet)).scalars()
        }
    assert links[first.id] == links[second.id]

    settings = get_settings()
    with session_scope() as s:
        fs.delete_file(session=s, settings=settings, owner_id=owner.owner_id, file_id=first.id)
    assert _chunk_rows() == rows_after_first  # bob's file still has these bytes
    with session_scope() as s:
        fs.delete_file(session=s, settings=settings, owner_id=bob.owner_id, file_id=second.id)
    assert _chunk_rows() == 0


def test_a_file_moved_in_after_processing_is_indexed_by_index_file(stack, owner) -> None:
    project_id = _project(owner)
    row = _processed(owner, pdf_bytes(45), "manual.pdf")
    settings = get_settings()
    with session_scope() as s:
        moved = projects.move_file(
            session=s, settings=settings, owner_id=owner.owner_id, file_id=row.id,
            project_id=project_id,
        )  # fmt: skip
        assert moved.project_id == project_id
    assert not _search(owner, project_id, FACT_QUESTION)  # not indexed yet
    done = fs.index_file(settings=settings, file_id=row.id)  # what the index_file task runs
    assert done is not None and done.meta["status"] == "indexed"
    assert get_row(File, row.id).meta["index"] == done.meta
    assert _search(owner, project_id, FACT_QUESTION)[0].page == FACT_PAGE
    assert fs.index_file(settings=settings, file_id=row.id) is None  # already indexed

    with session_scope() as s:  # out of the project: search no longer sees it
        projects.move_file(session=s, settings=settings, owner_id=owner.owner_id,
                           file_id=row.id, project_id=None)  # fmt: skip
    assert not _search(owner, project_id, FACT_QUESTION)
    assert fs.index_file(settings=settings, file_id=row.id) is None  # in no project


def test_an_indexing_failure_is_recorded_and_the_file_stays_ready(stack, owner) -> None:
    """The stored bytes lost after processing (a real storage fault): the index_file of a
    moved file cannot read them; the file stays ready and says why it is not searchable."""
    project_id = _project(owner)
    row = _processed(owner, b"alpha beta gamma\n" * 50, "notes.txt")
    get_blob_store().path(row.sha256).unlink()
    settings = get_settings()
    with session_scope() as s:
        projects.move_file(session=s, settings=settings, owner_id=owner.owner_id,
                           file_id=row.id, project_id=project_id)  # fmt: skip
    done = fs.index_file(settings=settings, file_id=row.id)
    assert done is not None and done.meta["status"] == "failed"
    assert "not searchable" in done.meta["error"]
    stored = get_row(File, row.id)
    assert stored.status == "ready" and stored.meta["index"]["status"] == "failed"


def test_a_file_with_no_text_is_skipped_with_a_reason(stack, owner) -> None:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), "red").save(buffer, format="PNG")
    row = _processed(owner, buffer.getvalue(), "red.png", _project(owner))
    assert row.status == "ready"
    assert row.meta["index"] == {"status": "skipped", "reason": "image files have no text to index"}


def test_index_file_gives_up_after_its_worker_died_max_attempts_times(stack, owner) -> None:
    """Each index_file run records itself as running first; a run that finds MAX_ATTEMPTS
    earlier runs that never finished (their worker was killed; the message came back)
    records the file as not searchable instead of trying again."""
    project_id = _project(owner)
    row = _processed(owner, b"delta epsilon\n" * 40, "notes.txt", None)
    settings = get_settings()
    with session_scope() as s:
        projects.move_file(session=s, settings=settings, owner_id=owner.owner_id,
                           file_id=row.id, project_id=project_id)  # fmt: skip
        stored = s.get(File, row.id)
        died = {"status": "running", "attempts": settings.MAX_ATTEMPTS}
        stored.meta = {**stored.meta, "index": died}  # what three killed runs leave behind
    done = fs.index_file(settings=settings, file_id=row.id)
    assert done is not None and done.meta["status"] == "failed"
    assert f"stopped the worker {settings.MAX_ATTEMPTS} times" in done.meta["error"]
    assert get_row(File, row.id).meta["index"] == done.meta
    assert _chunk_rows() == 0
    # a run after one that died (attempt 2) still indexes
    with session_scope() as s:
        stored = s.get(File, row.id)
        stored.meta = {**stored.meta, "index": {"status": "running", "attempts": 1}}
    assert fs.index_file(settings=settings, file_id=row.id).meta["status"] == "indexed"


@BOTH_BACKENDS
def test_chunk_sets_indexed_before_vectors_are_embedded_by_the_backfill(stack, owner) -> None:
    """A set stored with no vectors (as before migration 0014) is found by bm25 only, until
    the `embed_missing` sweep embeds it; then dense search finds it, and the next sweep
    has nothing to do."""
    from sqlalchemy import update

    from store.project_tables import ChunkSet
    from store.search import VECTORS

    project_id = _project(owner)
    row = _processed(owner, pdf_bytes(FACT_PAGE), "manual.pdf", project_id)
    with session_scope() as s:  # what a file indexed before hybrid search looks like
        s.execute(update(ChunkRow).values(embedding=None))
        s.execute(update(ChunkSet).values(embedder=None))
    VECTORS.clear()
    assert _search(owner, project_id, FACT_QUESTION, "dense") == []
    assert _search(owner, project_id, FACT_QUESTION)[0].page == FACT_PAGE

    done = fs.embed_missing_vectors()
    assert (done.sets, done.chunks, done.left) == (1, row.meta["index"]["chunks"], False)
    hits = _search(owner, project_id, FACT_QUESTION, "dense")
    assert hits and hits[0].page == FACT_PAGE
    assert fs.embed_missing_vectors().as_dict() == {"sets": 0, "chunks": 0, "left": False}
