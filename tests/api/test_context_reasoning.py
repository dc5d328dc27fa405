"""Reasoning state through the API (docs/context.md#reasoning-state; issue 26), in-process over
a migrated SQLite DATA_DIR: a vendor's reasoning goes back to that vendor as it came —
blocks, items and parts in order, signatures and encrypted content intact —, never to
another (left out, counted in `reasoning_dropped`, stored: a read in its own format gets
it back), and the target model's rule decides earlier turns'. Every answer passes
`context_checks.check`: the vendor SDK's own types, the count and the reasoning
recounted independently, the breakdown summing to the count."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.api import native_data as data
from tests.api.context_checks import check
from tests.api.native_data import dumps

NO_DROP = {"other_vendor": 0, "earlier_turns": 0, "prefix_changed": 0}
DUMMY = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="  # skip_thought_signature_validator
REDACTED = "EmwKAhgBEgy3va3pzix"
THINKING = [
    {"type": "thinking", "thinking": "", "signature": data.SIG},
    {"type": "redacted_thinking", "data": REDACTED},
    {"type": "text", "text": "Reading a.py."},
]
KEYS = {"anthropic": "messages", "responses": "items", "gemini": "contents"}


def _conv(client: Any, model: str = "claude-opus-4-7") -> str:
    r = client.post("/v1/conversations", json={"model": model})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _post(client: Any, cid: str, body: Any) -> None:
    r = client.post(f"/v1/conversations/{cid}/messages", json=body)
    assert r.status_code == 201, r.text


def _native(client: Any, cid: str, fmt: str, batch: list[Any], model: str | None = None) -> None:
    body: dict[str, Any] = {"format": fmt, KEYS[fmt]: batch}
    if model is not None:
        body["model"] = model
    _post(client, cid, body)


def _context(client: Any, cid: str, model: str, fmt: str, **params: Any) -> dict[str, Any]:
    r = client.get(
        f"/v1/conversations/{cid}/context", params={"model": model, "format": fmt, **params}
    )
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = json.loads(r.text)  # key order kept
    check(answer)
    return answer


def _blocks(answer: dict[str, Any], role: str = "assistant") -> list[list[dict[str, Any]]]:
    """The content of each message of `role`, the cache breakpoints the render marks
    (`cache_control`, docs/context.md#the-cut-point-and-a-prefix-that-stays-put) taken off."""
    return [
        [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]
        for m in answer["messages"]
        if m["role"] == role
    ]


def _default_form_loop() -> list[dict[str, Any]]:
    """The issue's case: an assistant turn [thinking (signature), redacted_thinking,
    text] with an OpenAI tool call, then its result, as an agent posts it."""
    call = {
        "id": "call_7",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
    }
    return [
        {"role": "user", "content": "What does a.py print?"},
        {"role": "assistant", "content": copy.deepcopy(THINKING), "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_7", "content": "print(42)"},
    ]


# ---------------------------------------------------------------- the points


def test_claude_gets_its_thinking_back_in_the_tool_loop(app_client: Any) -> None:
    """Point 1: the thinking and redacted blocks go back before the text and the call."""
    cid = _conv(app_client)
    _post(app_client, cid, {"messages": _default_form_loop()})
    answer = _context(app_client, cid, "claude-opus-4-7", "anthropic")
    (turn,) = _blocks(answer)
    tool_use = {"type": "tool_use", "id": "call_7", "name": "read_file", "input": {"path": "a.py"}}
    assert turn == [*THINKING, tool_use]
    assert answer["reasoning_dropped"] == NO_DROP
    assert answer["token_breakdown"]["reasoning"] > 0


def test_openai_gets_no_anthropic_block(app_client: Any) -> None:
    """Point 2: as format=openai (and responses), the turn is its text and its call;
    the two reasoning blocks are counted as left out."""
    cid = _conv(app_client)
    _post(app_client, cid, {"messages": _default_form_loop()})
    chat = _context(app_client, cid, "gpt-4o", "openai")
    (assistant,) = [m for m in chat["messages"] if m["role"] == "assistant"]
    assert assistant["content"] == "Reading a.py." and assistant["tool_calls"][0]["id"] == "call_7"
    items = _context(app_client, cid, "gpt-5.5", "responses")["input"]
    for text in (dumps(chat["messages"]), dumps(items)):
        assert data.SIG not in text and REDACTED not in text and "thinking" not in text
    assert chat["reasoning_dropped"] == {**NO_DROP, "other_vendor": 2}
    assert chat["token_breakdown"]["reasoning"] == 0


def test_responses_reasoning_items_stay_before_what_followed_them(app_client: Any) -> None:
    """Point 4 (Responses): each `rs_` item, its id and encrypted_content, directly before
    the item that followed it; `phase` and ids kept."""
    cid = _conv(app_client, "gpt-5.5")
    _native(app_client, cid, "responses", data.responses_loop())
    answer = _context(app_client, cid, "gpt-5.5", "responses")
    sent = answer["input"]
    loop = data.responses_loop()
    assert dumps(sent) == dumps(loop)  # the whole loop as it came
    kinds = [i.get("type") for i in sent]
    assert [sent[k + 1]["id"] for k, kind in enumerate(kinds) if kind == "reasoning"] == [
        "fc_01",
        "msg_01",
    ]
    assert sent[1]["encrypted_content"] == loop[1]["encrypted_content"]
    assert answer["reasoning_dropped"] == NO_DROP and answer["token_breakdown"]["reasoning"] > 0


def test_gemini_gets_its_thought_signatures_back_on_their_parts(app_client: Any) -> None:
    """Point 4 (Gemini 3): parallel calls with the signature on the first call only,
    FC…FC then FR…FR, the thought part and the text's signature where they were."""
    cid = _conv(app_client, "gemini-3-pro-preview")
    _native(app_client, cid, "gemini", data.gemini_parallel())
    answer = _context(app_client, cid, "gemini-3-pro-preview", "gemini")
    contents = answer["contents"]
    assert dumps(contents) == dumps(data.gemini_parallel())
    step = contents[1]["parts"]
    assert [("functionCall" in p, "thoughtSignature" in p) for p in step[1:]] == [
        (True, True),
        (True, False),
    ]
    assert [list(p) for p in contents[2]["parts"]] == [["functionResponse"]] * 2
    assert answer["reasoning_dropped"] == NO_DROP and answer["token_breakdown"]["reasoning"] > 0


def test_another_vendors_loop_read_as_gemini_carries_the_dummy_signature(app_client: Any) -> None:
    """A Claude tool loop read for Gemini: no Anthropic state, and the first
    functionCall of each model step carries Google's documented dummy signature."""
    cid = _conv(app_client)
    _native(app_client, cid, "anthropic", data.anthropic_interleaved()[:3])
    answer = _context(app_client, cid, "gemini-3-pro-preview", "gemini")
    text = dumps(answer["contents"])
    assert data.SIG not in text and "thought" not in text.replace("thoughtSignature", "")
    (step,) = [c["parts"] for c in answer["contents"] if c["role"] == "model"]
    calls = [p for p in step if "functionCall" in p]
    assert [p.get("thoughtSignature") for p in calls] == [DUMMY, None]
    assert answer["reasoning_dropped"] == {**NO_DROP, "other_vendor": 3}
    assert answer["token_breakdown"]["reasoning"] == 0  # the dummy is not reasoning


# ---------------------------------------------------------------- switching vendors


def test_claude_then_gpt_then_claude_restores_the_claude_blocks(app_client: Any) -> None:
    """A Claude loop, then a GPT loop in the same conversation: read for Claude, then
    for GPT (no Claude state), then for Claude again — the Claude blocks come back
    byte for byte, the GPT reasoning left out of both Claude reads."""
    cid = _conv(app_client)
    _native(app_client, cid, "anthropic", data.anthropic_tool_loop())
    _native(app_client, cid, "responses", data.responses_loop(), model="gpt-5.6")
    first = _context(app_client, cid, "claude-opus-4-7", "anthropic")
    gpt = _context(app_client, cid, "gpt-5.6", "responses")
    third = _context(app_client, cid, "claude-opus-4-7", "anthropic")
    assert dumps(first["messages"]) == dumps(third["messages"])
    claude_turns = [t for t in data.anthropic_tool_loop() if t["role"] == "assistant"]
    assert _blocks(third)[:2] == [t["content"] for t in claude_turns]
    assert data.SIG not in dumps(gpt["input"]) and "rs_01" in dumps(gpt["input"])
    assert "gAAAA" not in dumps(third["messages"])
    assert third["reasoning_dropped"] == {**NO_DROP, "other_vendor": 2}  # rs_01, rs_02
    assert gpt["reasoning_dropped"] == {**NO_DROP, "other_vendor": 2}  # two thinking blocks


# ---------------------------------------------------------------- bad input, by model


def test_an_unknown_block_goes_to_its_own_vendor_only(app_client: Any) -> None:
    """An unknown block type inside a valid turn goes back to Anthropic as it is (an
    earlier turn too), and nowhere else; likewise an unknown Responses item and an
    unknown Gemini part field."""
    cid = _conv(app_client)
    _native(app_client, cid, "anthropic", data.anthropic_server_tools())
    _post(app_client, cid, {"role": "user", "content": "And the next match?"})
    r = app_client.get(
        f"/v1/conversations/{cid}/context",
        params={"model": "claude-haiku-4-5", "format": "anthropic"},
    )
    own = json.loads(r.text)
    (turn,) = _blocks(own)
    assert turn == data.anthropic_server_tools()[1]["content"]  # every block, as it came
    for fmt, model in (("openai", "gpt-4o"), ("responses", "gpt-5.5"), ("gemini", "gemini-3")):
        other = _context(app_client, cid, model, fmt)
        text = dumps(other)
        assert "future_block" not in text and "encrypted" not in text, fmt
        assert "The home side won." in text


def test_unknown_responses_items_and_gemini_fields_stay_with_their_vendor(
    app_client: Any,
) -> None:
    items = data.responses_loop()
    items.insert(4, {"type": "future_item", "id": "fi_1", "blob": {"k": ""}})
    cid = _conv(app_client, "gpt-5.5")
    _native(app_client, cid, "responses", items)
    sent = json.loads(
        app_client.get(
            f"/v1/conversations/{cid}/context", params={"model": "gpt-5.5", "format": "responses"}
        ).text
    )["input"]
    assert dumps(sent) == dumps(items)
    contents = data.gemini_parallel()
    contents[3]["parts"][0]["futureField"] = {"x": 1}
    gid = _conv(app_client, "gemini-3-pro-preview")
    _native(app_client, gid, "gemini", contents)
    for fmt, model in (("anthropic", "claude-opus-4-7"), ("openai", "gpt-4o")):
        assert "future" not in dumps(_context(app_client, cid, model, fmt)), fmt
        assert "future" not in dumps(_context(app_client, gid, model, fmt)), fmt
    r = app_client.get(
        f"/v1/conversations/{gid}/context",
        params={"model": "gemini-3-pro-preview", "format": "gemini"},
    )
    assert json.loads(r.text)["contents"][3]["parts"][0]["futureField"] == {"x": 1}


def test_earlier_turns_reasoning_follows_the_target_models_rule(app_client: Any) -> None:
    """After a new question, the loop is an earlier turn: Opus 4.7 and GPT-5.6 keep
    earlier reasoning (sent, counted), Haiku 4.5 and GPT-5.5 have it stripped (left out,
    said, and the count smaller by what was left out); the new loop's is always sent."""
    cid = _conv(app_client)
    _native(app_client, cid, "anthropic", data.anthropic_interleaved())
    _post(app_client, cid, {"role": "user", "content": "Now c.py."})
    kept = _context(app_client, cid, "claude-opus-4-7", "anthropic")
    stripped = _context(app_client, cid, "claude-haiku-4-5", "anthropic")
    assert kept["reasoning_dropped"] == NO_DROP
    assert stripped["reasoning_dropped"] == {**NO_DROP, "earlier_turns": 5}
    assert data.SIG not in dumps(stripped["messages"]) and REDACTED[:10] not in dumps(stripped)
    assert kept["token_breakdown"]["reasoning"] > 0 == stripped["token_breakdown"]["reasoning"]
    assert [b["type"] for t in _blocks(stripped) for b in t] == [
        "tool_use",
        "tool_use",
        "text",
        "text",
    ]
    rid = _conv(app_client, "gpt-5.5")
    _native(app_client, rid, "responses", data.responses_loop())
    _native(app_client, rid, "responses", [{"role": "user", "content": "And Bergen?"}])
    newer = _context(app_client, rid, "gpt-5.6", "responses")
    older = _context(app_client, rid, "gpt-5.5", "responses")
    assert newer["reasoning_dropped"] == NO_DROP
    assert older["reasoning_dropped"] == {**NO_DROP, "earlier_turns": 2}
    assert [i.get("type") for i in older["input"]].count("reasoning") == 0
    assert [i.get("id") for i in older["input"] if "id" in i] == ["fc_01", "msg_01"]


def test_the_current_loop_keeps_its_thinking_on_a_stripping_model(app_client: Any) -> None:
    """Haiku 4.5 strips earlier turns' thinking, never the current tool loop's — also
    when the agent's text rides with the tool results (one tool-result message)."""
    cid = _conv(app_client, "claude-haiku-4-5")
    loop = data.anthropic_interleaved()[:3]  # the results come with "Be brief."
    _native(app_client, cid, "anthropic", loop)
    answer = _context(app_client, cid, "claude-haiku-4-5", "anthropic")
    assert _blocks(answer)[0] == loop[1]["content"]
    assert answer["reasoning_dropped"] == NO_DROP


# ---------------------------------------------------------------- shown shorter, ids


@pytest.fixture
def small_window(make_stack: Any) -> None:
    make_stack(MAX_CONTEXT_TOKENS=16_000)


def test_a_cleared_native_result_keeps_its_block(small_window: None, app_client: Any) -> None:
    """A tool result shown as a stub keeps its native block but for its content (its
    tool_use_id, is_error); the first stub comes before anything is dropped."""
    cid = _conv(app_client)
    answer: dict[str, Any] = {}
    for n in range(40):
        use = {"type": "tool_use", "id": f"toolu_{n}", "name": "read", "input": {"n": n}}
        result = {
            "type": "tool_result",
            "tool_use_id": f"toolu_{n}",
            "content": f"log {n} " + "line of output " * 60,
            "is_error": n == 0,
        }
        turn = [
            {"role": "user", "content": f"Read log {n}."},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
            {"role": "assistant", "content": [{"type": "text", "text": f"Log {n} read."}]},
        ]
        _native(app_client, cid, "anthropic", turn)
        answer = _context(app_client, cid, "claude-opus-4-7", "anthropic")
        if answer["cleared_tool_result_ids"]:
            break
    assert answer["cleared_tool_result_ids"] and not answer["removed_message_ids"]
    results = [b for t in _blocks(answer, "user") for b in t if b["type"] == "tool_result"]
    stub = results[0]
    assert list(stub) == ["type", "tool_use_id", "content", "is_error"]
    assert stub["tool_use_id"] == "toolu_0" and stub["is_error"] is True
    assert stub["content"].startswith("[Old tool result cleared")


def test_gemini_calls_without_ids_get_ids_unique_in_the_conversation(app_client: Any) -> None:
    """Two batches each making an id-less `weather` call: different synthetic ids."""
    cid = _conv(app_client, "gemini-3-pro-preview")
    for city in ("Oslo", "Rome"):
        _native(
            app_client,
            cid,
            "gemini",
            [
                {"role": "user", "parts": [{"text": f"Weather in {city}?"}]},
                {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "weather", "args": {"city": city}}}],
                },
                {
                    "role": "user",
                    "parts": [{"functionResponse": {"name": "weather", "response": {"t": 1}}}],
                },
            ],
        )
    r = app_client.get(f"/v1/conversations/{cid}/messages")
    rows = r.json()["data"]
    calls = [c["id"] for row in rows for c in row.get("tool_calls") or ()]
    answered = [row["tool_call_id"] for row in rows if row["role"] == "tool"]
    assert calls == answered == ["gemini-weather-1", "gemini-weather-2"]


