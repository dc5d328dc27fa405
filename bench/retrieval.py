"""Retrieval benchmark (docs/retrieval.md, issue 9): the database's own full-text search against
bm25s.

    PYTHONPATH=$PWD .venv/bin/python -m bench.retrieval            # SQLite (+ PostgreSQL)
    PYTHONPATH=$PWD .venv/bin/python -m bench.retrieval --quick    # smaller, fewer repeats

1. Search quality and speed. A generated corpus of 10 000 chunks with a known answer chunk
   for each of 200 queries (`bench/retrieval_corpus.py`: products, incidents, contracts,
   code, support articles; queries paraphrase or name rare terms). It is stored through
   `store.chunks_queries` (100 files of 100 chunks in one owner's project, plus another
   owner's project of the same size as noise) and searched through
   `store.search.search_chunks` on a real SQLite file, and on a real PostgreSQL when its
   binaries exist. Baseline in the same run: `bm25s` over the same 10 000 texts (with
   English stopwords, with and without the Snowball stemmer; the better one is the bar).
   Figures: recall@5, MRR@10, p50/p99 latency per search (a fresh read session each, as
   a request has). Targets: p99 ≤ 10 ms; recall@5 ≥ bm25s's.
2. Indexing cost. A 300-page PDF processed by `contextq.files.pipeline.process_file`
   (warm process, no conversion cache: what a worker does on a new upload), then its
   sections (`contextq.files.fulltext.iter_sections` when this branch has it, else page
   texts from pypdfium2, as the output says), chunking and the insert of its chunk set.
   Target: chunk + insert ≤ 25% of processing.
3. Indexing cost through the worker path: `service.files.process_file` (what the
   `process_file` task runs) on a new 300-page PDF uploaded into a project, which indexes
   it before writing it ready; indexing time (`Outcome.index_s`) as a share of the rest.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
# run as a script, Python puts bench/ first on sys.path, where bench/queue.py would shadow
# the standard library's `queue`; use the project root instead
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from bench.retrieval_corpus import Doc, Query, build  # noqa: E402
from bench.retrieval_paraphrase import build_paraphrase  # noqa: E402
from contextq import tokens  # noqa: E402
from contextq.retrieval import embedding  # noqa: E402
from contextq.retrieval.chunking import (  # noqa: E402
    ChunkedText,
    ChunkerOptions,
    chunk_sections,
    chunk_set_key,
)
from contextq.retrieval.types import Chunk  # noqa: E402

CHUNKS_PER_FILE = 100
K = 10


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --------------------------------------------------------------- the database
@contextmanager
def database(database_url: str | None) -> Iterator[Path]:
    """A migrated database (SQLite file in a temp DATA_DIR, or the given URL), active."""
    from contextq.settings import get_settings
    from store import db

    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp:
        os.environ["DATA_DIR"] = tmp
        if database_url:
            os.environ["DATABASE_URL"] = database_url
        else:
            os.environ.pop("DATABASE_URL", None)
        get_settings.cache_clear()
        db.reset_engine()
        db.migrate()
        try:
            yield Path(tmp)
        finally:
            db.reset_engine()


Location = dict[tuple[str, int], int]  # (file id, chunk index) -> doc index


def load_corpora(corpora: dict[str, Sequence[Doc]]) -> dict[str, tuple[str, str, Location]]:
    """Each owner's project holding its docs as files of CHUNKS_PER_FILE chunks, the owners'
    files stored in turn (as uploads from several tenants arrive). Per owner name: the owner
    id, project id and (file id, chunk index) -> doc index."""
    from store.db import session_scope
    from store.project_tables import Project
    from store.tables import Owner

    loaded: dict[str, tuple[str, str, Location]] = {}
    with session_scope() as s:
        for name in corpora:
            owner = Owner(name=name)
            s.add(owner)
            s.flush()
            project = Project(owner_id=owner.id, name=f"{name} corpus")
            s.add(project)
            s.flush()
            loaded[name] = (owner.id, project.id, {})
    longest = max(len(docs) for docs in corpora.values())
    for start in range(0, longest, CHUNKS_PER_FILE):
        for name, docs in corpora.items():
            if start < len(docs):
                owner_id, project_id, where = loaded[name]
                add_file(owner_id, project_id, f"{name}-{start}", docs, start, where)
    return loaded


def add_file(
    owner_id: str, project_id: str, name: str, docs: Sequence[Doc], start: int, where: Location
) -> None:
    """One ready file of the project whose chunks are docs[start : start + CHUNKS_PER_FILE]."""
    from store.chunks_queries import link_file, store_chunk_set
    from store.db import session_scope
    from store.tables import File

    options = ChunkerOptions()
    group = docs[start : start + CHUNKS_PER_FILE]
    sha = hashlib.sha256(name.encode()).hexdigest()
    chunks = tuple(
        Chunk(index=i, text=d.text, token_count=tokens.count_tokens(d.text))
        for i, d in enumerate(group)
    )
    total = sum(c.token_count for c in chunks)
    chunked = ChunkedText(chunks=chunks, token_count=total, complete=True, stopped_at=None)
    vectors = embedding.chunk_vectors(chunks)
    with session_scope() as s:
        row = File(owner_id=owner_id, filename=f"{group[0].kind}-{start}.md", size_bytes=1,
                   sha256=sha, status="ready", project_id=project_id)  # fmt: skip
        s.add(row)
        s.flush()
        chunk_set = store_chunk_set(s, key=chunk_set_key(sha, options), content_sha256=sha,
                                    chunker=options.fingerprint(), chunked=chunked,
                                    vectors=vectors, embedder=embedding.EMBEDDER)  # fmt: skip
        assert chunk_set.id is not None
        link_file(s, file_id=row.id, chunk_set_id=chunk_set.id)
        where.update({(row.id, i): start + i for i in range(len(group))})


def analyze() -> None:
    """PostgreSQL: refresh the statistics, as autovacuum does after a load (search reads
    them to tell common terms). SQLite: nothing (the service never runs ANALYZE there)."""
    from sqlalchemy import text

    from store.db import session_scope

    with session_scope() as s:
        if s.get_bind().dialect.name == "postgresql":
            s.execute(text("ANALYZE"))


def measure_store(
    docs: Sequence[Doc], noise: Sequence[Doc], query_sets: dict[str, Sequence[Query]],
    repeats: int, *, grid: bool = False,
) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Per "mode/query set": recall@5, MRR@10, p50/p99 of `search_chunks` in that mode."""
    from store.db import read_session
    from store.search import MODES, VECTORS, search_chunks

    started = time.perf_counter()
    loaded = load_corpora({"bench-owner": docs, "noise-owner": noise})
    owner_id, project_id, where = loaded["bench-owner"]
    load_s = time.perf_counter() - started
    analyze()
    VECTORS.clear()
    if grid:
        from bench.retrieval_fusion import fusion_grid

        fusion_grid(owner_id, project_id, where, query_sets)
    stored = f"{(len(docs) + len(noise)) // CHUNKS_PER_FILE} files, {len(docs) + len(noise)} chunks"
    results: dict[str, dict[str, Any]] = {}
    for mode in MODES:

        def run(query: Query, mode: str = mode) -> tuple[list[int], float]:
            t0 = time.perf_counter()
            with read_session() as s:
                hits = search_chunks(s, owner_id=owner_id, project_id=project_id,
                                     query=query.text, limit=K, mode=mode)  # fmt: skip
            elapsed = time.perf_counter() - t0
            return [where[(h.file_id, h.index)] for h in hits], elapsed

        for name, queries in query_sets.items():
            for q in queries[:20]:
                run(q)  # warm the caches and the connection pool
            ranked = [run(q)[0] for q in queries]
            times = [run(q)[1] * 1000 for _ in range(repeats) for q in queries]
            results[f"{mode}/{name}"] = {**quality(ranked, queries), **latency(times),
                                         "load_s": load_s, "stored": stored}  # fmt: skip
    return results


