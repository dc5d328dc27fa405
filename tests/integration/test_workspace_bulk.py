"""Many new workspace files at once (`service.workspaces.bulk.put_new_files`, docs/workspaces.md):
each path answers 200 with its bytes when the call returns, each is a File processed by
the same queue as uploads (a real Celery worker, Valkey, SQLite), a path already there is
left as it is, and a chunk over the quota leaves nothing behind."""

from __future__ import annotations

from typing import Any

import pytest

from contextq.errors import QuotaExceeded
from contextq.settings import get_settings
from service.workspaces.bulk import CHUNK, NewFile, flush_publishes, put_new_files
from tests.support.files import wait_file_done
from tests.support.workspaces import new_conversation, put_file, ws_url

pytestmark = pytest.mark.integration


def _files(n: int, prefix: str = "results") -> list[NewFile]:
    return [
        NewFile(f"{prefix}/r{i}.txt", f"result {i}: {'ok ' * (i % 40)}\n".encode())
        for i in range(n)
    ]


@pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_many_files_answer_at_once_and_are_processed_by_the_queue(
    stack: Any, worker: Any, owner: Any, app_client: Any
) -> None:
    cid = new_conversation(app_client)
    kept = put_file(app_client, cid, "results/r3.txt", b"written before\n")
    files = _files(CHUNK + 20)  # two transactions
    written = put_new_files(
        settings=get_settings(), owner_id=owner.owner_id, conversation_id=cid, files=files
    )
    assert len(written) == len(files) - 1  # r3 was there: left as it is
    for f in files:  # every path answers with its bytes as the call returns
        r = app_client.get(ws_url(cid, f.relative))
        assert r.status_code == 200
        assert r.content == (b"written before\n" if f.relative.endswith("/r3.txt") else f.data)
    listed = app_client.get(ws_url(cid), params={"prefix": "results/", "limit": 1000}).json()
    assert len(listed["data"]) == len(files)
    assert (
        next(e for e in listed["data"] if e["path"] == "results/r3.txt")["file_id"]
        == (kept["file_id"])
    )
    assert flush_publishes(30)
    for view in written[:: len(written) // 7]:  # processed by the queue like an upload
        done = wait_file_done(app_client, view.file_id)
        assert done["status"] == "ready" and done["conversation_id"] == cid


def test_a_chunk_over_the_quota_leaves_nothing(
    make_stack: Any, owner: Any, app_client: Any
) -> None:
    make_stack(MAX_FILES_PER_OWNER=5)
    cid = new_conversation(app_client)
    with pytest.raises(QuotaExceeded):
        put_new_files(
            settings=get_settings(), owner_id=owner.owner_id, conversation_id=cid, files=_files(8)
        )
    assert app_client.get(ws_url(cid)).json()["data"] == []
    root = get_settings().workspaces_dir / owner.owner_id / cid
    assert not root.exists() or not any(p.is_file() for p in root.rglob("*"))  # no temp files
    written = put_new_files(
        settings=get_settings(), owner_id=owner.owner_id, conversation_id=cid, files=_files(5)
    )
    assert len(written) == 5
