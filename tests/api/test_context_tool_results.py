"""Large and old tool results in the context (docs/workspaces.md#large-tool-results) through the
API: a 50 000-row CSV tool result stands as head and tail rows plus its workspace path (its preview
made in memory before the worker processed its File, and the File's own afterwards: the same
text); a 200-turn tool-heavy session on a small window clears old results before any
message is removed, pairs whole, every stub naming a readable path. Every answer passes
`context_checks.check` (SDK types, an independent recount)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from contextq.settings import get_settings
from service.history import context_tool_results
from tests.api.context_checks import check

STUB = "[Old tool result cleared ("
PATH = re.compile(r"/workspace/(tool-results/[\w-]+\.\w+)")


def _context(client: Any, cid: str, **params: Any) -> dict[str, Any]:
    r = client.get(f"/v1/conversations/{cid}/context", params=params)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    check(answer)
    return answer


def _call(call_id: str, name: str = "sql") -> dict[str, Any]:
    function = {"name": name, "arguments": "{}"}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _csv(rows: int) -> str:
    return "id,value\n" + "".join(f"{i},{i * 3}\n" for i in range(rows))


def _tool_texts(answer: dict[str, Any]) -> list[str]:
    if answer["format"] == "openai":
        return [m["content"] for m in answer["messages"] if m["role"] == "tool"]
    blocks = [b for m in answer["messages"] if isinstance(m["content"], list) for b in m["content"]]
    results = [b for b in blocks if b["type"] == "tool_result"]
    out = []
    for b in results:
        content = b["content"]
        out.append(content if isinstance(content, str) else content[0]["text"])
    return out


def test_a_50000_row_csv_tool_result_is_previewed_with_its_path(app_client: Any) -> None:
    from service.files.processing import process_file

    cid = app_client.post("/v1/conversations", json={"model": "gpt-4o"}).json()["id"]
    content = _csv(50_000)
    r = app_client.post(
        f"/v1/conversations/{cid}/messages",
        json={"messages": [
            {"role": "user", "content": "export the table"},
            _call("call_1"),
            {"role": "tool", "tool_call_id": "call_1", "content": content},
        ]},
    )  # fmt: skip
    assert r.status_code == 201, r.text
    stored = r.json()["data"][2]
    path = f"tool-results/{stored['id']}.csv"
    answers = {fmt: _context(app_client, cid, format=fmt) for fmt in ("openai", "anthropic")}
    for answer in answers.values():
        (text,) = _tool_texts(answer)
        assert "| 0 | 0 |" in text and "| 49999 | 149997 |" in text  # head and tail rows
        assert "| 25000 | 75000 |" not in text
        assert f"The full result is at /workspace/{path}." in text
        assert f"{len(content.encode()):,} bytes" in text
        assert answer["token_count"] < stored["token_count"] // 20  # the preview's tokens
    # the worker's processing of the workspace File makes the same preview
    entry = app_client.get(f"/v1/conversations/{cid}/workspace", params={"prefix": path}).json()
    file_id = entry["data"][0]["file_id"]
    process_file(settings=get_settings(), file_id=file_id)
    context_tool_results.VIEWS.clear()
    again = _context(app_client, cid)
    assert again["messages"] == answers["openai"]["messages"]
    portion = app_client.get(
        f"/v1/conversations/{cid}/workspace/{path}",
        params={"view": "processed", "offset": 25_000, "limit": 20},
    ).json()
    lines = portion["text"].splitlines()
    assert lines[0] == "| id | value |"
    assert lines[2:] == [f"| {i} | {i * 3} |" for i in range(25_000, 25_020)]


def _turn(n: int) -> list[dict[str, Any]]:
    words = " ".join(f"row{n}-{k} status=ok latency={k * 7 % 300}ms" for k in range(60))
    return [
        {"role": "user", "content": f"U{n} check the service health"},
        _call(f"c{n}", "health"),
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"health report {n}: {words}"},
        {"role": "assistant", "content": f"A{n} all {n} checks passed."},
    ]


@pytest.fixture
def small_window(make_stack: Any) -> None:
    make_stack(MAX_CONTEXT_TOKENS=16_000)


def test_a_200_turn_tool_heavy_session_clears_before_it_drops(
    small_window: None, app_client: Any
) -> None:
    cid = app_client.post("/v1/conversations", json={"model": "gpt-4o"}).json()["id"]
    first_cleared = first_removed = None
    answer: dict[str, Any] = {}
    for n in range(1, 201):
        r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": _turn(n)})
        assert r.status_code == 201, r.text
        answer = _context(app_client, cid)
        if answer["cleared_tool_result_ids"] and first_cleared is None:
            first_cleared = n
            assert answer["removed_message_ids"] == []  # cleared before anything is dropped
        if answer["removed_message_ids"] and first_removed is None:
            first_removed = n
    assert first_cleared is not None and first_removed is not None
    assert first_cleared < first_removed
    assert answer["filtered"] and answer["token_count"] <= answer["budget_tokens"]
    texts = _tool_texts(answer)
    whole = [t for t in texts if not t.startswith(STUB)]
    assert len(whole) >= 5  # the newest keep_tool_results, and those since the line moved
    assert texts[-len(whole) :] == whole  # whole results are the newest, stubs before them
    stubs = [t for t in texts if t.startswith(STUB)]
    assert len(stubs) == len(answer["cleared_tool_result_ids"]) > 0
    # every stub names a readable path holding the whole result, as the answer returns
    stored = {}
    cursor = None
    while True:
        page = app_client.get(
            f"/v1/conversations/{cid}/messages", params={"limit": 1000, "cursor": cursor}
        ).json()
        stored.update({m["id"]: m for m in page["data"]})
        cursor = page.get("next_cursor")
        if not cursor:
            break
    for stub, message_id in zip(stubs, answer["cleared_tool_result_ids"], strict=True):
        found = PATH.search(stub)
        assert found is not None and message_id in found.group(1)
        raw = app_client.get(f"/v1/conversations/{cid}/workspace/{found.group(1)}")
        listed = app_client.get(f"/v1/conversations/{cid}/workspace").json()
        assert raw.status_code == 200, (raw.text, listed)
        assert raw.text == stored[message_id]["content"]
    anthropic = _context(app_client, cid, format="anthropic")  # the same carried line
    still_sent = set(answer["cleared_tool_result_ids"]) - set(anthropic["removed_message_ids"])
    assert still_sent <= set(anthropic["cleared_tool_result_ids"])  # it only moves forward
    # keep_tool_results is a strategy option, checked like the others
    more = _context(app_client, cid, options=json.dumps({"keep_tool_results": 20}))
    assert not any(t.startswith(STUB) for t in _tool_texts(more)[-20:])  # the newest 20 whole
    bad = app_client.get(
        f"/v1/conversations/{cid}/context", params={"options": '{"keep_tool_results": -1}'}
    )
    assert bad.status_code == 422 and "keep_tool_results" in bad.text