# --------------------------------------------------------------- the baseline
def measure_bm25s(
    docs: Sequence[Doc], queries: Sequence[Query], repeats: int, *, stem: bool
) -> dict[str, Any]:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english") if stem else None
    corpus = bm25s.tokenize([d.text for d in docs], stopwords="en", stemmer=stemmer,
                            show_progress=False)  # fmt: skip
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)

    def run(query: Query) -> tuple[list[int], float]:
        t0 = time.perf_counter()
        q = bm25s.tokenize([query.text], stopwords="en", stemmer=stemmer, show_progress=False)
        if not q.vocab:
            return [], time.perf_counter() - t0
        results, _ = retriever.retrieve(q, k=K, show_progress=False, n_threads=1)
        return [int(i) for i in results[0]], time.perf_counter() - t0

    ranked = [run(q)[0] for q in queries]
    times = [run(q)[1] * 1000 for _ in range(repeats) for q in queries]
    return {**quality(ranked, queries), **latency(times)}


def quality(ranked: list[list[int]], queries: Sequence[Query]) -> dict[str, float]:
    pairs = zip(ranked, queries, strict=True)
    ranks = [r.index(q.answer) + 1 if q.answer in r else None for r, q in pairs]
    return {
        "recall@5": sum(1 for r in ranks if r is not None and r <= 5) / len(queries),
        "mrr@10": sum(1 / r for r in ranks if r is not None) / len(queries),
    }


