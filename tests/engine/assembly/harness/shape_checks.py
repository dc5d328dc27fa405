"""The shape promises (docs/history.md#the-answer: every answer valid for its own SDK's types as it
is; docs/history.md#history-strategies: never a tool call without its result): each a small named
function.

- `sdk_valid`: the installed SDKs' own types (`oracle.sdk_problems`) and the rules a
  type does not say (Anthropic: user first, roles alternate, no empty text block, tool
  results first, `tool_use` ids unique, at most 4 cache breakpoints; Gemini: user first,
  roles alternate, no empty part, function responses first);
- `tool_calls_paired`: no orphaned call or result, in each format's own pairing.
"""

from __future__ import annotations

from typing import Any

from contextq.history import Message
from tests.engine.assembly.harness.facts import Facts
from tests.engine.assembly.harness.oracle import sdk_problems, wire_list
from tests.engine.assembly.harness.sent import GeminiIds, gemini_field, gemini_pairs


def sdk_valid(f: Facts) -> list[str]:
    """Every message validates against the installed SDK's parameter types; Anthropic's
    list also keeps the Messages API's rules (user first, roles alternate, no empty text
    block, tool results first in their message, tool_use ids unique in the request, at
    most 4 cache breakpoints)."""
    problems = sdk_problems(f.answer)
    messages = wire_list(f.answer)
    if not messages:
        problems.append("no message at all (every API needs at least one)")
    if f.answer["format"] == "gemini":
        return problems + _gemini_rules(messages)
    if f.answer["format"] != "anthropic":
        return problems
    return problems + _anthropic_rules(f.answer, messages)


def _anthropic_rules(answer: dict[str, Any], messages: list[dict[str, Any]]) -> list[str]:
    """The Messages API's rules a type does not say (a mid-conversation system turn
    stands between the others: the alternation is of user and assistant turns)."""
    problems: list[str] = []
    turns = [m for m in messages if m["role"] != "system"]
    if turns and turns[0]["role"] != "user":
        problems.append("the first message is not the user's")
    marks = sum(1 for b in answer.get("system") or () if "cache_control" in b)
    ids: set[str] = set()
    for i, m in enumerate(turns):
        if i and turns[i - 1]["role"] == m["role"]:
            problems.append(f"turn {i} has the role of the turn before it")
        blocks = m["content"] if isinstance(m["content"], list) else []
        marks += sum(1 for b in blocks if "cache_control" in b)
        if any(b.get("type") == "text" and not b.get("text", "").strip() for b in blocks):
            problems.append(f"turn {i} has an empty text block")
        kinds = [b.get("type") for b in blocks]
        first_other = next((j for j, k in enumerate(kinds) if k != "tool_result"), len(kinds))
        if "tool_result" in kinds[first_other:]:
            problems.append(f"turn {i} has a block before a tool_result")
        for b in blocks:
            if b.get("type") == "tool_use" and b.get("id") in ids:
                problems.append(f"turn {i}: tool_use id {b['id']} used twice (ids must be unique)")
            ids.add(b.get("id")) if b.get("type") == "tool_use" else None
    if marks > 4:
        problems.append(f"{marks} cache_control breakpoints (the API takes 4)")
    return problems


def _gemini_rules(contents: list[dict[str, Any]]) -> list[str]:
    """Gemini: user first (a function call follows a user turn), roles alternate, no
    content without parts nor a blank text part, function responses first in theirs."""
    problems: list[str] = []
    if contents and contents[0]["role"] != "user":
        problems.append("the first content is not the user's")
    for i, c in enumerate(contents):
        if i and contents[i - 1]["role"] == c["role"]:
            problems.append(f"contents[{i}] has the role of the content before it")
        parts = c["parts"]
        if not parts:
            problems.append(f"contents[{i}] has no part")
        if any("text" in p and not str(p["text"]).strip() for p in parts):
            problems.append(f"contents[{i}] has an empty text part")
        kinds = [gemini_field(p, "functionResponse") is not None for p in parts]
        if kinds != sorted(kinds, reverse=True):
            problems.append(f"contents[{i}] has a part before a functionResponse")
    return problems


