"""The first context read after a bulk import (docs/workspaces.md, issue 17 item 3): a tool-heavy
history posted in one batch, past its threshold, is cleared at once by the first read,
which writes every result it clears before answering (one bulk workspace put): each
stub's path answers 200 with the whole result as the answer returns, each is a File
processed by the same queue (a real Celery worker), and the next read writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from service.history import context_tool_results
from service.workspaces.bulk import flush_publishes
from tests.api.test_context_tool_results import PATH, STUB, _context, _tool_texts, _turn
from tests.support.files import wait_file_done

pytestmark = pytest.mark.integration


@pytest.fixture
def small_window(make_stack: Any) -> None:
    make_stack(MAX_CONTEXT_TOKENS=16_000)


def test_the_first_read_after_an_import_writes_every_stub_before_answering(
    small_window: None, worker: Any, app_client: Any
) -> None:
    cid = app_client.post("/v1/conversations", json={"model": "gpt-4o"}).json()["id"]
    history = [m for n in range(1, 41) for m in _turn(n)]
    r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": history})
    assert r.status_code == 201, r.text
    context_tool_results.WRITTEN.clear()  # what this process remembers must not help
    answer = _context(app_client, cid)
    stubs = [t for t in _tool_texts(answer) if t.startswith(STUB)]
    # cleared at once, by the first read (the move also cuts to the trim target: about 9 stay)
    assert len(stubs) == len(answer["cleared_tool_result_ids"]) > 5
    page = app_client.get(f"/v1/conversations/{cid}/messages", params={"limit": 1000}).json()
    messages = {m["id"]: m for m in page["data"]}
    entries = []
    for stub, message_id in zip(stubs, answer["cleared_tool_result_ids"], strict=True):
        found = PATH.search(stub)
        assert found is not None and message_id in found.group(1)
        raw = app_client.get(f"/v1/conversations/{cid}/workspace/{found.group(1)}")
        assert raw.status_code == 200 and raw.text == messages[message_id]["content"]
        entries.append(found.group(1))
    listed = app_client.get(
        f"/v1/conversations/{cid}/workspace", params={"prefix": "tool-results/", "limit": 1000}
    ).json()["data"]
    assert sorted(e["path"] for e in listed) == sorted(entries)  # one entry each, no more
    assert flush_publishes(30)
    for entry in listed[::5]:  # each a File, processed by the queue like an upload
        assert wait_file_done(app_client, entry["file_id"])["status"] == "ready"
    again = _context(app_client, cid)  # the line stays put: nothing more to write
    assert again["cleared_tool_result_ids"] == answer["cleared_tool_result_ids"]
    listed_again = app_client.get(
        f"/v1/conversations/{cid}/workspace", params={"prefix": "tool-results/", "limit": 1000}
    ).json()["data"]
    assert len(listed_again) == len(listed)