def latency(times_ms: list[float]) -> dict[str, float]:
    return {"p50_ms": pct(times_ms, 0.5), "p99_ms": pct(times_ms, 0.99), "n": len(times_ms)}


# --------------------------------------------------------------- indexing cost
def make_pdf(path: Path, pages: int, seed: int = 7) -> None:
    from fpdf import FPDF

    docs, _ = build(pages * 4, 0, seed=seed)
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for page in range(pages):
        pdf.add_page()
        for doc in docs[page * 4 : page * 4 + 4]:
            pdf.multi_cell(0, 5, doc.text.encode("latin-1", "replace").decode("latin-1"))
            pdf.ln(3)
    path.write_bytes(bytes(pdf.output()))


def pdf_sections(path: Path, settings: Any) -> tuple[list[Any], str]:
    try:
        from contextq.files.fulltext import iter_sections  # type: ignore[import-not-found]
    except ImportError:
        return _pdfium_pages(path), "page texts from pypdfium2 (no contextq.files.fulltext here)"
    return list(iter_sections(path, path.name, settings=settings)), "fulltext.iter_sections"


def _pdfium_pages(path: Path) -> list[Any]:
    import pypdfium2

    from contextq.files.sections import Section

    pages = []
    doc = pypdfium2.PdfDocument(str(path))
    try:
        for i in range(len(doc)):
            textpage = doc[i].get_textpage()
            text = textpage.get_text_range().replace("\r\n", "\n")
            textpage.close()
            pages.append(Section(text=text, page=i + 1))
    finally:
        doc.close()
    return pages


def measure_indexing(tmp: Path, pages: int, runs: int) -> dict[str, Any]:
    """Medians over `runs` rounds, each timing process, sections, chunk and insert one after
    the other, so that a load change on the machine hits all of them alike."""
    from contextq.files.pipeline import process_file
    from contextq.settings import get_settings
    from store.db import session_scope
    from store.tables import Owner

    settings = get_settings()
    pdf = tmp / "manual-300.pdf"
    make_pdf(pdf, pages)
    process_file(pdf, pdf.name, settings=settings)  # warm: imports, models, tokenizer
    options = ChunkerOptions.from_settings(settings)
    with session_scope() as s:
        owner = Owner(name="indexing-bench")
        s.add(owner)
        s.flush()
        owner_id = owner.id
    rounds: list[dict[str, float]] = []
    for n in range(runs):
        process_s, result = timed(process_file, pdf, pdf.name, settings=settings)
        sections_s, (sections, source) = timed(pdf_sections, pdf, settings)
        chunk_s, chunked = timed(chunk_sections, sections, options=options)
        embed_s, vectors = timed(embedding.chunk_vectors, chunked.chunks)
        insert_s, _ = timed(insert_chunks, owner_id, f"pdf-{n}", chunked, options, vectors)
        share = (chunk_s + embed_s + insert_s) / process_s
        rounds.append({"process_s": process_s, "sections_s": sections_s, "chunk_s": chunk_s,
                       "embed_s": embed_s, "insert_s": insert_s, "share": share})  # fmt: skip
    medians = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    return {"pages": pages, "tokens": result.token_count, "chunks": len(chunked.chunks),
            "sections_source": source, **medians}  # fmt: skip


