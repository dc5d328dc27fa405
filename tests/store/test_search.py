"""Chunk sets and full-text search on a real SQLite file and a real PostgreSQL (docs/retrieval.md):
indexing, ranking, owner/project/status scope, hostile queries, reuse, deletion."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select, text

from contextq.files.sections import Section
from contextq.retrieval import embedding
from contextq.retrieval.chunking import ChunkerOptions, chunk_sections, chunk_set_key
from store.chunks_queries import (
    count_project_chunks,
    delete_unused_chunk_sets,
    file_chunk_set,
    find_chunk_set,
    link_file,
    release_file_chunks,
    store_chunk_set,
)
from store.db import read_session, session_scope
from store.project_tables import ChunkRow, ChunkSet, Project
from store.search import search_chunks
from store.tables import File, FileStatus
from tests.support.db import OwnerKey

BOTH_BACKENDS = pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
OPTIONS = ChunkerOptions(chunk_tokens=120, overlap_tokens=12)

FILLER_TEXT = (
    "quarterly revenue grew while operating costs stayed flat across the regional offices and "
    "the board approved the new hiring plan for engineering support and sales teams"
)
FILLER = FILLER_TEXT.split()


def manual_pages(pages: int, *, facts: dict[int, str], seed: int = 7) -> list[Section]:
    rng = random.Random(seed)
    out = []
    for page in range(1, pages + 1):
        body = " ".join(rng.choice(FILLER) for _ in range(120)) + "."
        if page in facts:
            body += " " + facts[page]
        out.append(Section(text=body, page=page))
    return out


@dataclass
class Indexed:
    file_id: str
    sha256: str
    chunk_set_id: str


def index_file(
    owner: OwnerKey,
    project_id: str | None,
    sections: list[Section],
    *,
    content: bytes,
    filename: str = "manual.pdf",
    status: str = FileStatus.READY,
) -> Indexed:
    """A file row with these bytes' sha256, chunked and indexed the way the worker will."""
    sha = hashlib.sha256(content).hexdigest()
    key = chunk_set_key(sha, OPTIONS)
    with read_session() as s:
        reusable = find_chunk_set(s, key=key)
    chunked = None if reusable else chunk_sections(sections, options=OPTIONS)
    vectors = None if chunked is None else embedding.chunk_vectors(chunked.chunks)
    with session_scope() as s:
        row = File(
            owner_id=owner.owner_id,
            filename=filename,
            size_bytes=len(content),
            sha256=sha,
            status=status,
            project_id=project_id,
        )
        s.add(row)
        s.flush()
        chunk_set = store_chunk_set(
            s,
            key=key,
            content_sha256=sha,
            chunker=OPTIONS.fingerprint(),
            chunked=chunked,
            vectors=vectors,
            embedder=embedding.EMBEDDER,
        )
        link_file(s, file_id=row.id, chunk_set_id=chunk_set.id)
        return Indexed(file_id=row.id, sha256=sha, chunk_set_id=chunk_set.id)


def new_project(owner: OwnerKey, name: str = "handbook") -> str:
    with session_scope() as s:
        project = Project(owner_id=owner.owner_id, name=name, instructions="Cite pages.")
        s.add(project)
        s.flush()
        return project.id


def search(
    owner: OwnerKey, project_id: str, query: str, limit: int = 5, mode: str = "hybrid"
) -> list:
    with read_session() as s:
        return search_chunks(
            s, owner_id=owner.owner_id, project_id=project_id, query=query, limit=limit, mode=mode
        )


def chunk_rows() -> int:
    with read_session() as s:
        return int(s.execute(select(func.count()).select_from(ChunkRow)).scalar_one())


FACTS = {
    40: "The torque wrench calibration interval for the Halvorsen press is 90 days.",
    12: "Badge readers in building C reject cards issued before March.",
    77: "Hydraulic fluid of grade ISO VG 46 is required for the Halvorsen press.",
}


