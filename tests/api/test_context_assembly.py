"""The assembled context through the API (docs/history.md#the-ready-to-send-context): seed 003's
flows, prompts, reminders, tools, settings. Every answer passes `context_checks.check` (SDK types,
honest count)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.context_checks import check, labels

CA = "CA: follow the house style."
SEARCH_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Searches the knowledge base. Returns passages with ids.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    },
    {
        "name": "read_file",
        "description": "Reads a file of the repository.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
]
NAMES = {"U1": "U1", "U2": "U2", "U3": "U3", "A1": "A1", "A2": "A2", "CA:": "CA"}


def conversation(client: Any, **fields: Any) -> str:
    r = client.post("/v1/conversations", json={"model": "gpt-4o", **fields})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def post(client: Any, cid: str, *messages: dict[str, Any]) -> None:
    r = client.post(f"/v1/conversations/{cid}/messages", json={"messages": list(messages)})
    assert r.status_code == 201, r.text


def context(client: Any, cid: str, **params: Any) -> dict[str, Any]:
    r = client.get(f"/v1/conversations/{cid}/context", params=params)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    check(answer)
    return answer


def call(call_id: str, name: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
        ],
    }


def result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_seed_003_flow_1_search_in_the_newest_turn(app_client: Any) -> None:
    cid = conversation(app_client, custom_agent_prompt=CA, tools=SEARCH_TOOLS)
    post(
        app_client,
        cid,
        {"role": "user", "content": "U1 what is in the repo?"},
        call("c1", "read_file"),
        result("c1", "README contents"),
        {"role": "assistant", "content": "A1 it holds a service."},
        {"role": "user", "content": "U2 and the tests?"},
        {"role": "assistant", "content": "A2 they run with pytest."},
        {"role": "user", "content": "U3 find the design doc"},
        call("c2", "search"),
        result("c2", "design.md: the queue is Celery"),
    )
    openai = context(app_client, cid)
    assert labels(openai, NAMES) == [
        "S", "U1", "TC", "TR", "A1", "U2", "A2", "CA", "U3", "TC", "TR", "R",
    ]  # fmt: skip
    assert "## Citations" in openai["messages"][0]["content"]
    assert "cite" in openai["messages"][-1]["content"]
    anthropic = context(app_client, cid, format="anthropic")
    assert labels(anthropic, NAMES) == [
        "S", "U1", "TC", "TR", "A1", "U2", "A2", "CA+U3", "TC", "TR+R",
    ]  # fmt: skip
    # the reminder after a tool result joins that result's user message, result first
    last = anthropic["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]


def test_seed_003_flow_2_files_stay_custom_agent_moves(app_client: Any, make_stack: Any) -> None:
    from contextq.settings import get_settings
    from service.files.processing import process_file
    from tests.support.files import upload

    cid = conversation(app_client, custom_agent_prompt=CA)
    up = upload(app_client, "notes.md", b"# Notes\n\nThe sentinel is KIWI-42.\n")
    process_file(settings=get_settings(), file_id=up["id"])  # the worker's own function
    post(app_client, cid, {"role": "user", "content": "U1 read my notes", "file_ids": [up["id"]]})
    first = context(app_client, cid)
    assert labels(first, NAMES) == ["S", "CA", "F", "U1"]
    post(app_client, cid, {"role": "assistant", "content": "A1 done."})
    post(app_client, cid, {"role": "user", "content": "U2 thanks"})
    second = context(app_client, cid)
    assert labels(second, NAMES) == ["S", "F", "U1", "A1", "CA", "U2"]
    documents = json.loads(second["messages"][1]["content"])["documents"]
    assert documents[0]["citation_id"] == 1 and "KIWI-42" in documents[0]["contents"]
    assert documents[0]["metadata"].endswith("nothing left out")
    assert second["citations"] == [
        {
            "citation_id": 1,
            "file_id": up["id"],
            "title": "notes.md",
            "source": "file",
            "chunk": None,
        }
    ]
    anthropic = context(app_client, cid, format="anthropic")
    assert labels(anthropic, NAMES) == ["S", "F+U1", "A1", "CA+U2"]


def test_seed_003_flow_3_another_search_call_keeps_the_reminder_last(app_client: Any) -> None:
    cid = conversation(app_client, search_tools=["lookup"])
    post(
        app_client,
        cid,
        {"role": "user", "content": "U1 look it up"},
        call("c1", "lookup"),
        result("c1", "first hit"),
    )
    before = context(app_client, cid)
    assert labels(before, NAMES) == ["S", "U1", "TC", "TR", "R"]
    post(app_client, cid, call("c2", "lookup"), result("c2", "second hit"))
    after = context(app_client, cid)
    assert labels(after, NAMES) == ["S", "U1", "TC", "TR", "TC", "TR", "R"]
    # the prefix before the turn is unchanged; the reminder moved to the very end
    assert after["messages"][:1] == before["messages"][:1]
    anthropic = context(app_client, cid, format="anthropic")
    assert labels(anthropic, NAMES) == ["S", "U1", "TC", "TR", "TC", "TR+R"]


def test_citation_reminder_only_while_a_search_ran_in_the_current_turn(app_client: Any) -> None:
    cid = conversation(app_client, reminders=["Answer in English."])
    post(app_client, cid, {"role": "user", "content": "U1 hello"})
    plain = context(app_client, cid)
    assert plain["messages"][-1]["content"] == "Reminders:\n- Answer in English."
    assert "## Citations" not in plain["messages"][0]["content"]
    told = context(app_client, cid, tools_used="web_search")  # from tools_used when given
    assert (
        "cite" in told["messages"][-1]["content"]
        and "## Citations" in told["messages"][0]["content"]
    )
    post(app_client, cid, call("c1", "retrieve"), result("c1", "hit"))
    searched = context(app_client, cid)  # else from the turn's tool calls
    assert "cite" in searched["messages"][-1]["content"]
    bad = app_client.patch(f"/v1/conversations/{cid}", json={"reminders": [{"x": 1}]})
    assert bad.status_code == 422 and "reminders" in bad.text
    not_a_search = context(app_client, cid, tools_used="calculator")
    assert "cite" not in not_a_search["messages"][-1]["content"]
    post(app_client, cid, {"role": "assistant", "content": "A1 final answer"})
    done = context(app_client, cid)  # the turn ended: no turn-scoped parts
    assert done["messages"][-1]["content"] == "Reminders:\n- Answer in English."
    assert "## Citations" not in done["messages"][0]["content"]
    assert "cite" not in context(app_client, cid, tools_used="search")["messages"][-1]["content"]


def test_system_prompt_layers_sections_and_replace(app_client: Any) -> None:
    from contextq.assembly import default_system_prompt

    cid = conversation(app_client)
    post(app_client, cid, {"role": "user", "content": "U1 hi"})
    packaged = context(app_client, cid)["messages"][0]["content"]
    assert packaged.startswith(default_system_prompt()) and "## Current date" in packaged
    got = app_client.get("/v1/settings").json()
    assert got["system_prompt"] is None and got["default_system_prompt"] == default_system_prompt()
    r = app_client.put("/v1/settings", json={"system_prompt": "OWNER PROMPT"})
    assert r.status_code == 200 and r.json()["system_prompt"] == "OWNER PROMPT"
    assert context(app_client, cid)["messages"][0]["content"].startswith("OWNER PROMPT")
    app_client.patch(f"/v1/conversations/{cid}", json={"system_prompt": "CONV PROMPT"})
    assert context(app_client, cid)["messages"][0]["content"].startswith("CONV PROMPT")
    app_client.patch(
        f"/v1/conversations/{cid}",
        json={"custom_agent_prompt": CA, "replace_system_prompt": True, "tools": SEARCH_TOOLS},
    )
    replaced = context(app_client, cid)
    assert labels(replaced, NAMES) == ["S", "U1"]  # CA is the system prompt: it does not move
    text = replaced["messages"][0]["content"]
    assert text.startswith(CA) and "## When to use which tool" in text
    assert "- `search`: Searches the knowledge base." in text
    assert "- `read_file`: Reads a file of the repository." in text
    assert (
        app_client.put("/v1/settings", json={"system_prompt": None}).json()["system_prompt"] is None
    )


def test_date_section_granularity_and_timezone(app_client: Any) -> None:
    import re

    cid = conversation(app_client, timezone="Asia/Tokyo")
    post(app_client, cid, {"role": "user", "content": "U1 hi"})
    day = context(app_client, cid)["messages"][0]["content"]
    assert re.search(r"## Current date\n\w+, \d{4}-\d\d-\d\d \(Asia/Tokyo\)$", day)
    minute = context(app_client, cid, datetime_granularity="minute")["messages"][0]["content"]
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d \(Asia/Tokyo, UTC\+09:00\)$", minute)
    app_client.patch(f"/v1/conversations/{cid}", json={"datetime_granularity": "minute"})
    assert "UTC+09:00" in context(app_client, cid)["messages"][0]["content"]
    bad = app_client.patch(f"/v1/conversations/{cid}", json={"timezone": "Mars/Olympus"})
    assert bad.status_code == 422 and "timezone" in bad.text


def test_tools_in_the_target_format_and_request_tools_override(app_client: Any) -> None:
    cid = conversation(app_client, tools=SEARCH_TOOLS)
    post(app_client, cid, {"role": "user", "content": "U1 hi"})
    openai = context(app_client, cid)
    assert [t["function"]["name"] for t in openai["tools"]] == ["search", "read_file"]
    assert openai["tools"][1]["function"]["parameters"]["properties"]["path"]
    anthropic = context(app_client, cid, format="anthropic")
    assert [t["name"] for t in anthropic["tools"]] == ["search", "read_file"]
    assert anthropic["tools"][0]["input_schema"]["properties"]["q"]
    only = context(app_client, cid, tools=json.dumps(SEARCH_TOOLS[1:]))
    assert [t["function"]["name"] for t in only["tools"]] == ["read_file"]
    assert "`search`" not in only["messages"][0]["content"]
    none = context(app_client, cid, tools="[]")
    assert none["tools"] == [] and "## When to use which tool" not in none["messages"][0]["content"]
    for bad, field in (("{", "tools"), ('[{"type": "function"}]', "tools[0].function")):
        r = app_client.get(f"/v1/conversations/{cid}/context", params={"tools": bad})
        assert r.status_code == 422 and field in r.text, r.text
    r = app_client.post("/v1/conversations", json={"tools": [{"name": "bad name!"}]})
    assert r.status_code == 422 and "tools[0].name" in r.text


def test_file_ids_must_be_the_owners_files(app_client: Any, make_owner: Any) -> None:
    from tests.support.api import in_process_client
    from tests.support.files import upload

    cid = conversation(app_client)
    bob = make_owner("bob")
    with in_process_client(bob.key) as other:
        foreign = upload(other, "theirs.txt", b"not yours\n")["id"]
        bobs_conversation = conversation(other)
    r = app_client.post(
        f"/v1/conversations/{cid}/messages",
        json={"role": "user", "content": "see", "file_ids": [foreign]},
    )
    assert r.status_code == 422 and foreign in r.text and "file_ids[0]" in r.text
    r = app_client.post(
        f"/v1/conversations/{cid}/messages",
        json={"messages": [{"role": "user", "content": "x", "file_ids": ["nope"]}]},
    )
    assert r.status_code == 422 and "messages[0].file_ids[0]" in r.text
    # an upload's conversation_id / project_id must be the owner's own: 404 otherwise
    r = upload(app_client, "a.txt", b"x\n", conversation_id=bobs_conversation, expect=None)
    assert r.status_code == 404 and "conversation" in r.text
    r = upload(app_client, "a.txt", b"x\n", project_id="no-such-project", expect=None)
    assert r.status_code == 404 and "project" in r.text
    assert upload(app_client, "a.txt", b"x\n", conversation_id=cid)["conversation_id"] == cid


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_pinned_messages_alone_over_the_budget(app_client: Any, make_stack: Any, fmt: str) -> None:
    make_stack(MAX_CONTEXT_TOKENS=4000, MAX_PINNED_MESSAGES=10)
    cid = conversation(app_client)
    big = " ".join(f"fact{i}" for i in range(900))  # ≈ 1 800 tokens each
    post(
        app_client,
        cid,
        *[{"role": "user", "content": f"U{i} {big}", "pinned": True} for i in range(3)],
        {"role": "user", "content": "U9 newest"},
    )
    answer = context(app_client, cid, format=fmt)
    assert any("pinned messages alone" in w for w in answer["warnings"])
    assert answer["token_count"] > answer["budget_tokens"]  # the one allowed case
    # not even they fit the hard room: the oldest pinned left out, each named
    cut = next(w for w in answer["warnings"] if "do not fit the model's room" in w)
    assert "left out" in cut and answer["removed_message_ids"][0] in cut
    assert answer["kept_message_count"] < 4
    assert len(answer["warnings"]) == 2  # within the hard room: nothing else to say


def test_a_request_that_raced_another_for_citation_ids_uses_the_stored_ones(
    app_client: Any, owner: Any
) -> None:
    """Another request stores the documents' ids between this one's read and its write:
    this one is assembled again with the stored ids (no duplicate, no different id)."""
    from sqlalchemy import select, text

    from contextq.settings import get_settings
    from service.files.processing import process_file
    from service.history import build_context
    from store.context_queries import add_citations
    from store.context_tables import ConversationCitation
    from store.db import read_session, session_scope
    from tests.support.files import upload

    cid = conversation(app_client)
    files = [
        upload(app_client, f"d{i}.md", f"# D{i}\n\nbody {i}\n".encode())["id"] for i in range(2)
    ]
    for file_id in files:
        process_file(settings=get_settings(), file_id=file_id)
    post(app_client, cid, {"role": "user", "content": "U1 read", "file_ids": files})
    with read_session() as session:
        session.execute(text("SELECT 1 FROM conversations"))  # this request's snapshot
        with session_scope() as other:  # the other request, committed meanwhile
            assert add_citations(other, conversation_id=cid, ids={f"file:{files[1]}": 1})
        answer = build_context(
            session=session, settings=get_settings(), owner_id=owner.owner_id, conversation_id=cid
        )
    assert {c["file_id"]: c["citation_id"] for c in answer["citations"]} == {
        files[1]: 1,
        files[0]: 2,
    }
    with read_session() as session:
        rows = session.execute(
            select(ConversationCitation.source_key, ConversationCitation.citation_id)
        ).all()
    assert sorted(rows) == sorted([(f"file:{files[1]}", 1), (f"file:{files[0]}", 2)])


@pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
def test_citation_ids_and_cut_points_are_stored_on_both_backends(
    stack: Any, app_client: Any, make_stack: Any
) -> None:
    from sqlalchemy import select

    from contextq.settings import get_settings
    from service.files.processing import process_file
    from store.context_tables import ContextCutPoint, ConversationCitation
    from store.db import read_session
    from tests.api.history_data import agent_history
    from tests.support.files import upload

    make_stack(MAX_CONTEXT_TOKENS=16_000)
    cid = conversation(app_client)
    post(app_client, cid, *agent_history(600, seed=2, pinned=0))
    up = upload(app_client, "n.md", b"# N\n\nnote\n")
    process_file(settings=get_settings(), file_id=up["id"])
    post(app_client, cid, {"role": "user", "content": "U with a file", "file_ids": [up["id"]]})
    first = context(app_client, cid)
    again = context(app_client, cid)
    assert first["filtered"] and again["messages"] == first["messages"]  # the cut held
    with read_session() as session:
        cuts = session.execute(select(ContextCutPoint.model, ContextCutPoint.seq)).all()
        cited = session.execute(
            select(ConversationCitation.source_key, ConversationCitation.citation_id)
        ).all()
    assert [model for model, _ in cuts] == ["gpt-4o"] and cuts[0][1] > 1
    assert cited == [(f"file:{up['id']}", 1)]
    post(app_client, cid, {"role": "assistant", "content": "A"}, {"role": "user", "content": "U2"})
    moved = context(app_client, cid)  # one more turn: the same start, the same id
    assert moved["messages"][: len(first["messages"]) - 1] == first["messages"][:-1]
    assert moved["citations"] == first["citations"]
    assert app_client.delete(f"/v1/conversations/{cid}").status_code == 204
    with read_session() as session:  # gone with their conversation
        assert session.execute(select(ContextCutPoint.seq)).first() is None
        assert session.execute(select(ConversationCitation.citation_id)).first() is None


def test_a_stored_reminder_that_is_not_text_is_skipped_not_a_5xx(app_client: Any) -> None:
    """A row written before reminders were checked still gives a context."""
    from store.db import session_scope
    from store.history_tables import Conversation

    cid = conversation(app_client)
    post(app_client, cid, {"role": "user", "content": "U1 hi"})
    with session_scope() as session:
        row = session.get(Conversation, cid)
        assert row is not None
        row.reminders = [{"x": 1}, 7, "Stay on topic."]
        session.add(row)
    answer = context(app_client, cid)
    assert answer["messages"][-1]["content"] == "Reminders:\n- Stay on topic."