def measure_worker_path(tmp: Path, pages: int, runs: int) -> dict[str, Any]:
    """The worker's use case, `service.files.process_file`, on a PDF uploaded into a
    project: processing, then indexing (whole text → chunks → store) before the row is
    written ready, exactly as a worker runs it. A new PDF each round, so neither the
    conversion cache nor the chunk sets are reused. Medians of the rounds' shares."""
    from sqlalchemy import text

    from contextq.settings import get_settings
    from service.files import process_file
    from store.blobs import get_blob_store
    from store.db import session_scope
    from store.project_tables import Project
    from store.tables import File, Owner

    settings = get_settings()
    blobs = get_blob_store(settings)
    with session_scope() as s:
        owner = Owner(name="worker-path-bench")
        s.add(owner)
        s.flush()
        project = Project(owner_id=owner.id, name="manuals")
        s.add(project)
        s.flush()
        owner_id, project_id = owner.id, project.id

    def upload(seed: int) -> str:
        pdf = tmp / f"worker-{seed}.pdf"
        make_pdf(pdf, pages, seed=seed)
        data = pdf.read_bytes()
        row = File(owner_id=owner_id, filename=pdf.name, size_bytes=len(data),
                   sha256=blobs.put_bytes(data), project_id=project_id)  # fmt: skip
        with session_scope() as s:
            s.add(row)
        return row.id

    process_file(settings=settings, file_id=upload(1000))  # warm: imports, tokenizer, splitter
    rounds = []
    for n in range(runs):
        file_id = upload(1001 + n)
        total_s, outcome = timed(process_file, settings=settings, file_id=file_id)
        assert outcome.status == "ready" and outcome.index_s is not None, outcome
        processing_s = total_s - outcome.index_s
        rounds.append({"processing_s": processing_s, "index_s": outcome.index_s,
                       "share": outcome.index_s / processing_s})  # fmt: skip
    with session_scope(write=False) as s:
        index = (s.get(File, file_id).meta or {})["index"]  # type: ignore[union-attr]
        stored = s.execute(text(_STORED_SQL), {"file_id": file_id}).one()
    medians = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    return {"pages": pages, "chunks": index["chunks"], "runs": runs, **medians,
            "text_bytes": stored.text_bytes, "vector_bytes": stored.vector_bytes,
            "passages": stored.vector_bytes // embedding.DIM}  # fmt: skip


# what one file's chunk set stores: its chunks' text and their passage vectors (int8 rows)
_STORED_SQL = """SELECT coalesce(sum(length(c.text)), 0) AS text_bytes,
    coalesce(sum(length(c.embedding)), 0) AS vector_bytes
    FROM chunks c JOIN file_chunk_sets l ON l.chunk_set_id = c.chunk_set_id
    WHERE l.file_id = :file_id"""


def print_worker_path(name: str, r: dict[str, Any]) -> None:
    verdict = "met" if r["share"] <= 0.25 else "MISSED"
    print(f"  {name}: {r['pages']}-page PDF into a project, service.files.process_file "
          f"({r['chunks']} chunks, medians of {r['runs']} rounds)")  # fmt: skip
    print(f"    processing {r['processing_s'] * 1000:7.1f} ms, indexing "
          f"{r['index_s'] * 1000:7.1f} ms = {r['share']:.1%} of processing "
          f"(target <= 25%: {verdict})")  # fmt: skip
    print(f"    stored: text {r['text_bytes'] / 1e6:.2f} MB (characters), passage vectors "
          f"{r['vector_bytes'] / 1e6:.2f} MB ({r['passages']:,} passages x {embedding.DIM} "
          f"bytes)")  # fmt: skip


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - t0, result


def insert_chunks(
    owner_id: str, name: str, chunked: ChunkedText, options: ChunkerOptions, vectors: Any
) -> None:
    """What the worker's indexing step writes: the file's chunk set and its link."""
    from store.chunks_queries import link_file, store_chunk_set
    from store.db import session_scope
    from store.tables import File

    sha = hashlib.sha256(name.encode()).hexdigest()
    with session_scope() as s:
        row = File(owner_id=owner_id, filename=name, size_bytes=1, sha256=sha, status="ready")
        s.add(row)
        s.flush()
        chunk_set = store_chunk_set(s, key=chunk_set_key(sha, options), content_sha256=sha,
                                    chunker=options.fingerprint(), chunked=chunked,
                                    vectors=vectors, embedder=embedding.EMBEDDER)  # fmt: skip
        assert chunk_set.id is not None
        link_file(s, file_id=row.id, chunk_set_id=chunk_set.id)


# --------------------------------------------------------------- report
def print_search(name: str, r: dict[str, Any]) -> None:
    print(f"  {name:<34} recall@5 {r['recall@5']:.3f}  MRR@10 {r['mrr@10']:.3f}  "
          f"p50 {r['p50_ms']:6.2f} ms  p99 {r['p99_ms']:6.2f} ms  (n={r['n']})")  # fmt: skip
    if "load_s" in r:
        print(f"    (stored {r['stored']} in {r['load_s']:.1f} s)")


def print_indexing(name: str, r: dict[str, Any]) -> None:
    share = r["share"]  # the median of the rounds' shares
    print(f"  {name}: {r['pages']} pages, {r['tokens']:,} tokens -> {r['chunks']} chunks")
    print(f"    process_file {r['process_s'] * 1000:7.1f} ms (medians of the rounds)")
    print(f"    sections     {r['sections_s'] * 1000:7.1f} ms  ({r['sections_source']})")
    print(f"    chunk        {r['chunk_s'] * 1000:7.1f} ms")
    print(f"    embed        {r['embed_s'] * 1000:7.1f} ms")
    print(f"    insert       {r['insert_s'] * 1000:7.1f} ms")
    with_sections = share + r["sections_s"] / r["process_s"]
    print(f"    chunk + embed + insert = {share:.1%} of processing (target <= 25%); "
          f"with sections {with_sections:.1%}")  # fmt: skip


def corpus(n_chunks: int) -> tuple[list[Doc], list[Doc], dict[str, list[Query]], int]:
    """(docs, another owner's noise, query sets, paraphrase pairs dropped by the check): the
    generated chunks with the paraphrase set's answer chunks after them."""
    docs, lexical = build(n_chunks, 200)
    noise, _ = build(n_chunks, 0, seed=99)
    para = build_paraphrase()
    first = len(docs)
    docs = docs + [Doc("paraphrase", text) for text in para.chunks]
    paraphrase = [Query(q, first + i) for i, q in enumerate(para.questions)]
    return docs, noise, {"lexical": lexical, "paraphrase": paraphrase}, len(para.dropped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 000 chunks, fewer repeats")
    parser.add_argument("--chunks", type=int, default=4_000, help="generated chunks (4 000)")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--fusion-grid", action="store_true", help="RRF k and weights (SQLite)")
    parser.add_argument("--part", choices=["all", "search", "indexing"], default="all",
                        help="search only, indexing only, or both (default)")  # fmt: skip
    args = parser.parse_args()
    n_chunks, repeats, runs = (2_000, 2, 3) if args.quick else (args.chunks, 5, 5)
    print_load("at start")
    docs, noise, query_sets, dropped = corpus(n_chunks)
    sizes = ", ".join(f"{len(q)} {name}" for name, q in query_sets.items())
    print(f"corpus: {len(docs)} chunks (+{len(noise)} of another owner); queries: {sizes} "
          f"({dropped} paraphrase pairs dropped: they share a content word)")  # fmt: skip
    search, indexing = args.part in ("all", "search"), args.part in ("all", "indexing")
    rows: dict[str, dict[str, Any]] = {}
    for name, queries in query_sets.items() if search else ():
        plain = measure_bm25s(docs, queries, repeats, stem=False)
        stemmed = measure_bm25s(docs, queries, repeats, stem=True)
        rows[f"bm25s/{name}"] = max(plain, stemmed, key=lambda r: r["recall@5"])
    results: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {}
    with database(None) as tmp:
        results["SQLite"] = measure_database(docs, noise, query_sets, repeats, runs, args, tmp)
    pg = None if args.no_postgres else postgres_run(docs, noise, query_sets, repeats, runs, args)
    if pg is not None:
        results["PostgreSQL"] = pg
    for db, (searched, _, _) in results.items():
        rows.update({f"{db} {k}": v for k, v in searched.items()})
    if search:
        print_table(rows, list(query_sets))
        print_verdicts(rows, pg is not None)
    if indexing:
        print("\nindexing cost, by part")
        for db, (_, by_part, _) in results.items():
            print_indexing(db, by_part)
        print("\nindexing cost through the worker path")
        for db, (_, _, worker_path) in results.items():
            print_worker_path(db, worker_path)
    print_load("at the end")


def print_load(when: str) -> None:
    one, five, fifteen = os.getloadavg()
    print(f"load average {when}: {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cores; "
          f"niceness {os.nice(0)})")  # fmt: skip


def measure_database(
    docs: Sequence[Doc], noise: Sequence[Doc], query_sets: dict[str, Sequence[Query]],
    repeats: int, runs: int, args: argparse.Namespace, tmp: Path,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:  # fmt: skip
    """(search figures, indexing by part, indexing through the worker path) on the active
    database, each empty when `--part` leaves it out."""
    searched: dict[str, Any] = {}
    if args.part in ("all", "search"):
        grid = args.fusion_grid and "DATABASE_URL" not in os.environ  # the grid: SQLite only
        searched = measure_store(docs, noise, query_sets, repeats, grid=grid)
    if args.part not in ("all", "indexing"):
        return searched, {}, {}
    pages = 30 if args.quick else 300
    return searched, measure_indexing(tmp, pages, runs), measure_worker_path(tmp, pages, runs)


ENGINE_NAMES = {"bm25": "bm25 (FTS5)", "dense": "dense", "hybrid": "hybrid"}


def print_table(rows: dict[str, dict[str, Any]], sets: list[str]) -> None:
    print("\nsearch, top 10 (recall@5, MRR@10 against the known answer; latency per search)")
    print(f"  {'method':<30}" + "".join(f"{s + ' R@5':>16}{'MRR':>7}" for s in sets)
          + f"{'p50 ms':>9}{'p99 ms':>9}")  # fmt: skip
    methods = dict.fromkeys(k.rsplit("/", 1)[0] for k in rows)
    for method in methods:
        label = method
        if method.startswith("PostgreSQL bm25"):
            label = "PostgreSQL bm25 (tsvector)"
        elif method.startswith("SQLite bm25"):
            label = "SQLite bm25 (FTS5)"
        line = f"  {label:<30}"
        times: list[float] = []
        for s in sets:
            r = rows[f"{method}/{s}"]
            line += f"{r['recall@5']:>16.3f}{r['mrr@10']:>7.3f}"
            times.append(r["p99_ms"])
        p50 = max(rows[f"{method}/{s}"]["p50_ms"] for s in sets)
        print(line + f"{p50:>9.2f}{max(times):>9.2f}")


def print_verdicts(rows: dict[str, dict[str, Any]], postgres: bool) -> None:
    print("\ntargets (p50/p99: the slower of the two query sets)")
    for db in ["SQLite", "PostgreSQL"] if postgres else ["SQLite"]:
        lexical = rows[f"{db} hybrid/lexical"]["recall@5"]
        bar = rows["bm25s/lexical"]["recall@5"]
        para = rows[f"{db} hybrid/paraphrase"]["recall@5"]
        para_bar = rows["bm25s/paraphrase"]["recall@5"]
        p99 = max(rows[f"{db} {m}/{s}"]["p99_ms"] for m in ENGINE_NAMES for s in
                  ("lexical", "paraphrase"))  # fmt: skip
        print(f"  {db}: lexical hybrid {lexical:.3f} >= bm25s {bar:.3f}: "
              f"{_met(lexical >= bar)}; paraphrase hybrid {para:.3f} >= 1.5 x bm25s "
              f"{para_bar:.3f}: {_met(para >= 1.5 * para_bar)}; "
              f"p99 {p99:.2f} ms <= 10: {_met(p99 <= 10)}")  # fmt: skip


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def postgres_run(
    docs: Sequence[Doc], noise: Sequence[Doc], query_sets: dict[str, Sequence[Query]],
    repeats: int, runs: int, args: argparse.Namespace,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]] | None:  # fmt: skip
    from tests.support.postgres import PostgresServer, available

    if not available():
        print("  (no PostgreSQL binaries: PostgreSQL skipped)")
        return None
    with PostgresServer() as server, database(server.create_database("bench_retrieval")) as tmp:
        return measure_database(docs, noise, query_sets, repeats, runs, args, tmp)


if __name__ == "__main__":
    main()