@BOTH_BACKENDS
def test_the_page_with_the_answer_ranks_first(stack, owner) -> None:
    project = new_project(owner)
    index_file(owner, project, manual_pages(100, facts=FACTS), content=b"manual-v1")
    hits = search(owner, project, "how often must the torque wrench be calibrated?")
    assert hits, "nothing found"
    assert hits[0].page == 40 and "torque wrench" in hits[0].text
    assert hits[0].title == "manual.pdf" and hits[0].token_count > 0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].score > 0
    fluid = search(owner, project, "which hydraulic fluid does the Halvorsen press need", 3)
    assert fluid[0].page == 77


@BOTH_BACKENDS
def test_search_is_scoped_to_the_owner_the_project_and_ready_files(
    stack, make_owner: Callable[[str], OwnerKey]
) -> None:
    alice, bob = make_owner("alice"), make_owner("bob")
    alice_project, alice_other = new_project(alice), new_project(alice, "other")
    bob_project = new_project(bob)
    sections = manual_pages(20, facts={5: "The vault code is hidden under zephyrine tiles."})
    # the same bytes for both owners: one shared chunk set, reached through each one's file
    a = index_file(alice, alice_project, sections, content=b"shared")
    b = index_file(bob, bob_project, sections, content=b"shared")
    assert a.chunk_set_id == b.chunk_set_id
    other = manual_pages(5, facts={2: "Zephyrine glaze recipe."}, seed=3)
    index_file(alice, alice_other, other, content=b"other-project")
    index_file(alice, alice_project, other, content=b"still-processing", status="processing")

    for mode in ("hybrid", "bm25", "dense"):  # dense ranks every chunk of the scope
        alice_hits = search(alice, alice_project, "zephyrine", mode=mode)
        assert {h.file_id for h in alice_hits} == {a.file_id}
        assert {h.file_id for h in search(bob, bob_project, "zephyrine", mode=mode)} == {b.file_id}
        assert search(bob, alice_project, "zephyrine", mode=mode) == []  # another owner's
        assert search(alice, bob_project, "zephyrine", mode=mode) == []
    assert search(alice, alice_project, "zephyrine")[0].page == 5
    assert {h.page for h in search(alice, alice_other, "zephyrine glaze", mode="bm25")} == {2}
    assert search(alice, alice_other, "zephyrine glaze")[0].page == 2
    with read_session() as s:
        assert count_project_chunks(s, owner_id=alice.owner_id, project_id=alice_project) > 0
        assert count_project_chunks(s, owner_id=bob.owner_id, project_id=alice_project) == 0


@BOTH_BACKENDS
def test_an_empty_project_and_an_unknown_project_find_nothing(stack, owner) -> None:
    project = new_project(owner)
    assert search(owner, project, "anything at all") == []
    assert search(owner, "no-such-project", "anything") == []
    with read_session() as s:
        assert count_project_chunks(s, owner_id=owner.owner_id, project_id=project) == 0


HOSTILE = [
    "",
    "   ",
    '"',
    '""',
    '"unbalanced quote',
    "*",
    "torque*",
    "NEAR(",
    "NEAR(torque wrench, 2)",
    "-",
    "-torque",
    "torque -wrench",
    "AND",
    "torque AND",
    "OR OR NOT",
    "((torque)",
    ")",
    "col:torque",
    "text:torque",
    "^torque",
    "torque & wrench | !press <-> :*",
    "'; DROP TABLE chunks; --",
    "\x00torque\x00",
    "calibración del torque — ñandú ☃ 🎉 日本語",
    "e\u0301\u0301\u0301",
    "\u202etorque\u202c",
    "the of and",  # only function words
    "torque " * 1500,  # 10 000+ characters
    "x" * 10_000,
    "".join(chr(c) for c in range(32, 1200)),
]


@BOTH_BACKENDS
def test_hostile_queries_give_results_or_nothing_never_an_error(stack, owner) -> None:
    project = new_project(owner)
    index_file(owner, project, manual_pages(50, facts=FACTS), content=b"manual-hostile")
    for query in HOSTILE:
        hits = search(owner, project, query, limit=5)
        assert isinstance(hits, list) and len(hits) <= 5, query
    assert search(owner, project, "NEAR(torque wrench, 2)")[0].page == 40
    assert search(owner, project, "torque " * 1500)[0].page == 40
    assert search(owner, project, "-torque")[0].page == 40  # words, not operators


