"""The promises of docs/context.md#reasoning-state, each a small named function (the rules a
trimmer keeps: /work/shared/research/reasoning-state.md §6, §7).

"Same vendor" is a row whose native format is the answer's (design 26 §3: a payload
renders verbatim only into its own wire format); the current tool loop is what follows
the newest user message (docs/history.md#the-ready-to-send-context, `Facts.loop_seq`); the target
model's rule (keeps earlier turns' reasoning, binds it to its prefix) is the catalogue's
(`contextq.reasoning_rules.rule_for`). A row counts as sent when the answer holds it
(`Facts.present`): a row left out, covered by a compaction or outside the window read
takes its reasoning with it, and is not counted in `reasoning_dropped`.
"""

from __future__ import annotations

import re
from typing import Any

from contextq.reasoning_rules import rule_for
from tests.engine.assembly.harness.facts import Facts
from tests.engine.assembly.harness.reasoning import (
    DUMMY_SIGNATURE,
    RESPONSE_KEYS,
    dumps,
    is_call,
    is_pure_reasoning,
    is_reasoning,
    nodes_of,
    responses_followers,
    signature_of,
    units,
)
from tests.engine.assembly.harness.vendor_turns import LETTER, OPAQUE, REASONING
from tests.support.recount import recount_reasoning

DROPPED_KEYS = ("other_vendor", "earlier_turns", "prefix_changed")


def _wire(answer: dict[str, Any]) -> dict[str, Any]:
    keys = ("messages", "system", "input", "instructions", "contents", "system_instruction")
    return {k: answer[k] for k in keys if k in answer}


def reasoning_verbatim(f: Facts) -> list[str]:
    """Same-vendor reasoning is sent as stored: each block, item or part sent is one of
    its row's, byte for byte, in its stored order, none merged, split or edited; the
    row's other nodes (calls, opaque state) likewise (a text may be shown shorter, a
    Gemini step's first call may gain the dummy); no reasoning that is no row's."""
    fmt = f.answer["format"]
    problems: list[str] = []
    by_seq = {m.seq: m for m in f.read.history}
    for seq, nodes in f.owned.items():
        m = by_seq.get(seq)
        if m is not None and m.role == "assistant" and f.own_vendor(m):
            problems += [f"m{seq}: {p}" for p in f.walked[seq].problems]
            continue
        made = [n for n in nodes if is_reasoning(fmt, n) and signature_of(n) != DUMMY_SIGNATURE]
        if made:
            where = f"m{seq}" if m is not None else "no stored row"
            problems.append(f"{len(made)} reasoning nodes sent for {where}, which stored none")
    return problems


def current_loop_reasoning_sent(f: Facts) -> list[str]:
    """The current tool loop's same-vendor reasoning is always sent with its row, but
    for the binding rule (a target that binds reasoning to its prefix leaves out what
    follows a changed prefix, counted in `prefix_changed`). A row left out whole (the
    newest turn not fitting even as previews, docs/context.md#the-newest-turn / docs/harness.md (h))
    takes its reasoning with it."""
    rule = rule_for(f.answer["model"] or None)
    allowed = _dropped(f).get("prefix_changed", 0) if rule.binds else 0
    cut = f.cut_in_sent_loop  # a preview stays as cut (docs/harness.md (l))
    left = {
        seq: w.left
        for seq, w in f.walked.items()
        if seq >= f.loop_seq and w.left and seq not in cut
    }
    if sum(left.values()) <= allowed:
        return []
    rows = ", ".join(f"m{s} ({n})" for s, n in sorted(left.items()))
    return [f"the current tool loop's reasoning left out of {rows} (prefix_changed {allowed})"]


def _dropped(f: Facts) -> dict[str, int]:
    dropped = f.answer.get("reasoning_dropped")
    return dropped if isinstance(dropped, dict) else {}


