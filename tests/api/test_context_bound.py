"""Bound reasoning through the API (docs/context.md#bound-reasoning; issue 27), in-process over
a migrated SQLite DATA_DIR: on a model that binds each thinking block to the exact prefix
it was written after (Claude Opus 5.5), a tool loop's answers only grow — the custom
agent prompt, the reminders and the date line stay where the turn first sent them —, a
thinking block is sent only after its own prefix (recomputed here from the answers, as
a user would: the oracle's hash of what the model read), what leaves is a run from the
end or everything, and a block once left out never comes back. A model that does not
bind keeps seed 003's layout. Every answer passes `context_checks.check`."""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Any

import pytest

from tests.api.context_checks import check
from tests.api.native_data import SIG

BOUND = "claude-opus-5-5"
UNBOUND = "claude-opus-4-7"
CA = "You are the repository agent."
REMINDER = "Run the tests before you answer."
PAD = " ".join(f"line{i} = value{i}" for i in range(120))  # ≈ 400 tokens of tool output


def _conv(client: Any, model: str, **fields: Any) -> str:
    body = {"model": model, "custom_agent_prompt": CA, "reminders": [REMINDER], **fields}
    r = client.post("/v1/conversations", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _native(client: Any, cid: str, batch: list[Any]) -> None:
    r = client.post(
        f"/v1/conversations/{cid}/messages", json={"format": "anthropic", "messages": batch}
    )
    assert r.status_code == 201, r.text


def _read(client: Any, cid: str, model: str, **params: Any) -> dict[str, Any]:
    r = client.get(
        f"/v1/conversations/{cid}/context",
        params={"model": model, "format": "anthropic", **params},
    )
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = json.loads(r.text)
    check(answer)
    return answer


def _step(client: Any, cid: str, n: int, *, search: bool = False) -> None:
    """One step of the loop: the model thinks and calls a tool; the result comes back."""
    name = "search" if search else "read_file"
    _native(
        client,
        cid,
        [
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"step {n}", "signature": f"{SIG}{n}"},
                    {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": {"n": n}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"{n} {PAD}"}
                ],
            },
        ],
    )


def _canonical(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _canonical(v) for k, v in node.items() if k != "cache_control"}
    if isinstance(node, list):
        return [_canonical(v) for v in node if not _thinking(v)]
    return node


