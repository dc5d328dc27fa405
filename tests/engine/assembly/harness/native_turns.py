"""The reasoning dimension of a case: some of its turns posted as a vendor's own turns
(docs/api.md#native-turns, docs/context.md#reasoning-state), parsed by the real parser.

`nativise(case)` draws from its own generator (`random.Random(seed * 4 + 2)`), after the
case is drawn, so that a seed keeps the history it had before there were native turns:
the same messages, in the same order, with the same seqs, markers, texts, tool calls and
results; a turn given a vendor is posted in that vendor's shape instead
(`vendor_turns`: with the reasoning and opaque state only that vendor returns) and
becomes the rows `contextq.history.native.parse_native` (or `parse_default`, for
Anthropic blocks posted in the default form) makes of it: what the API stores. Turns
take one vendor throughout, runs of vendors switching (Claude → GPT → Claude …), or a
sprinkle among default-form turns; some user and system messages stay in the default
form (a user message with files always does: a native batch has none). A case may also
get a target model whose reasoning rule differs (keeps earlier turns' reasoning, strips
it, binds it, an unknown model), from the same generator.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from contextq.history import Message
from contextq.history.native import GEMINI_ID_PREFIX, CallBook, parse_default, parse_native
from tests.engine.assembly.harness.histories import effective_window
from tests.engine.assembly.harness.text import marker, sized_tokens, text_of
from tests.engine.assembly.harness.vendor_turns import Style, vendor_items

if TYPE_CHECKING:
    from tests.engine.assembly.harness.cases import Case

VENDORS = ("anthropic", "responses", "gemini")
INTERJECTION_SHARE = 0.35  # of the native cases ending on tool results
NATIVE_SHARE = 0.45  # of the cases: the others keep the default form only
# the model that produced a vendor's turns (a batch's `model`)
PRODUCERS = {
    "anthropic": ("claude-opus-4-7", "claude-sonnet-4-5", "claude-fable-5-1"),
    "responses": ("gpt-5", "gpt-5.6", "o3"),
    "gemini": ("gemini-3-pro-preview", "gemini-2.5-pro"),
}
# targets whose reasoning rules differ (contextq.reasoning_rules): keeps earlier turns
# (opus 4.5+, sonnet 4.6, gemini), strips them (sonnet 4.5, haiku 4.5, gpt-5, o3), keeps
# and binds (fable 5.1, gpt-5.6), unknown (the strict side: keeps and binds)
REASONING_MODELS = (
    ("claude-opus-4-5", 2),
    ("claude-sonnet-4-6", 1),
    ("claude-opus-4-7", 1),
    ("claude-sonnet-4-5", 2),
    ("claude-haiku-4-5", 1),
    ("claude-fable-5-1", 2),
    ("gpt-5", 2),
    ("o3", 1),
    ("gpt-5.6", 2),
    ("gemini-3-pro-preview", 2),
    ("gemini-2.5-pro", 1),
    ("acme-reasoner-2", 1),
)


@dataclass(slots=True)
class Drawn:
    """What the reasoning dimension made of a case (for `Case.describe`)."""

    vendors: list[str] = field(default_factory=list)  # per turn: a vendor or "default"
    model: str | None = None  # the target model it drew, if it drew one


# ---------------------------------------------------------------- a batch


def parse_batch(
    rng: random.Random,
    batch: list[Message],
    style: Style,
    model: str,
    stored: list[Message],
) -> list[Message]:
    """The rows the real parser makes of the batch posted in `style` after the `stored`
    rows (as the service posts it: the calls still open, and the Gemini call ids the
    conversation holds), each given the seq, id and pin of the message it stands for
    (one row per message, by construction)."""
    open_calls = _open_calls(stored)
    items = vendor_items(rng, batch, style, open_calls)
    if style.default_form:
        rows = parse_default(items, model=model, book=CallBook(dict(open_calls)))
    else:
        rows = parse_native(
            style.vendor,
            items,
            model=model,
            open_calls=dict(open_calls),
            stored_ids=lambda: _answered_ids(stored),
        )
    if len(rows) != len(batch) or any(r.role != m.role for r, m in zip(rows, batch, strict=True)):
        shape = [(r.role, m.role) for r, m in zip(rows, batch, strict=False)]
        raise AssertionError(f"a {style.vendor} batch parsed to other rows: {shape}")
    return [
        replace(row, seq=m.seq, id=m.id, pinned=m.pinned, file_ids=list(m.file_ids))
        for row, m in zip(rows, batch, strict=True)
    ]


# ---------------------------------------------------------------- a case


def _turn_vendors(rng: random.Random, turns: int, fmt: str) -> list[str | None]:
    """A vendor (or None: the default form) for each turn: one vendor throughout, runs
    of vendors switching (Claude → GPT → Claude …), or a sprinkle."""
    own = fmt if fmt in VENDORS else None
    main = own if own is not None and rng.random() < 0.6 else rng.choice(VENDORS)
    shape = rng.choice(("one", "one", "switch", "switch", "sprinkle"))
    if shape == "one":
        return [main] * turns
    if shape == "sprinkle":
        return [main if rng.random() < 0.4 else None for _ in range(turns)]
    others = [v for v in (*VENDORS, None) if v != main]
    out: list[str | None] = []
    current: str | None = main
    while len(out) < turns:
        out += [current] * rng.randrange(1, 4)
        current = main if current != main else rng.choice(others)
    return out[:turns]


def _turn_index(messages: list[Message]) -> list[int]:
    """Each message's turn: a turn starts at each user message."""
    turn, out = 0, []
    for i, m in enumerate(messages):
        if m.role == "user" and i:
            turn += 1
        out.append(turn)
    return out


