"""The prefix promise (docs/context.md#the-cut-point-and-a-prefix-that-stays-put): between cuts,
everything one answer holds before its newest turn starts the next answer byte for byte."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from contextq.reasoning_rules import rule_for
from tests.engine.assembly.harness.canonical import FIELDS, is_reasoning_node, strip
from tests.engine.assembly.harness.engine import Read
from tests.engine.assembly.harness.facts import Facts, newest_user
from tests.engine.assembly.harness.sent import text_of

CITATIONS_TITLE = "## Citations"
# the warning of a context cut for the hard room without filtering
# (docs/history.md#history-strategies: below the
# threshold nothing is filtered, but the assembled context never exceeds the model's
# hard room): the prefix promise is filtering's ("when filtering must drop messages,
# it cuts with hysteresis"), docs/harness.md decision (a)
HARD_ROOM_CUT = "without filtering: the oldest history was left out"
SUMMARY_CUT = "the compaction summary"
PINNED_CUT = "the pinned messages do not fit the model's room"


def _strip(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]


def stable_part(read: Read) -> list[Any] | None:
    """What an answer holds before its newest turn (None when it cannot be told)."""
    answer = read.answer
    if answer["format"] == "anthropic":
        if not _anthropic_sends_newest_user(read):
            # its newest turn left out (docs/harness.md decision (h)): what it holds of the
            # history is the turn's own, not a part before it (seed 32624)
            return None
        out: list[Any] = [_strip(answer.get("system") or [])]
        for m in answer["messages"]:
            marked = [i for i, b in enumerate(m["content"]) if "cache_control" in b]
            if marked:
                out.append({"role": m["role"], "content": _strip(m["content"][: marked[0] + 1])})
                return out
            out.append({"role": m["role"], "content": _strip(m["content"])})
        return out[:1]
    if answer["format"] == "gemini":
        return _gemini_stable(read)
    u = newest_user(read.history)
    responses = answer["format"] == "responses"
    messages = answer["input"] if responses else answer["messages"]
    if u is None:
        return None
    found = [i for i, m in enumerate(messages) if _first_text(m).startswith(f"[#m{u.seq}]")]
    if not found:
        return None
    start = found[0]
    ca = read.case.prompts.custom_agent_prompt
    while start > 0:
        text = _first_text(messages[start - 1])
        if messages[start - 1].get("role") != "user" or text.startswith("[#m"):
            break
        if not (text == ca or '{"documents": [' in text or text.startswith("Project")):
            break
        start -= 1
    return [answer["instructions"], *messages[:start]] if responses else messages[:start]


def _anthropic_sends_newest_user(read: Read) -> bool:
    u = newest_user(read.history)
    if u is None:
        return True
    tag = f"[#m{u.seq}]"
    for m in read.answer["messages"]:
        if m["role"] != "user":
            continue
        content = m["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if any(b.get("type") == "text" and str(b.get("text", "")).startswith(tag) for b in blocks):
            return True
    return False


def _moving(read: Read, text: str) -> bool:
    """A part of the newest turn that stands before its user message: CA, P, F."""
    ca = read.case.prompts.custom_agent_prompt
    return text == ca or '{"documents": [' in text or text.startswith("Project")


def _gemini_stable(read: Read) -> list[Any] | None:
    """Gemini: the system parts, the contents before the newest turn and, of the content
    it starts in (consecutive user pieces merge), the parts before it."""
    answer = read.answer
    u = newest_user(read.history)
    if u is None:
        return None
    contents = answer["contents"]
    found = [
        (i, j)
        for i, c in enumerate(contents)
        for j, p in enumerate(c["parts"])
        if str(p.get("text", "")).startswith(f"[#m{u.seq}]")
    ]
    if not found:
        return None
    i, j = found[0]
    parts = contents[i]["parts"]
    while j > 0 and "text" in parts[j - 1] and _moving(read, str(parts[j - 1]["text"])):
        j -= 1
    system = (answer["system_instruction"] or {"parts": []})["parts"]
    head = [{"role": contents[i]["role"], "parts": parts[:j]}] if j else []
    return [system, *contents[:i], *head]


def _gemini_starts_with(answer: dict[str, Any], prefix: list[Any]) -> bool:
    if (answer["system_instruction"] or {"parts": []})["parts"] != prefix[0]:
        return False
    body = prefix[1:]
    if not body:
        return True
    current = answer["contents"][: len(body)]
    if len(current) < len(body) or current[:-1] != body[:-1]:
        return False
    last, want = current[-1], body[-1]
    return last["role"] == want["role"] and last["parts"][: len(want["parts"])] == want["parts"]


def _first_text(m: dict[str, Any]) -> str:
    content = m.get("content")
    if isinstance(content, str):
        return content
    for part in content or ():
        if part.get("type") in ("text", "input_text"):
            return str(part.get("text", ""))
    return ""


def _starts_with(read: Read, prefix: list[Any]) -> bool:
    answer = read.answer
    if answer["format"] == "responses":
        return [answer["instructions"], *answer["input"]][: len(prefix)] == prefix
    if answer["format"] == "gemini":
        return _gemini_starts_with(answer, prefix)
    if answer["format"] != "anthropic":
        return answer["messages"][: len(prefix)] == prefix
    if _strip(answer.get("system") or []) != prefix[0]:
        return False
    body = prefix[1:]
    current = answer["messages"][: len(body)]
    if len(current) < len(body):
        return False
    for got, want in zip(current[:-1], body[:-1], strict=True):
        if got["role"] != want["role"] or _strip(got["content"]) != want["content"]:
            return False
    if not body:
        return True
    last, want = current[-1], body[-1]
    return (
        last["role"] == want["role"]
        and _strip(last["content"])[: len(want["content"])] == (want["content"])
    )


def prefix_between_cuts(f: Facts) -> list[str]:
    """Between cuts (the stored cut point and clearing line unmoved), everything the
    previous answer held before its newest turn starts this answer byte for byte."""
    previous = f.previous
    if previous is None or f.read.moved or previous.answer.get("error") or f.answer.get("error"):
        return []
    if not (_promises_prefix(f) and _promises_prefix(Facts(previous))):
        # a window that slid (or a memory block rewritten) in either answer: nothing was
        # kept then (seed 76171: the previous answer left m3 out, this one takes it back)
        return []
    if f.pinned_only or Facts(previous).pinned_only:
        # the pinned-alone case (docs/context.md#pinned-messages) sends only S and the pinned
        # messages
        return []
    if previous.answer["filtered"] != f.answer["filtered"]:
        # filtering starts (or stops) here: its first answer cuts
        # (docs/context.md#the-cut-point-and-a-prefix-that-stays-put)
        return []
    if any(HARD_ROOM_CUT in w for r in (previous, f.read) for w in r.answer["warnings"]):
        return []  # the hard room's cut without filtering has no cut point: decision (a)
    if any(PINNED_CUT in w for r in (previous, f.read) for w in r.answer["warnings"]):
        # pinned messages over the hard room are cut anew (docs/context.md#pinned-messages):
        # decision (a)
        return []
    if _pinned_shrunk(Facts(previous)) or _pinned_shrunk(f):
        # the same cut's last step: the newest pinned unit shrunk to previews, sized by the
        # room each answer leaves it (docs/context.md#pinned-messages): decision (a)
        return []
    if _summary_cut(previous) != _summary_cut(f.read):
        # the summary is taken after the newest turn (docs/context.md#the-newest-turn): decision (b)
        return []
    searched = [CITATIONS_TITLE in " ".join(_system_texts(r)) for r in (previous, f.read)]
    if searched[0] != searched[1]:
        # S gains or loses its citations section with a search
        # (docs/history.md#the-ready-to-send-context)
        return []
    binds = rule_for(f.answer["model"] or None).binds
    lines = [set(r.answer["cleared_tool_result_ids"]) for r in (previous, f.read)]
    if lines[0] != lines[1] and _line_not_carried(f, binds=binds):
        # `noop` or a skipped filter carries no clearing line (but for a bound target,
        # finding F6): the hard room's clearing, like its cut, has no hysteresis
        # (decision (a); seed 90216)
        return []
    if f.answer["format"] in FIELDS and binds:
        # reasoning the binding rule leaves out changes the bytes, not the prefix: the
        # binding invariants judge it (docs/harness.md, the binding oracle)
        previous, read = _unreasoned(previous), _unreasoned(f.read)
    else:
        read = f.read
    prefix = stable_part(previous)
    if prefix is None or _starts_with(read, prefix):
        return []
    cleared = set(f.answer["cleared_tool_result_ids"]) - set(
        previous.answer["cleared_tool_result_ids"]
    )
    why = f"; {len(cleared)} more tool results cleared" if cleared else ""
    return [
        f"the previous answer's stable part ({len(prefix)} items) is not this answer's "
        f"start, with the cut point unmoved{why}"
    ]


def _line_not_carried(f: Facts, *, binds: bool) -> bool:
    """Whether no clearing line is carried to the next read (`fill.apply_carried_line`)."""
    return (f.answer["strategy"] == "noop" or f.read.case.skip_filter) and not binds


def _pinned_shrunk(f: Facts) -> bool:
    """Whether a pinned message (or a member of its chain) is sent shrunk: cut, or a
    large tool result's preview with a smaller body than its processors' preview. It
    happens only when the pinned messages do not fit the hard room
    (docs/context.md#pinned-messages: "then messages shrink to previews"; when they fit,
    `pinned_verbatim` reports any change)."""
    for m in f.pinned:
        if m.role == "system" or not f.present(m) or f.verbatim(m):
            continue
        view = f.read.views.get(str(m.id))
        text = f.sent.result(m) if m.role == "tool" else None
        if view is None or text is None or not text.startswith(view.preview.rstrip()):
            return True
    return False


def _summary_cut(read: Read) -> str | None:
    """The size a summary made for another model was cut to in this answer, if it was:
    stable from turn to turn (steps of the hard room, at most half of what S and the
    pinned messages leave) unless the newest turn leaves it less."""
    return next((w for w in read.answer["warnings"] if SUMMARY_CUT in w), None)


def _promises_prefix(f: Facts) -> bool:
    """The cut point with hysteresis is token_budget's (and the hard room's, which every
    strategy shares); a sliding window slides, and the hierarchical memory block, first
    in the history, changes with every action: they keep the prefix only while nothing
    is filtered out."""
    if f.answer["strategy"] == "hierarchical":
        return not f.answer["filtered"]
    if f.answer["strategy"] == "sliding_window":
        return not f.answer["removed_message_ids"]
    return True


def _system_texts(read: Read) -> list[str]:
    answer = read.answer
    if answer["format"] == "anthropic":
        return [b.get("text", "") for b in answer.get("system") or ()]
    if answer["format"] == "gemini":
        return [
            str(p.get("text", "")) for p in (answer["system_instruction"] or {"parts": []})["parts"]
        ]
    if answer["format"] == "responses":
        items = [i for i in answer["input"] if i.get("role") == "system"]
        return [answer["instructions"] or "", *(_first_text(i) for i in items)]
    return [text_of(m["content"]) for m in answer["messages"] if m["role"] == "system"]


def _unreasoned(read: Read) -> Read:
    """`read` with its answer's reasoning units taken out of the list (and, in Gemini,
    the signatures: the dummy stands in for one left out)."""
    answer = read.answer
    fmt = answer["format"]
    _, list_key, key = FIELDS[fmt]
    elements = answer.get(list_key) or []
    if key is None:
        kept = [e for e in elements if not is_reasoning_node(fmt, e)]
    else:
        kept = [
            {**e, key: [n for n in e[key] if not is_reasoning_node(fmt, n)]}
            if isinstance(e.get(key), list)
            else e
            for e in elements
        ]
    if fmt == "gemini":
        kept = [strip(e, fmt) for e in kept]
    return replace(read, answer={**answer, list_key: kept})
