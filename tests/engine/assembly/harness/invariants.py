"""The promises of docs/token-counting.md, docs/history.md#history-strategies, docs/context.md and
docs/workspaces.md, each a small named function.

An invariant takes the `Facts` of one answer (and, for the prefix, the answer before it)
and returns what it found broken: a list of sentences, empty when the promise held.
`INVARIANTS` lists them in the order a report prints them; the file promises are in
`file_checks`, the prefix in `prefix`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from contextq.assembly.bound import DEFERRED
from contextq.assembly.tool_results import result_path
from contextq.history import Message
from contextq.history.chains import unit_at
from contextq.reasoning_rules import rule_for
from tests.engine.assembly.harness.binding_checks import BINDING_INVARIANTS
from tests.engine.assembly.harness.facts import Facts, newest_user
from tests.engine.assembly.harness.file_checks import (
    document_upper_cost,
    files_accounted,
    format_slack,
    newest_files_first,
)
from tests.engine.assembly.harness.oracle import (
    answer_tokens,
    shape_overhead,
    wire_list,
)
from tests.engine.assembly.harness.prefix import prefix_between_cuts
from tests.engine.assembly.harness.reasoning import non_text_nodes
from tests.engine.assembly.harness.reasoning_checks import REASONING_INVARIANTS
from tests.engine.assembly.harness.shape_checks import sdk_valid, tool_calls_paired

STUB_START = "[Old tool result cleared"
MEDIA_LINE_TOKENS = 80  # at most, the line naming an image or audio file not sent as a part
DUMMY_SIGNATURE_TOKENS = 40  # at most, Gemini's dummy thoughtSignature with its key
STUB_MIN_CHARS = 200  # shorter results are not worth a stub (the stub is about as long)
PATH = re.compile(r"/workspace/(tool-results/[A-Za-z0-9_-]+\.[a-z]+)")

__all__ = [
    "INVARIANTS",
    "Facts",
    "Invariant",
    "files_accounted",
    "newest_files_first",
    "prefix_between_cuts",
    "sdk_valid",
    "tool_calls_paired",
]


Invariant = Callable[[Facts], list[str]]

# ---------------------------------------------------------------- counts


def token_count_recount(f: Facts) -> list[str]:
    """`token_count` is the JSON of the list as sent, nothing added (docs/token-counting.md)."""
    reported, counted = f.answer["token_count"], f.recount
    if reported == counted:
        return []
    n = len(wire_list(f.answer))
    framing = " (+3 per message and +3 priming: docs/token-counting.md adds neither)"
    why = framing if reported - counted == 3 * n + 3 else ""
    return [f"token_count {reported} != recount {counted} ({reported - counted:+d}){why}"]


def token_breakdown_sums(f: Facts) -> list[str]:
    """`token_breakdown` has the eight parts of docs/history.md#the-answer, none negative, summing
    to token_count."""
    breakdown = f.answer["token_breakdown"]
    keys = {
        "system",
        "custom_agent",
        "summary",
        "project",
        "files",
        "history",
        "reasoning",
        "reminders",
    }
    problems = []
    if set(breakdown) != keys:
        problems.append(f"token_breakdown keys {sorted(breakdown)}")
    if any(v < 0 for v in breakdown.values()):
        problems.append(f"a negative part: {breakdown}")
    if sum(breakdown.values()) != f.answer["token_count"]:
        problems.append(f"sums to {sum(breakdown.values())}, token_count {f.answer['token_count']}")
    return problems


def budget_as_specified(f: Facts) -> list[str]:
    """`budget_tokens` is the formula of docs/context.md#the-rooms for the model and options."""
    if f.answer["budget_tokens"] != f.limits.budget:
        return [f"budget_tokens {f.answer['budget_tokens']}, the formula gives {f.limits.budget}"]
    return []


def within_budget(f: Facts) -> list[str]:
    """Once filtering ran, the list as sent fits budget_tokens, except when the pinned
    messages alone exceed it (then only they and S are sent), and inside a tool loop on
    a target that binds its reasoning, whose cut waits for the next user turn while the
    hard room allows (docs/context.md#bound-reasoning: said in a warning; the hard room
    is `within_hard_room`'s)."""
    if not f.answer["filtered"] or f.recount <= f.limits.budget or f.pinned_only:
        return []
    if rule_for(f.answer["model"] or None).binds and any(
        w.startswith(DEFERRED) for w in f.answer["warnings"]
    ):
        return []
    return [f"filtered, {f.recount} tokens as sent > budget {f.limits.budget}"]