def _thinking(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking")


def _wire(answer: dict[str, Any]) -> list[Any]:
    """What the model reads, canonical: system, tools, messages without thinking or marks."""
    return _canonical([answer["system"], answer["tools"], answer["messages"]])


def _hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def _sent(answer: dict[str, Any]) -> list[tuple[str, str]]:
    """(signature, hash of the canonical prefix before its message) of each block sent."""
    out = []
    messages = answer["messages"]
    for k, message in enumerate(messages):
        for block in message["content"]:
            if _thinking(block):
                before = _canonical([answer["system"], answer["tools"], messages[:k]])
                out.append((block["signature"], _hash(before)))
    return out


def _prefix_of(shorter: list[Any], longer: list[Any]) -> bool:
    """The earlier answer's canonical list is the start of the later one's."""
    return shorter[:2] == longer[:2] and longer[2][: len(shorter[2])] == shorter[2]


def _loop(client: Any, cid: str, model: str, steps: int, **params: Any) -> list[dict[str, Any]]:
    r = client.post(
        f"/v1/conversations/{cid}/messages", json={"role": "user", "content": "Fix the bug."}
    )
    assert r.status_code == 201, r.text
    answers = [_read(client, cid, model, **params)]
    for n in range(1, steps + 1):
        _step(client, cid, n)
        answers.append(_read(client, cid, model, **params))
    return answers


def _oracle(answers: list[dict[str, Any]]) -> None:
    """Each block sent sits after the prefix its step read (the answer before it was
    written); the blocks of an earlier answer still sent are a run of its blocks (no gap);
    a block left out never comes back."""
    wrote: dict[str, str] = {}  # signature → hash of the answer the model read
    gone: set[str] = set()
    previous: list[str] = []
    for k, answer in enumerate(answers):
        if k:
            wrote[f"{SIG}{k}"] = _hash(_wire(answers[k - 1]))
        sent = _sent(answer)
        names = [s for s, _ in sent]
        for signature, before in sent:
            assert before == wrote[signature], f"answer {k}: {signature[-3:]} after another prefix"
        assert not gone & set(names), f"answer {k}: a block left out came back"
        kept = [s for s in previous if s in names]
        if kept:
            start = previous.index(kept[0])
            assert previous[start : start + len(kept)] == kept, f"answer {k}: a gap"
        gone |= set(previous) - set(names)
        previous = names


def test_a_bound_loop_only_grows_and_keeps_every_step_thinking(app_client: Any) -> None:
    cid = _conv(app_client, BOUND)
    answers = _loop(app_client, cid, BOUND, 6)
    for earlier, later in itertools.pairwise(answers):
        assert _prefix_of(_wire(earlier), _wire(later)), "the answer did not only grow"
    last = answers[-1]
    assert len(_sent(last)) == 6 and last["reasoning_dropped"]["prefix_changed"] == 0
    texts = [b.get("text", "") for m in last["messages"] for b in m["content"]]
    assert texts.index(CA) < texts.index("Fix the bug.")
    reminder = next(i for i, t in enumerate(texts) if t.startswith("Reminders:"))
    assert reminder == texts.index("Fix the bug.") + 1  # where the turn first sent it
    _oracle(answers)


def test_a_reminder_whose_text_changes_is_added_at_the_end(app_client: Any) -> None:
    cid = _conv(app_client, BOUND)
    answers = _loop(app_client, cid, BOUND, 2)
    _step(app_client, cid, 3, search=True)  # the citation reminder joins
    answer = _read(app_client, cid, BOUND)
    assert _prefix_of(_wire(answers[-1]), _wire(answer))
    reminders = [
        b["text"] for m in answer["messages"] for b in m["content"]
        if b.get("text", "").startswith("Reminders:")
    ]  # fmt: skip
    assert len(reminders) == 2 and "citation_id" in reminders[1]
    assert "citation_id" in answer["messages"][-1]["content"][-1]["text"]
    assert "## Citations" not in answer["system"][0]["text"]  # S stays as first sent
    _oracle([*answers, answer])


def test_an_unbound_model_keeps_seed_003s_layout(app_client: Any) -> None:
    cid = _conv(app_client, UNBOUND)
    answers = _loop(app_client, cid, UNBOUND, 3)
    for answer in answers:
        last = answer["messages"][-1]["content"][-1]
        assert last["text"].startswith("Reminders:")  # R moves to the very end
        assert answer["reasoning_dropped"]["prefix_changed"] == 0
    assert len(_sent(answers[-1])) == 3  # the current loop's thinking, all of it


@pytest.fixture
def small_window(make_stack: Any) -> None:
    make_stack(MAX_CONTEXT_TOKENS=16_000)


def test_a_cut_inside_a_bound_loop_leaves_out_a_trailing_run(
    small_window: None, app_client: Any
) -> None:
    """Past the budget, the loop's cut moves: what leaves is everything after the change
    (said in `prefix_changed` and a warning naming the cause), never a block from the
    middle, and a block left out never comes back."""
    cid = _conv(app_client, BOUND)
    answers = _loop(app_client, cid, BOUND, 40)
    dropped = [a for a in answers if a["reasoning_dropped"]["prefix_changed"]]
    assert dropped, "the loop never passed the hard room"
    warned = [w for a in dropped for w in a["warnings"] if "thinking of" in w]
    assert warned and "the model will continue without it" in warned[0]
    _oracle(answers)
    newest_sent = sum(1 for k, a in enumerate(answers[1:], 1) if f"{SIG}{k}" in dict(_sent(a)))
    # a move of the cut changes even the newest step's prefix: on this small window (the
    # newest five pairs kept whole) a move comes every four or five steps
    assert newest_sent >= 0.75 * (len(answers) - 1)


def _responses_step(client: Any, cid: str, n: int) -> None:
    items = [
        {"type": "reasoning", "id": f"rs_{n}", "summary": [], "encrypted_content": f"enc{n}"},
        {"type": "function_call", "call_id": f"call_{n}", "name": "read_file",
         "arguments": json.dumps({"n": n}), "id": f"fc_{n}", "status": "completed"},
        {"type": "function_call_output", "call_id": f"call_{n}", "output": f"{n} {PAD}"},
    ]  # fmt: skip
    r = client.post(f"/v1/conversations/{cid}/messages", json={"format": "responses",
                                                               "items": items})  # fmt: skip
    assert r.status_code == 201, r.text


def _responses_read(client: Any, cid: str) -> dict[str, Any]:
    r = client.get(
        f"/v1/conversations/{cid}/context", params={"model": "gpt-5.6", "format": "responses"}
    )
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = json.loads(r.text)
    check(answer)
    return answer


def _reasoning_ids(answer: dict[str, Any]) -> list[str]:
    return [i["id"] for i in answer["input"] if i.get("type") == "reasoning"]


def test_a_changed_system_prompt_leaves_out_a_bound_loops_reasoning_once(
    app_client: Any,
) -> None:
    """gpt-5.6 in `format=responses`: the loop's answers only grow; a system prompt
    changed mid-loop leaves out every reasoning item before it (a warning names the
    cause), for good; the steps after it keep theirs."""
    cid = _conv(app_client, "gpt-5.6")
    r = app_client.post(
        f"/v1/conversations/{cid}/messages", json={"role": "user", "content": "Fix the bug."}
    )
    assert r.status_code == 201, r.text
    answers = [_responses_read(app_client, cid)]
    for n in (1, 2, 3):
        _responses_step(app_client, cid, n)
        answers.append(_responses_read(app_client, cid))
    for earlier, later in itertools.pairwise(answers):
        strip = [i for i in earlier["input"] if i.get("type") != "reasoning"]
        grown = [i for i in later["input"] if i.get("type") != "reasoning"]
        assert grown[: len(strip)] == strip and later["instructions"] == earlier["instructions"]
    assert _reasoning_ids(answers[-1]) == ["rs_1", "rs_2", "rs_3"]
    r = app_client.patch(f"/v1/conversations/{cid}", json={"system_prompt": "Be terse."})
    assert r.status_code == 200, r.text
    _responses_step(app_client, cid, 4)
    changed = _responses_read(app_client, cid)
    assert _reasoning_ids(changed) == [] and changed["reasoning_dropped"]["prefix_changed"] == 4
    assert any(w.startswith("the system prompt or tools changed: thinking of 4 earlier steps")
               for w in changed["warnings"])  # fmt: skip
    _responses_step(app_client, cid, 5)
    after = _responses_read(app_client, cid)
    assert _reasoning_ids(after) == ["rs_5"]  # bound to the new prefix; the others gone


@pytest.mark.parametrize("prompts", [True, False])
def test_a_new_user_turn_moves_what_the_turn_pinned(app_client: Any, prompts: bool) -> None:
    """With a custom agent prompt and reminders, a new user turn moves them
    (docs/history.md#the-ready-to-send-context): the turn before loses its thinking, said with its
    cause; with neither, nothing before the new turn changed and every step's thinking stays."""
    fields = {} if prompts else {"custom_agent_prompt": None, "reminders": None}
    cid = _conv(app_client, BOUND, **fields)
    _loop(app_client, cid, BOUND, 2)
    _native(app_client, cid, [{"role": "user", "content": [{"type": "text", "text": "Next."}]}])
    answer = _read(app_client, cid, BOUND)
    _step(app_client, cid, 3)
    later = _read(app_client, cid, BOUND)
    if prompts:
        assert answer["reasoning_dropped"]["prefix_changed"] == 2
        assert any(w.startswith("a new user turn moved") for w in answer["warnings"])
        assert [s for s, _ in _sent(later)] == [f"{SIG}3"]
    else:
        assert answer["reasoning_dropped"]["prefix_changed"] == 0
        assert [s for s, _ in _sent(later)] == [f"{SIG}{n}" for n in (1, 2, 3)]
    _oracle_steps(later)


def _oracle_steps(answer: dict[str, Any]) -> None:
    """Every block sent is one of the loop's steps (no block twice)."""
    names = [s for s, _ in _sent(answer)]
    assert len(names) == len(set(names))