@pytest.mark.parametrize("stack", ["sqlite"], indirect=True)
def test_any_text_is_a_valid_query_on_sqlite(stack, owner) -> None:
    project = new_project(owner)
    index_file(owner, project, manual_pages(10, facts=FACTS), content=b"manual-fuzz")

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.text(max_size=300))
    def check(query: str) -> None:
        assert isinstance(search(owner, project, query), list)

    check()


@pytest.mark.postgres
@pytest.mark.parametrize("stack", ["postgres"], indirect=True)
def test_any_text_is_a_valid_query_on_postgres(stack, owner) -> None:
    project = new_project(owner)
    index_file(owner, project, manual_pages(10, facts=FACTS), content=b"manual-fuzz")

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.text(max_size=300))
    def check(query: str) -> None:
        assert isinstance(search(owner, project, query), list)

    check()


@BOTH_BACKENDS
def test_the_same_bytes_reuse_the_stored_chunks(stack, owner) -> None:
    project = new_project(owner)
    first = index_file(owner, project, manual_pages(45, facts=FACTS), content=b"same")
    rows = chunk_rows()
    # a second upload of the same bytes: no chunking (the key exists), the same set
    second = index_file(owner, project, [], content=b"same", filename="copy.pdf")
    assert second.chunk_set_id == first.chunk_set_id
    assert chunk_rows() == rows
    with read_session() as s:
        chunk_set = file_chunk_set(s, file_id=second.file_id)
        assert chunk_set is not None and chunk_set.chunk_count == rows
        assert chunk_set.complete and chunk_set.stopped_at is None
    hits = search(owner, project, "torque wrench calibration", limit=10)
    assert {h.file_id for h in hits if h.page == 40} == {first.file_id, second.file_id}
    # storing under an existing key returns the stored set, whatever is passed
    with session_scope() as s:
        again = store_chunk_set(
            s, key=chunk_set_key(first.sha256, OPTIONS), content_sha256=first.sha256,
            chunker=OPTIONS.fingerprint(), chunked=None,
        )  # fmt: skip
        assert again.id == first.chunk_set_id


@BOTH_BACKENDS
def test_deleting_files_removes_their_chunks_once_no_file_has_the_bytes(stack, owner) -> None:
    project = new_project(owner)
    sections = manual_pages(30, facts=FACTS)
    first = index_file(owner, project, sections, content=b"to-delete")
    second = index_file(owner, project, sections, content=b"to-delete", filename="copy.pdf")
    kept = index_file(owner, project, manual_pages(5, facts={}, seed=9), content=b"kept")
    before = chunk_rows()

    with session_scope() as s:  # the first copy goes: its twin keeps the chunks
        assert release_file_chunks(s, file_id=first.file_id, content_sha256=first.sha256) == 0
        s.execute(File.__table__.delete().where(File.id == first.file_id))  # type: ignore[attr-defined]
    assert chunk_rows() == before
    assert {h.file_id for h in search(owner, project, "badge readers", mode="bm25")} == {
        second.file_id
    }
    assert search(owner, project, "badge readers")[0].file_id == second.file_id

    with session_scope() as s:  # the last file with those bytes goes: so do the chunks
        deleted = release_file_chunks(s, file_id=second.file_id, content_sha256=second.sha256)
        s.execute(File.__table__.delete().where(File.id == second.file_id))  # type: ignore[attr-defined]
    assert deleted > 0 and chunk_rows() == before - deleted
    assert search(owner, project, "badge readers building", mode="bm25") == []
    assert {h.file_id for h in search(owner, project, "badge readers building")} == {kept.file_id}
    assert search(owner, project, "revenue")[0].file_id == kept.file_id
    assert_fulltext_index_consistent()


