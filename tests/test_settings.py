"""Settings derived from others: blob durability follows the database's."""

from __future__ import annotations

from pathlib import Path

from contextq.settings import Settings
from store.blobs import get_blob_store
from store.blobstore.filesystem import FilesystemBlobStore as BlobStore


def test_blob_fsync_follows_the_database_unless_set(tmp_path: Path) -> None:
    sqlite = Settings(DATA_DIR=tmp_path)
    postgres = Settings(DATA_DIR=tmp_path, DATABASE_URL="postgresql://u:p@localhost/db")
    assert sqlite.blob_fsync is False  # SQLite WAL with synchronous=NORMAL does not fsync
    assert postgres.blob_fsync is True
    assert Settings(DATA_DIR=tmp_path, BLOB_FSYNC=True).blob_fsync is True
    assert (
        Settings(DATA_DIR=tmp_path, DATABASE_URL="postgresql://x/y", BLOB_FSYNC=False).blob_fsync
        is False
    )
    assert get_blob_store(postgres).fsync is True
    assert get_blob_store(sqlite).fsync is False


def test_blobs_are_content_addressed_with_or_without_fsync(tmp_path: Path) -> None:
    for fsync in (True, False):
        store = BlobStore(tmp_path / str(fsync), fsync=fsync)
        sha = store.put_bytes(b"same bytes")
        assert store.path(sha).read_bytes() == b"same bytes"
        assert sha == store.put_bytes(b"same bytes")
        assert not list((tmp_path / str(fsync) / "tmp").glob("*"))  # no temp file left