def _form(rng: random.Random, m: Message, vendor: str | None) -> str | None:
    """The vendor a message is posted in (None: the default form). User messages with
    files stay in the default form (a native batch has no `file_ids`), so do some
    others; Gemini has no system turn."""
    if vendor is None:
        return None
    if m.role == "user" and (m.file_ids or rng.random() < 0.25):
        return None
    if m.role == "system" and (vendor == "gemini" or rng.random() < 0.5):
        return None
    return vendor


def _style(rng: random.Random, vendor: str) -> Style:
    return Style(
        vendor,
        thinks=rng.random() < 0.85,
        interleaves=rng.random() < 0.4,
        ids=rng.random() < 0.5,
        snake=vendor == "gemini" and rng.random() < 0.2,
        default_form=vendor == "anthropic" and rng.random() < 0.2,
    )


def _answered_ids(rows: list[Message]) -> list[str]:
    """`store.history_queries.answered_call_ids`: the Gemini synthetic ids answered."""
    prefix = f"{GEMINI_ID_PREFIX}-"
    return [
        str(m.tool_call_id)
        for m in rows
        if m.role == "tool" and str(m.tool_call_id).startswith(prefix)
    ]


def _open_calls(rows: list[Message]) -> dict[str, str]:
    """The calls still unanswered after `rows` (id → name), oldest first."""
    open_: dict[str, str] = {}
    for m in rows:
        for call in m.tool_calls or ():
            open_[str(call["id"])] = str(call["function"]["name"])
        if m.role == "tool":
            open_.pop(str(m.tool_call_id), None)
    return open_


def _interject(rng: random.Random, case: Case) -> None:
    """Sometimes, a case whose last read ends on tool results gets a user message right
    after them (posted with them: an Anthropic tool loop goes on through it,
    docs/api.md#where-this-api-goes-beyond-the-spec-or-reads-it-more-precisely;
    Gemini and Responses start a turn there)."""
    last = case.reads[-1][-1]
    if last.role != "tool" or rng.random() >= INTERJECTION_SHARE:
        return
    seq = last.seq + 1
    text = marker(seq) + "Also: " + text_of(rng, sized_tokens(rng, 60))
    case.reads[-1].append(Message(role="user", content=text, seq=seq, id=f"m{seq}"))


def nativise(case: Case, pick: Callable[[random.Random, Any], Any]) -> Drawn | None:
    """Re-express some of the case's turns natively, in place (see the module)."""
    rng = random.Random(case.seed * 4 + 2)
    if rng.random() >= NATIVE_SHARE:
        return None
    drawn = Drawn()
    if rng.random() < 0.6:
        model = pick(rng, REASONING_MODELS)
        # the options were drawn for the case's window: a model with less would leave
        # them no room (a max_output_tokens of a fifth of 1M on a 200K model)
        if effective_window(model, case.window) >= effective_window(case.model, case.window):
            drawn.model = case.model = model
    _interject(rng, case)
    messages = [m for batch in case.reads for m in batch]
    turn_of = _turn_index(messages)
    vendors = _turn_vendors(rng, turn_of[-1] + 1, case.format)
    drawn.vendors = [v or "default" for v in vendors]
    producers = {v: rng.choice(PRODUCERS[v]) for v in VENDORS}
    forms = [_form(rng, m, vendors[turn_of[i]]) for i, m in enumerate(messages)]
    done: list[Message] = []
    position = 0
    for r, batch in enumerate(case.reads):
        out: list[Message] = []
        i = 0
        while i < len(batch):
            form = forms[position + i]
            j = i + 1
            while j < len(batch) and forms[position + j] == form:
                j += 1
            run = batch[i:j]
            if form is None:
                out += run
            else:
                style = _style(rng, form)
                out += parse_batch(rng, run, style, producers[form], done + out)
            i = j
        position += len(batch)
        done += out
        case.reads[r] = out
    return drawn