def within_hard_room(f: Facts) -> list[str]:
    """Never above the hard room (context - max output - tool definitions)."""
    if f.recount <= f.limits.hard:
        return []
    return [f"{f.recount} tokens as sent > hard room {f.limits.hard}"]


# ---------------------------------------------------------------- what must be there


def system_verbatim(f: Facts) -> list[str]:
    """S starts with the conversation's prompt; the history's system messages are there
    as they were written."""
    prompts = f.read.case.prompts
    base = prompts.custom_agent_prompt if prompts.replace_system_prompt else None
    base = base or prompts.system_prompt or prompts.owner_system_prompt
    problems = []
    if base and not (f.sent.system and f.sent.system[0].startswith(base.strip())):
        problems.append("the system prompt is not the conversation's, verbatim")
    for m in f.visible:
        if m.role == "system" and f.sent.text(m.seq) != m.text():
            problems.append(f"history system message {m.id} is not sent verbatim")
    return problems


def _whole_cost(f: Facts, m: Message) -> int:
    """An upper bound of what message m costs sent whole (its files aside): its Chat
    JSON in the answer's shape, or, for a native row of the answer's format, its
    payload (reasoning and opaque state included; each node counted apart costs a few
    tokens more than the whole JSON, and a Gemini step may gain the dummy signature)."""
    if f.own_vendor(m) and m.native is not None:
        payload = m.native.payload
        nodes = (
            payload if isinstance(payload, list) else payload.get("content") or payload.get("parts")
        )
        count = len(nodes) if isinstance(nodes, list) else 1
        return answer_tokens(f.answer, payload) + 4 * count + DUMMY_SIGNATURE_TOKENS
    return answer_tokens(f.answer, m.to_openai()) + shape_overhead(f.answer)


def _upper_cost(f: Facts, m: Message) -> int:
    """An upper bound of what message m costs as sent, its files included."""
    cost = _whole_cost(f, m) + 40
    for file_id in m.file_ids:
        view = f.read.case.files.get(file_id)
        if view is not None and view.category in ("image", "audio"):
            cost += 6_000
        elif view is not None and view.text:
            cost += document_upper_cost(f, view)
    return cost


def _offloaded(f: Facts, m: Message) -> bool:
    """A large tool result stands as its preview naming its path
    (docs/workspaces.md#large-tool-results), pinned or not
    (whether a pinned one should be whole is a question for the SPEC: FINDINGS.md)."""
    view = f.read.views.get(str(m.id))
    text = f.sent.result(m) or ""
    return view is not None and f"/workspace/{view.path}" in text


def _pinned_units(f: Facts) -> list[list[Message]]:
    """Each pinned message with its chain, oldest first (a pinned system message is not
    one: the history's system messages go with S, never cut, docs/context.md#pinned-messages)."""
    history = f.visible
    units: list[list[Message]] = []
    seen: set[int] = set()
    for i, m in enumerate(history):
        if m.pinned and m.role != "system" and m.seq not in seen:
            unit = [history[j] for j in unit_at(history, i).members or (i,)]
            seen.update(x.seq for x in unit)
            units.append(unit)
    return units


def pinned_verbatim(f: Facts) -> list[str]:
    """Pinned messages (with their chains) are sent verbatim while S and the pinned
    messages fit the hard room (docs/context.md#pinned-messages). When they do not, they are cut
    from the
    oldest, one unit at a time, each named in a warning (docs/context.md#pinned-messages: the
    warning naming them: the pinned messages; their chains go with them), and the newest pinned unit
    is never cut: should it alone not fit next to S, its largest message is shown as a
    preview (docs/context.md). A large tool result stands as its preview naming its
    path, pinned or not (docs/workspaces.md#large-tool-results; docs/harness.md, decision (e))."""
    units = _pinned_units(f)
    if not units:
        return []
    hard = f.limits.hard
    system = sum(answer_tokens(f.answer, s) for s in f.sent.system) + 50
    fits = system + sum(_upper_cost(f, m) for m in f.pinned) <= hard
    newest_alone = system + sum(_upper_cost(f, m) for m in units[-1]) <= hard
    problems = []
    for unit in units:
        newest = unit is units[-1]
        for m in unit:
            if not f.present(m) or f.verbatim(m) or _offloaded(f, m):
                continue
            if fits or not newest or newest_alone:
                problems.append(f"pinned {m.role} {m.id} is sent altered (a preview or a cut)")
    absent = [u for u in units if not any(f.present(m) for m in u)]
    if not absent:
        return problems
    ids = [str(m.id) for u in absent for m in u if m.pinned]
    if fits:
        problems.append(f"pinned {ids} left out although S and the pinned fit the hard room")
    if units[-1] in absent:
        problems.append(f"the newest pinned {units[-1][-1].id} is left out (it never is)")
    warnings = " ".join(f.answer.get("warnings") or ())
    unnamed = [i for i in ids if i not in warnings]
    if unnamed:
        problems.append(f"pinned {unnamed} left out without a warning naming them")
    # the newest turn's pinned messages are taken first (docs/context.md#the-newest-turn)
    turn = _turn_seqs(f)
    newest_absent = max(units.index(u) for u in absent)
    if any(u not in absent and not turn & {m.seq for m in u} for u in units[:newest_absent]):
        problems.append("pinned messages left out are not the oldest")
    return problems