def test_a_first_read_that_leaves_reasoning_out_reads_as_deep_as_it_fits(
    small_window: None, app_client: Any
) -> None:
    """The window of a long history is what the budget holds as stored; read as
    format=openai, a Responses history's reasoning items (large encrypted content) are
    left out, so the messages cost far less as sent: the read goes as deep as the budget
    holds as sent, and the next read keeps the same start."""
    cid = _conv(app_client, "gpt-5.5")
    for n in range(120):
        turn = [
            {"type": "message", "role": "user", "content": f"Question {n}?"},
            {
                "type": "reasoning",
                "id": f"rs_{n}",
                "summary": [],
                "encrypted_content": "gAAAA" + "".join(f"{k:x}" for k in range(300 + n)),
            },
            {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": f"Answer {n}.", "annotations": []}],
            },
        ]
        _native(app_client, cid, "responses", turn)
    stored = app_client.get(f"/v1/conversations/{cid}").json()
    first = _context(app_client, cid, "gpt-4o", "openai")
    assert stored["total_tokens"] > 3 * first["budget_tokens"]  # a window read
    assert first["removed_message_ids"] == [] and first["kept_message_count"] == 240
    assert first["reasoning_dropped"]["other_vendor"] == 120
    again = _context(app_client, cid, "gpt-4o", "openai")
    assert again["messages"] == first["messages"]