def no_foreign_opaque_state(f: Facts) -> list[str]:
    """No opaque state of another vendor in an answer (thinking, redacted thinking,
    reasoning items, signatures, encrypted content: none at all in format=openai), and
    no reasoning or opaque value carried as visible text."""
    own = LETTER.get(f.answer["format"])
    text = dumps(_wire(f.answer))
    foreign = sorted(
        {t.group(0) for p in (OPAQUE, REASONING) for t in p.finditer(text) if t.group(1) != own}
    )
    problems = []
    if foreign:
        problems.append(
            f"{len(foreign)} opaque or reasoning values of another vendor: {foreign[:4]}"
        )
    shown = sorted(
        {
            t.group(0)
            for s in visible_texts(f.answer)
            for p in (OPAQUE, REASONING)
            for t in p.finditer(s)
        }
    )
    if shown:
        problems.append(f"reasoning or opaque state as visible text: {shown[:4]}")
    return problems


def visible_texts(answer: dict[str, Any]) -> list[str]:
    """Every text an answer shows (not reasoning, not opaque fields)."""
    fmt = answer["format"]
    out: list[str] = []

    def content(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
            return
        for part in value or ():
            if not isinstance(part, dict) or is_pure_reasoning(fmt, part):
                continue
            if isinstance(part.get("text"), str) and part.get("type", "text") in TEXT_TYPES:
                out.append(part["text"])
            if "content" in part and part.get("type") == "tool_result":
                content(part["content"])

    if fmt == "gemini":
        for c in [answer["system_instruction"] or {"parts": []}, *answer["contents"]]:
            content(c["parts"])
            for part in c["parts"]:
                response = next(
                    (part[k] for k in RESPONSE_KEYS if isinstance(part.get(k), dict)), None
                )
                if response is not None:
                    out.append(dumps(response.get("response")))
        return out
    if fmt == "responses":
        out.append(answer["instructions"] or "")
        for item in answer["input"]:
            if item.get("type", "message") == "message":
                content(item.get("content"))
            elif item.get("type") == "function_call_output":
                content(item.get("output"))
        return out
    for block in answer.get("system") or ():
        content([block])
    for m in answer["messages"]:
        content(m.get("content"))
    return out


TEXT_TYPES = ("text", "input_text", "output_text")


def reasoning_items_adjacent(f: Facts) -> list[str]:
    """No orphaned reasoning item (Responses): each `reasoning` item sent is directly
    followed by the item that followed it when stored (the API refuses "a reasoning
    item without its following item", and a call without its reasoning item)."""
    if f.answer["format"] != "responses":
        return []
    followers: dict[str, Any] = {}
    for m in f.visible:
        if f.own_vendor(m) and m.native is not None:
            followers.update(responses_followers(nodes_of("responses", m.native.payload)))
    items = f.answer["input"]
    problems = []
    for i, item in enumerate(items):
        if item.get("type") != "reasoning" or dumps(item) not in followers:
            continue
        want = followers[dumps(item)]
        got = items[i + 1] if i + 1 < len(items) else None
        if got is None or not _same_item(want, got):
            shown = "the end" if got is None else str(got.get("id") or got.get("type"))
            wanted = want.get("id") or want.get("type")
            problems.append(f"input[{i}] {item.get('id')} is followed by {shown}, not {wanted}")
    return problems


def _same_item(want: dict[str, Any], got: dict[str, Any]) -> bool:
    """The same item: by its id when it has one (a message shown shorter keeps it)."""
    if want.get("id") is not None:
        return bool(got.get("id") == want["id"] and got.get("type") == want.get("type"))
    return dumps(want) == dumps(got)


def gemini_signatures(f: Facts) -> list[str]:
    """format=gemini: the first functionCall part of each model step of the current
    turn carries a thoughtSignature (its own or Google's dummy); the dummy is on no
    other part (docs/context.md#reasoning-state). An earlier step's first call may carry the dummy
    too when it has no signature of its own as sent (Gemini validates only the current turn; the
    dummy keeps the prefix byte-stable when the turn ends: finding F2's ruling)."""
    if f.answer["format"] != "gemini":
        return []
    contents = f.answer["contents"]
    start, _ = _turn_start(f, contents)
    problems = []
    for i, c in enumerate(contents):
        if c.get("role") != "model":
            continue
        calls = [p for p in c["parts"] if is_call(p)]
        if i > start and calls and signature_of(calls[0]) is None:
            problems.append(f"contents[{i}]: the step's first functionCall has no thoughtSignature")
        dummies = [p for p in c["parts"] if signature_of(p) == DUMMY_SIGNATURE]
        wrong = [p for p in dummies if not calls or p is not calls[0]]
        if wrong:
            problems.append(f"contents[{i}]: the dummy signature on {len(wrong)} other parts")
    return problems


def _turn_start(f: Facts, contents: list[dict[str, Any]]) -> tuple[int, bool]:
    """The content holding the newest user message (-1 when there is none: the whole
    list is the current turn), and whether it was found; when it is not sent, the last
    user content with more than function responses (the API's own rule)."""
    if f.loop_seq == 0:
        return -1, True
    tag = f"[#m{f.loop_seq}]"
    named = re.compile(rf"as message m{f.loop_seq}\b")
    for i, c in enumerate(contents):
        for part in c["parts"]:
            text = part.get("text")
            if isinstance(text, str) and (text.startswith(tag) or named.search(text)):
                return i, True
    for i in range(len(contents) - 1, -1, -1):
        c = contents[i]
        if c.get("role") == "user" and any(
            not any(k in p for k in RESPONSE_KEYS) for p in c["parts"]
        ):
            return i, False
    return -1, False


def reasoning_dropped_counted(f: Facts) -> list[str]:
    """`reasoning_dropped` counts, of the rows sent, the reasoning units left out:
    another vendor's (all of them: none can be sent, docs/context.md#reasoning-state), earlier
    turns' when the target model strips them (then none of it is sent), and, for a target that binds
    reasoning to its prefix, the rest; a model that keeps earlier reasoning and binds
    none gets all of its own vendor's."""
    dropped = _dropped(f)
    problems = []
    if sorted(dropped) != sorted(DROPPED_KEYS) or any(
        not isinstance(v, int) or v < 0 for v in dropped.values()
    ):
        return [f"reasoning_dropped is {f.answer.get('reasoning_dropped')!r}"]
    rule = rule_for(f.answer["model"] or None)
    want = dict.fromkeys(DROPPED_KEYS, 0)
    fmt = f.answer["format"]
    for m in f.visible:
        total = units(m.native.format, m.native.payload) if m.native is not None else 0
        if not total or not f.present(m):
            continue
        if not f.own_vendor(m):
            want["other_vendor"] += total
            continue
        walked = f.walked.get(m.seq)
        left = walked.left if walked is not None else total
        if (m.seq < f.loop_seq or m.seq in f.cut_in_sent_loop) and not rule.keeps_earlier:
            want["earlier_turns"] += left
            if left < total and m.seq < f.loop_may_seq:
                problems.append(
                    f"m{m.seq}: earlier-turn reasoning sent to {f.answer['model']}, which strips it"
                )
        else:
            want["prefix_changed"] += left
    if not rule.binds and want["prefix_changed"]:
        problems.append(
            f"{want['prefix_changed']} reasoning units left out that must be sent to "
            f"{f.answer['model']} (it binds none to a prefix; format={fmt})"
        )
        want["prefix_changed"] = 0
    for key in DROPPED_KEYS:
        if dropped[key] != want[key]:
            problems.append(
                f"reasoning_dropped.{key} {dropped[key]}, the rows sent leave out {want[key]}"
            )
    return problems


def reasoning_tokens_counted(f: Facts) -> list[str]:
    """`token_breakdown.reasoning` is the reasoning sent, counted as the recount counts
    it (`tests.support.recount.recount_reasoning`, the API tests' too: thinking and
    redacted blocks, reasoning items, thought parts whole; of a part carrying its own
    signature, what the signature adds; docs/context.md#reasoning-state). The breakdown's sum is
    `token_breakdown_sums`'."""
    got = f.answer["token_breakdown"].get("reasoning")
    want = recount_reasoning(f.answer)
    if got == want:
        return []
    return [f"token_breakdown.reasoning {got}, the reasoning sent counts {want}"]


REASONING_INVARIANTS = (
    reasoning_verbatim,
    current_loop_reasoning_sent,
    no_foreign_opaque_state,
    reasoning_items_adjacent,
    gemini_signatures,
    reasoning_dropped_counted,
    reasoning_tokens_counted,
)
