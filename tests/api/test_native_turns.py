"""Native turns through the API (docs/api.md#native-turns), in-process over a migrated SQLite
DATA_DIR: each vendor's turns are stored verbatim beside the normalised rows, `GET
…/messages` gives them back byte for byte, a batch the vendor's API would refuse is a
422 naming the place with nothing stored, and Anthropic blocks in the default form are
read as an Anthropic turn whose tool loop the context carries."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextq.history.message_tokens import serialise
from contextq.tokens import count_tokens, encoding_name_for_model
from tests.api import native_data as data
from tests.api.history_data import validate_with_sdks
from tests.api.native_data import dumps
from tests.store.test_projects_migration import BOTH_BACKENDS


def _conv(client: Any, **body: Any) -> str:
    r = client.post("/v1/conversations", json={"model": "claude-sonnet-4-5", **body})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _post(client: Any, cid: str, body: Any) -> Any:
    return client.post(f"/v1/conversations/{cid}/messages", json=body)


def _stored(client: Any, cid: str) -> list[dict[str, Any]]:
    """The stored messages, parsed keeping key order (json.loads does)."""
    r = client.get(f"/v1/conversations/{cid}/messages", params={"limit": 1000})
    assert r.status_code == 200, r.text
    rows: list[dict[str, Any]] = json.loads(r.text)["data"]
    return rows


def _turns(rows: list[dict[str, Any]], fmt: str) -> list[Any]:
    """The vendor's turns put back together from the rows' slices: the consecutive user
    slices of one turn merged (anthropic content blocks, gemini parts); a model turn is
    one row; responses items are flat."""
    if fmt == "responses":
        return [item for row in rows for item in row["native"]["payload"]]
    key = "content" if fmt == "anthropic" else "parts"
    turns: list[dict[str, Any]] = []
    for row in rows:
        piece = row["native"]["payload"]
        if turns and turns[-1]["role"] == piece["role"] == "user":
            turns[-1] = {**turns[-1], key: [*turns[-1][key], *piece[key]]}
        else:
            turns.append(piece)
    return turns


def _context(client: Any, cid: str, **params: Any) -> dict[str, Any]:
    r = client.get(f"/v1/conversations/{cid}/context", params=params)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


BATCHES = {
    "anthropic tool loop, thinking '' with its signature": (
        "anthropic",
        data.anthropic_tool_loop,
    ),
    "anthropic interleaved thinking, redacted_thinking, parallel calls": (
        "anthropic",
        data.anthropic_interleaved,
    ),
    "anthropic server-tool blocks with encrypted content, an unknown block": (
        "anthropic",
        data.anthropic_server_tools,
    ),
    "responses reasoning, function_call and its output": ("responses", data.responses_loop),
    "gemini thoughtSignature parts and parallel calls": ("gemini", data.gemini_parallel),
}
KEYS = {"anthropic": "messages", "responses": "items", "gemini": "contents"}


@BOTH_BACKENDS
@pytest.mark.parametrize("name", list(BATCHES))
def test_native_turns_come_back_byte_for_byte(stack: Any, app_client: Any, name: str) -> None:
    fmt, build = BATCHES[name]
    batch = build()
    data.sdk_check(fmt, batch)  # the vendor's own types take the batch
    cid = _conv(app_client)
    r = _post(app_client, cid, {"format": fmt, KEYS[fmt]: batch, "model": "vendor-model-1"})
    assert r.status_code == 201, r.text
    posted = json.loads(r.text)["data"]
    rows = _stored(app_client, cid)
    assert [p["id"] for p in posted] == [row["id"] for row in rows]
    assert all(row["native"]["format"] == fmt for row in rows)
    assert all(row["native"]["model"] == "vendor-model-1" for row in rows)
    assert dumps(_turns(rows, fmt)) == dumps(build())  # every key, in order, nulls and ""
    assert dumps(_turns(posted, fmt)) == dumps(build())
    # each row counts its payload's JSON in the conversation model's encoding
    encoding = encoding_name_for_model("claude-sonnet-4-5")
    for row in rows:
        assert row["token_count"] == count_tokens(serialise(row["native"]["payload"]), encoding)


def test_an_anthropic_loop_is_normalised_into_its_rows(app_client: Any) -> None:
    cid = _conv(app_client)
    body = {"format": "anthropic", "messages": data.anthropic_interleaved()}
    assert _post(app_client, cid, body).status_code == 201
    rows = _stored(app_client, cid)
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "tool", "user", "assistant"]
    call = rows[1]
    assert call["content"] is None  # thinking is never text
    assert [c["id"] for c in call["tool_calls"]] == ["toolu_a", "toolu_b"]
    assert call["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"p":"a"}'}
    assert [(r["tool_call_id"], r["content"]) for r in rows[2:4]] == [
        ("toolu_a", "x = 1"),
        ("toolu_b", "x = 2"),
    ]
    assert rows[4]["content"] == "Be brief." and rows[4]["native"]["payload"]["content"] == [
        {"type": "text", "text": "Be brief."}
    ]
    assert rows[5]["content"] == "a sets 1, b sets 2."  # its text blocks, thinking apart
    # the model defaults to the conversation's
    assert {r["native"]["model"] for r in rows} == {"claude-sonnet-4-5"}


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_the_context_carries_an_anthropic_native_tool_loop(app_client: Any, fmt: str) -> None:
    cid = _conv(app_client)
    loop = data.anthropic_tool_loop()
    assert _post(app_client, cid, {"format": "anthropic", "messages": loop}).status_code == 201
    answer = _context(app_client, cid, format=fmt)
    validate_with_sdks(answer)
    _assert_whole_loop(answer, call_id="toolu_01A", result="print(42)", answer_text="It prints")


def _assert_whole_loop(
    answer: dict[str, Any], *, call_id: str, result: str, answer_text: str
) -> None:
    """The context holds the question, the assistant's call, its result and the answer,
    in that order; its thinking goes back to Anthropic as it came (the loop is the
    current turn) and nowhere else, never as text."""
    sent = json.dumps(answer["messages"])
    assert "What does a.py print?" in sent or "read a.py" in sent
    if answer["format"] == "openai":
        calls = [m for m in answer["messages"] if m.get("tool_calls")]
        results = [m for m in answer["messages"] if m["role"] == "tool"]
        assert [c["id"] for m in calls for c in m["tool_calls"]] == [call_id]
        assert [(m["tool_call_id"], m["content"]) for m in results] == [(call_id, result)]
    else:
        blocks = [b for m in answer["messages"] for b in m["content"]]
        uses = [b for b in blocks if b["type"] == "tool_use"]
        results = [b for b in blocks if b["type"] == "tool_result"]
        assert [b["id"] for b in uses] == [call_id]
        assert [b["tool_use_id"] for b in results] == [call_id]
        assert result in json.dumps(results)
    assert answer_text in sent
    if answer["format"] == "anthropic":  # the thinking blocks as they came, signature and all
        thinking = [b for m in answer["messages"] for b in m["content"] if b["type"] == "thinking"]
        assert thinking and thinking[0]["signature"] == data.SIG
    else:  # no opaque state leaks into the normalised render
        assert data.SIG not in sent


# ---------------------------------------------------------------- the default form


def _sdk_loop_in_default_form() -> list[dict[str, Any]]:
    """What an Anthropic-SDK agent posts when it sends its turns as they are."""
    loop = data.anthropic_tool_loop()
    loop[0] = {"role": "user", "content": "read a.py"}
    return loop


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_anthropic_blocks_in_the_default_form_are_an_anthropic_turn(
    app_client: Any, fmt: str
) -> None:
    cid = _conv(app_client)
    r = _post(app_client, cid, {"messages": _sdk_loop_in_default_form()})
    assert r.status_code == 201, r.text
    rows = _stored(app_client, cid)
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant"]
    assert rows[0]["native"] is None  # plain text stays in the default form
    assert [row["native"]["format"] for row in rows[1:]] == ["anthropic"] * 3
    assert rows[1]["tool_calls"][0]["id"] == "toolu_01A" and rows[2]["tool_call_id"] == "toolu_01A"
    assert rows[1]["content"] == "Let me read it."  # never the blocks as opaque content
    answer = _context(app_client, cid, format=fmt)
    validate_with_sdks(answer)
    _assert_whole_loop(answer, call_id="toolu_01A", result="print(42)", answer_text="It prints")


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_thinking_blocks_beside_openai_tool_calls_keep_the_loop(app_client: Any, fmt: str) -> None:
    """An assistant message with [thinking, redacted_thinking, text] content and an
    OpenAI tool call, then its tool message: the calls join the payload as tool_use."""
    assistant = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "", "signature": data.SIG},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            {"type": "text", "text": "Reading a.py."},
        ],
        "tool_calls": [
            {
                "id": "call_7",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
            }
        ],
    }
    batch = [
        {"role": "user", "content": "What does a.py print?"},
        assistant,
        {"role": "tool", "tool_call_id": "call_7", "content": "print(42)"},
        {"role": "assistant", "content": "It prints 42."},
    ]
    cid = _conv(app_client)
    assert _post(app_client, cid, {"messages": batch}).status_code == 201
    rows = _stored(app_client, cid)
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant"]
    payload = rows[1]["native"]["payload"]
    assert payload["content"][:3] == assistant["content"]
    assert payload["content"][3] == {
        "type": "tool_use",
        "id": "call_7",
        "name": "read_file",
        "input": {"path": "a.py"},
    }
    assert rows[2]["native"] is None and rows[2]["tool_call_id"] == "call_7"
    answer = _context(app_client, cid, format=fmt)
    validate_with_sdks(answer)
    _assert_whole_loop(answer, call_id="call_7", result="print(42)", answer_text="It prints")


def test_a_single_default_form_message_with_blocks_names_its_fields(app_client: Any) -> None:
    cid = _conv(app_client)
    bad = {"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}
    r = _post(app_client, cid, bad)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "content[0].signature"]
    r = _post(app_client, cid, {"messages": [bad]})
    assert r.json()["detail"][0]["loc"] == ["body", "messages[0].content[0].signature"]
    ok = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "", "signature": "s"}],
        "pinned": True,
    }
    r = _post(app_client, cid, ok)
    assert r.status_code == 201, r.text
    assert r.json()["pinned"] is True and r.json()["native"]["format"] == "anthropic"


# ---------------------------------------------------------------- results across batches


@BOTH_BACKENDS
def test_results_answer_the_stored_turns_open_calls_once(stack: Any, app_client: Any) -> None:
    cid = _conv(app_client)
    first = data.anthropic_tool_loop()[:2]
    assert _post(app_client, cid, {"format": "anthropic", "messages": first}).status_code == 201
    result = data.anthropic_tool_loop()[2]
    r = _post(app_client, cid, {"format": "anthropic", "messages": [result]})
    assert r.status_code == 201, r.text
    again = _post(app_client, cid, {"format": "anthropic", "messages": [result]})
    assert again.status_code == 422  # answered already: it answers no open call
    assert again.json()["detail"][0]["loc"] == ["body", "messages[0].content[0].tool_use_id"]
    assert len(_stored(app_client, cid)) == 3


def test_gemini_responses_without_ids_pair_with_stored_calls_by_name(app_client: Any) -> None:
    cid = _conv(app_client, model="gemini-2.5-pro")
    turns = data.gemini_parallel()
    assert _post(app_client, cid, {"format": "gemini", "contents": turns[:2]}).status_code == 201
    r = _post(app_client, cid, {"format": "gemini", "contents": turns[2:]})
    assert r.status_code == 201, r.text
    rows = _stored(app_client, cid)
    ids = [c["id"] for c in rows[1]["tool_calls"]]
    assert ids == ["gemini-weather-1", "gemini-weather-2"]
    assert [r["tool_call_id"] for r in rows[2:4]] == ids
    assert [r["content"] for r in rows[2:4]] == ['{"output":"-3"}', '{"output":"18"}']
    assert "id" not in rows[1]["native"]["payload"]["parts"][1]["functionCall"]  # untouched
    assert rows[1]["content"] is None and rows[4]["content"] == "Oslo -3, Rome 18."


# ---------------------------------------------------------------- refused batches


@pytest.mark.parametrize("name", list(data.REFUSED))
def test_a_batch_its_api_would_refuse_is_422_naming_the_place(app_client: Any, name: str) -> None:
    body, place, words = data.REFUSED[name]
    cid = _conv(app_client)
    r = _post(app_client, cid, body)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail[0]["loc"] == ["body", place], detail
    assert words in detail[0]["msg"]
    # the batch is stored whole or not at all: its valid turns before the bad one too
    assert _stored(app_client, cid) == []
    conversation = app_client.get(f"/v1/conversations/{cid}").json()
    assert conversation["message_count"] == 0 and conversation["total_tokens"] == 0


def test_body_shape_errors_and_limits(app_client: Any) -> None:
    cid = _conv(app_client)
    r = _post(app_client, cid, {"format": "gemini", "messages": [data.HELLO]})
    assert r.status_code == 422  # gemini takes `contents`
    assert {tuple(e["loc"]) for e in r.json()["detail"]} >= {("body", "contents")}
    r = _post(app_client, cid, {"format": "responses", "items": []})
    assert r.status_code == 422
    huge = {"role": "user", "content": "x" * 1_100_000}
    assert _post(app_client, cid, {"format": "anthropic", "messages": [huge]}).status_code == 413
    many = {"format": "responses", "items": [{"role": "user", "content": "x"}] * 10_001}
    assert _post(app_client, cid, many).status_code == 413
    r = _post(app_client, cid, {"format": "anthropic", "messages": [data.HELLO], "model": "a\x00b"})
    assert r.status_code == 422
    assert _stored(app_client, cid) == []


def test_an_unknown_block_inside_a_valid_turn_is_kept(app_client: Any) -> None:
    cid = _conv(app_client)
    unknown = {"type": "tool_reference_v9", "tool_name": "x", "extra": {"k": ""}}
    turn = {"role": "user", "content": [{"type": "text", "text": "hi"}, unknown], "cache": None}
    r = _post(app_client, cid, {"format": "anthropic", "messages": [turn]})
    assert r.status_code == 201, r.text
    (row,) = _stored(app_client, cid)
    assert dumps(row["native"]["payload"]) == dumps(turn)
    assert row["content"] == "hi"