def _turn_seqs(f: Facts) -> set[int]:
    """The newest user message and the newest unit (a message, or a call with its
    results): the newest turn, taken first (docs/context.md#the-newest-turn)."""
    history = f.visible
    if not history:
        return set()
    u = newest_user(history)
    unit = unit_at(history, len(history) - 1)
    return {history[i].seq for i in unit.members or (len(history) - 1,)} | (
        {u.seq} if u is not None else set()
    )


def newest_present(f: Facts) -> list[str]:
    """The newest user message and the newest message are in the answer (whole or as a
    preview), except when only S and the pinned messages could be sent
    (docs/context.md#pinned-messages:
    decision (g)), or when the newest turn at its smallest does not fit the room next
    to what docs/context.md#what-is-taken-first takes before it (S, R, CA; pinned messages are never
    dropped): then its non-pinned messages are left out, named in a warning (decision (h))."""
    history = f.read.history
    wanted = [m for m in (newest_user(history), history[-1] if history else None) if m]
    if f.pinned_only:
        wanted = [m for m in wanted if m.pinned]
    missing = [m for m in wanted if not f.present(m)]
    if not missing:
        return []
    return _turn_gave_way(f, missing)


def _turn_gave_way(f: Facts, missing: list[Message]) -> list[str]:
    """Problems unless the newest turn was left out because even its smallest previews
    did not fit: the warning names it, and it would not fit the room left plus what the
    history sent in its stead takes."""
    said = [f"the newest {m.role} message {m.id} is missing" for m in missing]
    warnings = " ".join(f.answer["warnings"])
    if "even as previews" not in warnings or any(str(m.id) not in warnings for m in missing):
        return said
    history = f.visible
    u = newest_user(history)
    turn = [m for m in history if u is not None and m.seq >= u.seq and not f.present(m)]
    pinned = {m.seq for m in f.pinned}
    instead = [
        m
        for m in history
        if f.present(m)
        and m.seq not in pinned
        and m.role != "system"
        and m not in turn
        and (u is None or m.seq < u.seq)
    ]
    freed = sum(answer_tokens(f.answer, _sent_text(f, m)) for m in instead)
    limit = f.limits.budget if f.answer["filtered"] else f.limits.hard
    room = limit - f.recount + freed - format_slack(f)
    needed = sum(_smallest(f, m) for m in turn)
    if needed <= room:
        return [f"{s}: the newest turn needs at least {needed} of {room} tokens" for s in said]
    return []


def _sent_text(f: Facts, m: Message) -> str:
    return (f.sent.result(m) if m.role == "tool" else f.sent.text(m.seq)) or ""


def _smallest(f: Facts, m: Message) -> int:
    """An upper bound of message m's smallest form as sent: whole, or the preview with
    no body (a tool result's line naming its path, another message's note naming it);
    a tool call keeps its call and text."""
    whole = _whole_cost(f, m)
    if m.role == "tool":
        line = (
            "[A tool result (99,999,999 tokens, 999,999,999 bytes) not shown here for lack "
            f"of room. The full result is at /workspace/{result_path(m)}.]"
        )
        node = {"role": "tool", "tool_call_id": m.tool_call_id, "content": line}
    elif m.tool_calls:
        return whole
    else:
        note = (
            "[This message (99,999,999 tokens) is not shown here for lack of room; the "
            f"whole message is in this conversation's history as message {m.id}.]"
        )
        node = {"role": m.role, "content": note}
    # an image or audio file the model or format cannot take stays a text line in it
    media = [x for x in m.file_ids if f.read.case.files[x].category in ("image", "audio")]
    note_cost = answer_tokens(f.answer, node) + 4 + shape_overhead(f.answer)
    note_cost += _kept_in_preview(f, m)
    return min(whole, note_cost) + MEDIA_LINE_TOKENS * len(media)


