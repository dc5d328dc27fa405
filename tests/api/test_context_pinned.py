"""Issue 17 items 1 and 8 through the API (docs/context.md#pinned-messages): a pinned task keeps its
protection when it is also the newest turn's user message (what shrinks is the newest
tool result, whose preview names a path that answers 200); pinned messages alone over
the budget are sent whole with the seed-002 warning; pinned messages over the model's
hard room are cut from the oldest, with their files, each named — never all of them.
Every answer passes `context_checks.check` (SDK types, an independent recount)."""

from __future__ import annotations

import logging
from typing import Any

from tests.api.pressure_data import (
    call,
    context,
    conversation,
    post,
    readable_paths,
    ready_file,
    result,
    text_of,
    texts,
    tool_run,
)

SYSTEM = "You fix code."


def test_a_pinned_task_that_is_the_newest_user_message_is_never_cut(app_client: Any) -> None:
    """gpt-4 (budget 3 915, hard room 6 144), a 3 067-token task, a tool-only run: S +
    task + the newest result fit the hard room, so the task goes whole and the newest
    tool result shrinks to a preview that keeps its path line."""
    task = text_of(3067, seed=1, prefix="TASK: fix the failing test.")
    cid = conversation(app_client, model="gpt-4", system_prompt=SYSTEM)
    newest = text_of(1800, seed=2, prefix="<output>")
    run = [*tool_run(40, result_tokens=80, seed=3), call("last"), result("last", newest)]
    post(app_client, cid, {"role": "user", "content": task, "pinned": True}, *run)
    for fmt in ("openai", "anthropic"):
        answer = context(app_client, cid, format=fmt)  # checked: ≤ budget, honest count
        assert answer["filtered"] and answer["token_count"] <= answer["budget_tokens"] == 3915
    answer = context(app_client, cid)
    shown = texts(answer)
    assert shown.count(task) == 1  # the task, verbatim
    assert not any("TASK" in w for w in answer["warnings"])
    last = answer["messages"][-1]
    assert last["role"] == "tool" and last["tool_call_id"] == "last"
    assert last["content"].startswith("<output>") and len(last["content"]) < len(newest)
    (path,) = readable_paths(app_client, cid, last["content"])  # 200 as the answer returns
    raw = app_client.get(f"/v1/conversations/{cid}/workspace/{path}")
    assert raw.text == newest
    # the preview is as large as the room allows: a few tokens short of the budget at most
    assert answer["budget_tokens"] - answer["token_count"] < 20


def test_two_pinned_messages_over_the_budget_are_sent_whole_with_the_warning(
    app_client: Any, caplog: Any
) -> None:
    """Two pinned messages of 935 tokens each over a 1 232-token budget, one of them the
    newest user message: S + both whole, the seed-002 warning logged and in the answer."""
    first = text_of(935, seed=4, prefix="P1")
    second = text_of(935, seed=5, prefix="P2")
    options = '{"reserve_tokens": 3683}'  # gpt-4: 6144 * 0.8 - 3683 = 1232
    cid = conversation(app_client, model="gpt-4", system_prompt=SYSTEM)
    post(
        app_client,
        cid,
        {"role": "user", "content": first, "pinned": True},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": second, "pinned": True},
    )
    with caplog.at_level(logging.WARNING, logger="contextq.history"):
        answer = context(app_client, cid, options=options, force_filter="true")
    assert answer["budget_tokens"] == 1232
    assert texts(answer)[1:] == [first, second]  # S, then both pinned messages whole
    assert answer["budget_tokens"] < answer["token_count"] <= 6144
    assert any("pinned messages alone exceed budget_tokens" in w for w in answer["warnings"])
    assert "pinned messages alone exceed budget_tokens" in caplog.text


def test_pinned_messages_over_the_hard_room_are_cut_from_the_oldest(app_client: Any) -> None:
    """A pinned message of 3.2K tokens with six files no longer fits gpt-4's hard room
    next to the newer pinned ones (114 and 159 tokens): it is cut with its files, named;
    the newer ones stay whole, and the rest of the context is assembled around them."""
    files = [ready_file(app_client, f"spec{i}.md", text_of(600, seed=10 + i)) for i in range(6)]
    old = text_of(3200, seed=6, prefix="OLD")
    newer = [text_of(114, seed=7, prefix="KEEP1"), text_of(159, seed=8, prefix="KEEP2")]
    cid = conversation(app_client, model="gpt-4", system_prompt=SYSTEM)
    post(
        app_client,
        cid,
        {"role": "user", "content": old, "pinned": True, "file_ids": files},
        {"role": "assistant", "content": "Read."},
        {"role": "user", "content": newer[0], "pinned": True},
        {"role": "assistant", "content": "Yes."},
        {"role": "user", "content": newer[1], "pinned": True},
        {"role": "assistant", "content": "Agreed."},
        {"role": "user", "content": "Now write the patch."},
    )
    stored = app_client.get(f"/v1/conversations/{cid}/messages").json()["data"]
    answer = context(app_client, cid)  # checked: never above the hard room
    shown = texts(answer)
    assert old not in shown and all(n in shown for n in newer)
    assert shown[-1] == "Now write the patch."
    cut = next(w for w in answer["warnings"] if "do not fit the model's room" in w)
    assert stored[0]["id"] in cut and stored[2]["id"] not in cut
    assert stored[0]["id"] in answer["removed_message_ids"]
    assert not any(f in str(answer["messages"]) for f in ("spec0.md", "spec5.md"))
    assert answer["removed_message_ids"] == [stored[0]["id"]]  # all the rest is sent
    assert answer["kept_message_count"] == len(stored) - 1


def test_noop_protects_every_pinned_message_the_setting_allows(
    app_client: Any, make_stack: Any
) -> None:
    """Strategy noop with MAX_PINNED_MESSAGES raised to 12: a history over gpt-4's hard
    room (6 144) loses its oldest unpinned messages, never one of the 12 pinned ones —
    the oldest included (the setting reaches the assembly, not a default of 10)."""
    make_stack(MAX_PINNED_MESSAGES=12)
    pinned = [text_of(150, seed=20 + i, prefix=f"PIN{i}") for i in range(12)]
    filler = [text_of(250, seed=40 + i, prefix=f"OLD{i}") for i in range(24)]
    cid = conversation(app_client, model="gpt-4", system_prompt=SYSTEM, context_strategy="noop")
    post(app_client, cid, *[{"role": "user", "content": p, "pinned": True} for p in pinned])
    post(
        app_client,
        cid,
        *[{"role": "user" if i % 2 else "assistant", "content": f} for i, f in enumerate(filler)],
        {"role": "user", "content": "Now write the patch."},
    )
    stored = app_client.get(f"/v1/conversations/{cid}/messages").json()["data"]
    answer = context(app_client, cid)  # checked: never above the hard room
    assert answer["strategy"] == "noop" and answer["filtered"] is False
    assert answer["removed_message_ids"]  # over the hard room: the oldest history left out
    shown = texts(answer)
    assert [p for p in pinned if p not in shown] == []
    assert not {m["id"] for m in stored[:12]} & set(answer["removed_message_ids"])
    assert shown[-1] == "Now write the patch."