def tool_calls_paired(f: Facts) -> list[str]:
    """No orphan: every tool call answered right after it, every result after its call."""
    if f.answer["format"] == "anthropic":
        return _paired_anthropic(f.answer["messages"])
    if f.answer["format"] == "responses":
        return _paired_items(f.answer["input"])
    if f.answer["format"] == "gemini":
        return _paired_contents(f.answer["contents"], f.read.history)
    problems: list[str] = []
    waiting: set[str] = set()
    for i, m in enumerate(f.answer["messages"]):
        if m["role"] == "tool":
            if m.get("tool_call_id") not in waiting:
                problems.append(f"messages[{i}]: tool result {m.get('tool_call_id')} has no call")
            waiting.discard(m.get("tool_call_id"))
            continue
        if waiting:
            problems.append(f"messages[{i}]: calls {sorted(waiting)} left without results")
        waiting = {c["id"] for c in m.get("tool_calls") or ()}
    if waiting:
        problems.append(f"the list ends with calls {sorted(waiting)} unanswered")
    return problems


def _paired_items(items: list[dict[str, Any]]) -> list[str]:
    """Responses items: the calls of a run of output items (reasoning, messages and
    other items may stand between parallel calls, as the API returned them) answered by
    the outputs after the run, before any other item."""
    problems: list[str] = []
    waiting: set[str] = set()
    answering = False  # past the run's calls, among its outputs
    for i, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "function_call_output":
            if item["call_id"] not in waiting:
                problems.append(f"input[{i}]: output {item['call_id']} has no call")
            waiting.discard(item["call_id"])
            answering = True
            continue
        is_input = kind == "message" and item.get("role") != "assistant"
        if waiting and (answering or is_input):
            problems.append(f"input[{i}]: calls {sorted(waiting)} left without results")
            waiting = set()
        answering = False
        if kind == "function_call":
            waiting.add(item["call_id"])
    if waiting:
        problems.append(f"the list ends with calls {sorted(waiting)} unanswered")
    return problems


def _paired_contents(contents: list[dict[str, Any]], history: list[Message]) -> list[str]:
    """Gemini: a model content's function calls answered, by id (a call or response
    sent without one: as its row was stored, or by name), in the next content."""
    problems: list[str] = []
    calls: set[str] = set()
    for i, (c, found) in enumerate(
        zip(contents, gemini_pairs(contents, GeminiIds(history)), strict=True)
    ):
        ids = {x for x in found if x is not None}
        if c["role"] == "user":
            if ids - calls:
                problems.append(
                    f"contents[{i}]: functionResponse {sorted(ids - calls)} has no call"
                )
            if calls - ids:
                problems.append(f"contents[{i}]: functionCall {sorted(calls - ids)} unanswered")
            calls = set()
        else:
            if calls:
                problems.append(f"contents[{i}]: functionCall {sorted(calls)} unanswered")
            calls = ids
    if calls:
        problems.append(f"the list ends with functionCall {sorted(calls)} unanswered")
    return problems


def _paired_anthropic(messages: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    calls: set[str] = set()
    for i, m in enumerate(messages):
        blocks = m["content"] if isinstance(m["content"], list) else []
        results = {b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"}
        if m["role"] == "user":
            if results - calls:
                problems.append(f"messages[{i}]: tool_result {sorted(results - calls)} has no call")
            if calls - results:
                problems.append(f"messages[{i}]: tool_use {sorted(calls - results)} unanswered")
            calls = set()
        else:
            if calls:
                problems.append(f"messages[{i}]: tool_use {sorted(calls)} unanswered")
            calls = {b["id"] for b in blocks if b.get("type") == "tool_use"}
    if calls:
        problems.append(f"the list ends with tool_use {sorted(calls)} unanswered")
    return problems