def _kept_in_preview(f: Facts, m: Message) -> int:
    """What a native row of the answer's format keeps when shown shorter: every node but
    its text (reasoning, calls, opaque state), at most its nodes' own costs."""
    if not f.own_vendor(m) or m.native is None or m.role == "tool":
        return 0
    return sum(
        answer_tokens(f.answer, n) + 4 for n in non_text_nodes(m.native.format, m.native.payload)
    )


def tool_results_name_their_path(f: Facts) -> list[str]:
    """A tool result sent as a preview or a stub names where its whole result is."""
    problems = []
    for m in f.visible:
        text = f.sent.result(m) if m.role == "tool" else None
        if text is None or text == f.whole_result(m):
            continue
        if f"/workspace/{result_path(m)}" not in text:
            shown = text[:60] + ("…" if len(text) > 60 else "")
            problems.append(f"tool result {m.id} sent altered without its path: {shown!r}")
    return problems


def stub_paths_exist(f: Facts) -> list[str]:
    """Every workspace path the answer names exists when the answer is returned."""
    texts = [t for ts in (*f.sent.results.values(), *f.sent.texts.values()) for t in ts]
    named = {p for t in texts for p in PATH.findall(t)}
    missing = sorted(named - f.read.workspace)
    return [f"{len(missing)} named paths do not exist yet: {missing[:5]}"] if missing else []


# ---------------------------------------------------------------- clearing


def clearing_before_dropping(f: Facts) -> list[str]:
    """Old tool results are cleared before any message is dropped
    (docs/context.md#clearing-old-tool-results-with-hysteresis), with
    hysteresis: an answer that leaves history out and moves the cut point or the
    clearing line sends as stubs every result older than the newest
    `keep_tool_results` (but pinned chains, the newest unit and results shorter than a
    stub); between moves, the line stays put and new results accumulate whole
    (docs/context.md#clearing-old-tool-results-with-hysteresis:
    then it stays put): the results below the carried line are stubs. Not asked of a
    forced filter below the threshold (docs/context.md#clearing-old-tool-results-with-hysteresis
    ties clearing to usage over it: decision (f))."""
    history = f.visible
    # cut for the hard room by their own size (docs/context.md#pinned-messages)
    pinned = {m.seq for m in f.pinned}
    dropped = [m for m in history if not f.present(m) and m.seq not in pinned]
    case = f.read.case
    threshold = case.threshold if case.threshold is not None else 0.8
    if not dropped or f.pinned_only or (case.force_filter and f.answer["usage_before"] < threshold):
        return []
    keep = int(f.read.case.options.get("keep_tool_results", 5))
    results = [i for i, m in enumerate(history) if m.role == "tool"]
    old = results[: max(0, len(results) - keep)]
    line = f.read.carried.clear_seq
    if not f.read.moved:  # between moves: what the carried line clears
        old = [i for i in old if line is not None and history[i].seq < line]
    newest = set(unit_at(history, len(history) - 1).members)
    whole = []
    for i in old:
        m = history[i]
        text = f.sent.result(m)
        if i in newest or m.seq in pinned or text is None or len(m.text()) <= STUB_MIN_CHARS:
            continue
        if not text.startswith(STUB_START):
            whole.append(str(m.id))
    if whole:
        when = "moving the cut point or the line" if f.read.moved else f"below the line {line}"
        return [
            f"{len(dropped)} messages left out while old tool results {whole[:5]} were "
            f"sent uncleared ({len(whole)} in all; {when})"
        ]
    return []


INVARIANTS: tuple[Invariant, ...] = (
    sdk_valid,
    tool_calls_paired,
    token_count_recount,
    token_breakdown_sums,
    budget_as_specified,
    within_budget,
    within_hard_room,
    system_verbatim,
    pinned_verbatim,
    newest_present,
    tool_results_name_their_path,
    stub_paths_exist,
    files_accounted,
    newest_files_first,
    clearing_before_dropping,
    prefix_between_cuts,
    *REASONING_INVARIANTS,
    *BINDING_INVARIANTS,
)