@BOTH_BACKENDS
def test_the_sweep_deletes_sets_no_file_needs(stack, owner) -> None:
    project = new_project(owner)
    gone = index_file(owner, project, manual_pages(5, facts={}), content=b"gone")
    live = index_file(owner, project, manual_pages(5, facts={}, seed=2), content=b"live")
    with session_scope() as s:  # a file deleted without release (a cascade): its set lingers
        s.execute(File.__table__.delete().where(File.id == gone.file_id))  # type: ignore[attr-defined]
    with session_scope() as s:  # a set of an older chunker configuration nobody links to
        old = ChunkSet(key=f"{live.sha256}:old", content_sha256=live.sha256, chunker="old")
        s.add(old)
    with session_scope() as s:
        assert delete_unused_chunk_sets(s, current_chunker=OPTIONS.fingerprint()) > 0
    with read_session() as s:
        remaining = set(s.execute(select(ChunkSet.id)).scalars())
    assert remaining == {live.chunk_set_id}
    assert_fulltext_index_consistent()


def assert_fulltext_index_consistent() -> None:
    with session_scope() as s:
        if s.get_bind().dialect.name == "sqlite":
            # FTS5 compares its index with the content table and raises on any mismatch
            s.execute(
                text("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
            )
        else:
            missing = s.execute(text("SELECT count(*) FROM chunks WHERE tsv IS NULL")).scalar_one()
            assert missing == 0


@BOTH_BACKENDS
def test_a_capped_file_says_where_indexing_stopped(stack, owner) -> None:
    project = new_project(owner)
    capped = ChunkerOptions(chunk_tokens=120, overlap_tokens=12, max_tokens=1500)
    sections = manual_pages(60, facts=FACTS)
    chunked = chunk_sections(sections, options=capped)
    sha = hashlib.sha256(b"capped").hexdigest()
    with session_scope() as s:
        row = File(owner_id=owner.owner_id, filename="big.pdf", size_bytes=6, sha256=sha,
                   status=FileStatus.READY, project_id=project)  # fmt: skip
        s.add(row)
        s.flush()
        chunk_set = store_chunk_set(s, key=chunk_set_key(sha, capped), content_sha256=sha,
                                    chunker=capped.fingerprint(), chunked=chunked)  # fmt: skip
        link_file(s, file_id=row.id, chunk_set_id=chunk_set.id)
        file_id = row.id
    with read_session() as s:
        stored = file_chunk_set(s, file_id=file_id)
    assert stored is not None and not stored.complete
    assert stored.token_count <= 1500 and stored.stopped_at == chunked.stopped_at
    assert stored.stopped_at is not None and stored.stopped_at["page"] < 40
    assert all(h.page < 40 for h in search(owner, project, "torque wrench calibration"))


@BOTH_BACKENDS
def test_candidates_need_a_distinctive_term_and_are_ranked_by_all(stack, owner) -> None:
    """Candidates need a distinctive term, but each is scored over all the terms: on SQLite
    the scores equal bm25 of the plain OR query over the same chunks (no term twice)."""
    project = new_project(owner)
    index_file(owner, project, manual_pages(120, facts=FACTS), content=b"manual-split")
    with session_scope() as s:
        if s.get_bind().dialect.name == "postgresql":
            s.execute(text("ANALYZE chunks"))  # the statistics that say which terms are common
    query = "torque wrench calibration revenue board"  # distinctive + common (filler) terms
    hits = search(owner, project, query, limit=5, mode="bm25")
    assert hits and hits[0].page == 40
    # only common words: ranked over all their matches
    assert len(search(owner, project, "quarterly revenue board", limit=5, mode="bm25")) == 5
    with read_session() as s:
        if s.get_bind().dialect.name != "sqlite":
            return
        plain = '"torque" OR "wrench" OR "calibration" OR "revenue" OR "board"'
        scores = dict(
            s.execute(
                text(
                    "SELECT rowid, -bm25(chunks_fts, 1.0, 0.5) FROM chunks_fts "
                    "WHERE chunks_fts MATCH :q"
                ),
                {"q": plain},
            ).all()
        )
    for hit in hits:
        assert hit.score == pytest.approx(scores[hit.chunk_id])
