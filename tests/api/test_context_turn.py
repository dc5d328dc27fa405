"""Issue 17 items 2 and 7 through the API (docs/context.md#what-is-taken-first, docs/workspaces.md):
the newest turn's files go in as many as fit, in the order attached, before any older turn's file
(each left out is a `failed_file_ids` entry whose note names the budget); a large tool result's
preview shrinks its body to what fits and never loses the line naming its workspace
path; the answer is never a few tokens over the budget. Every answer passes
`context_checks.check` (SDK types, an independent recount)."""

from __future__ import annotations

import json
import re
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
ALL_CUT = re.compile(r"(\d+) of \1 tokens cut")


def _documents(answer: dict[str, Any]) -> list[list[str]]:
    """The file ids of each documents message, top to bottom."""
    out = []
    for m in answer["messages"]:
        if isinstance(m["content"], str) and m["content"].startswith('{"documents"'):
            out.append([d["title"] for d in json.loads(m["content"])["documents"]])
    return out


def test_the_newest_turns_files_go_in_as_many_as_fit_before_older_ones(
    app_client: Any,
) -> None:
    """gpt-4: a newest user message with 10 ready files (≈ 5 800 tokens) and two older
    turns' files (≈ 2 600 tokens): the first newest files that fit are sent, the rest
    listed as failed with a note naming the budget; no older file takes their room."""
    older = [ready_file(app_client, f"old{i}.md", text_of(1300, seed=20 + i)) for i in range(2)]
    newest = [ready_file(app_client, f"new{i}.md", text_of(560, seed=30 + i)) for i in range(10)]
    cid = conversation(app_client, model="gpt-4", system_prompt=SYSTEM)
    post(
        app_client,
        cid,
        {"role": "user", "content": "Read the old spec.", "file_ids": older[:1]},
        {"role": "assistant", "content": "Read it."},
        {"role": "user", "content": "And this one.", "file_ids": older[1:]},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Now compare these ten.", "file_ids": newest},
    )
    for fmt in ("anthropic", "openai"):
        answer = context(app_client, cid, format=fmt)  # checked: ≤ budget, notes = failed
    assert answer["filtered"] and answer["budget_tokens"] == 3915
    (sent,) = _documents(answer)  # one documents message: the newest turn's
    assert 1 <= len(sent) < 10
    assert sent == [f"new{i}.md" for i in range(len(sent))]  # in the order attached
    left = newest[len(sent) :]
    assert answer["failed_file_ids"] == left
    for note in answer["file_notes"]:
        assert "the context budget (3,915 tokens for gpt-4)" in note["reason"]
    assert texts(answer)[-1] == "Now compare these ten."
    # room that no further newest file fits in, and no older file took it
    assert answer["budget_tokens"] - answer["token_count"] < 700


def test_a_large_newest_result_is_a_preview_with_its_path_that_fits_exactly(
    app_client: Any,
) -> None:
    """gpt-4: a pinned 3 500-token task, then a 5.9K-token newest tool result (stored in
    the workspace at insert): its preview's body shrinks to the room left, its path line
    stays, and the answer is within the budget by a few tokens at most."""
    task = text_of(3500, seed=40, prefix="TASK:")
    huge = text_of(5900, seed=41, prefix="<log>")
    cid = conversation(app_client, model="gpt-4", system_prompt=SYSTEM)
    post(
        app_client,
        cid,
        {"role": "user", "content": task, "pinned": True},
        *tool_run(6, result_tokens=120, seed=42),
        call("big"),
        result("big", huge),
    )
    for fmt in ("anthropic", "openai"):
        answer = context(app_client, cid, format=fmt)
        assert answer["token_count"] <= answer["budget_tokens"] == 3915
        assert not ALL_CUT.search(json.dumps(answer["messages"]))
    shown = texts(answer)
    assert shown.count(task) == 1
    last = answer["messages"][-1]
    assert last["tool_call_id"] == "big" and last["content"].startswith("<log>")
    assert re.search(
        r"The full result is at /workspace/tool-results/\w+\.txt\.\]$", last["content"]
    )
    (path,) = readable_paths(app_client, cid, last["content"])
    assert app_client.get(f"/v1/conversations/{cid}/workspace/{path}").text == huge
    assert answer["budget_tokens"] - answer["token_count"] < 20  # the largest that fits
    assert not any("even as previews" in w for w in answer["warnings"])


def test_with_little_room_the_preview_keeps_its_path_line(app_client: Any) -> None:
    """As the pinned task leaves less and less room, the result's body shrinks to
    nothing and the path line stays (never a "[… N of N tokens cut …]" marker); with no
    room even for the line, the turn's unpinned messages are left out, named; with S and
    the task alone over the budget, they alone are sent (seed 002)."""
    huge = text_of(5900, seed=51, prefix="<log>")
    shapes = set()
    for size in range(3620, 3861, 30):
        task = text_of(size, seed=50, prefix="TASK:")
        cid = conversation(app_client, model="gpt-4", system_prompt=SYSTEM)
        post(
            app_client,
            cid,
            {"role": "user", "content": task, "pinned": True},
            *tool_run(6, result_tokens=150, seed=52),
            call("big"),
            result("big", huge),
        )
        answer = context(app_client, cid)
        assert texts(answer).count(task) == 1
        if any("pinned messages alone" in w for w in answer["warnings"]):
            shapes.add("pinned alone")  # S + the task are over the budget: they alone
            continue
        assert answer["token_count"] <= answer["budget_tokens"]
        last = answer["messages"][-1]
        if last["role"] != "tool":
            assert any("even as previews" in w for w in answer["warnings"])
            shapes.add("left out")
            continue
        assert not ALL_CUT.search(last["content"])
        readable_paths(app_client, cid, last["content"])
        shapes.add("line" if last["content"].startswith("[A tool result") else "body")
    assert shapes == {"body", "line", "left out", "pinned alone"}
