"""Native turns (docs/api.md#native-turns, design 26 §1-3): a vendor's own turns, validated
as its API would, normalised into engine messages that each carry their slice of the
payload verbatim (`Message.native`).

- `parse_native(format, items, *, model, open_calls)`: the rows of a native batch
  (`messages` of `format=anthropic`, `items` of `responses`, `contents` of `gemini`);
  a batch the vendor's API would refuse raises `ValidationFailed` whose `field` names
  the place (`messages[3].content[1].signature`, `items[2].call_id`,
  `contents[1].parts[0].functionResponse.name`, or `format`).
- `parse_default(messages, …)`: the default (OpenAI Chat) form, whose messages holding
  Anthropic-only blocks are read as Anthropic turns.
- `open_calls`: the calls a result may answer besides those the batch makes — the
  stored conversation's calls still unanswered in its current turn, id → function name,
  oldest first (the service reads them); `stored_ids`: the call ids the conversation
  holds, so that synthetic Gemini ids are numbered over the conversation.
- Classifiers, one module per vendor (`anthropic`, `responses`, `gemini`):
  `is_reasoning`, `is_opaque`, `reasoning_units(payload)`; `reasoning_units(native)`
  here dispatches on the format.
- Sent back (each vendor module): a row's slice as its own format sends it, with or
  without its reasoning (`sent_blocks`, `sent_items`, `sent_parts`); `shown_as(native,
  role, text)` here: the slice of a row the context shows shorter (a stub, a preview),
  only its content replaced.

Pure: no I/O, no web framework, no database.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from contextq.history.native import anthropic, gemini, responses
from contextq.history.native.common import CallBook, kind_name, refuse
from contextq.history.native.default_form import holds_native_blocks, parse_default
from contextq.history.types import NATIVE_FORMATS, Message, Native, NativeFormat

GEMINI_ID_PREFIX = gemini.ID_PREFIX  # synthetic ids of Gemini calls without one
# where each format's turns are in the request body
BODY_KEYS: dict[str, str] = {"anthropic": "messages", "responses": "items", "gemini": "contents"}


def check_format(value: Any) -> NativeFormat:
    """`value` as a native format (ValidationFailed naming `format` otherwise)."""
    if not isinstance(value, str) or value not in NATIVE_FORMATS:
        raise refuse(
            "format",
            f"format must be one of {', '.join(sorted(NATIVE_FORMATS))}, not {value!r} "
            "(leave it out to post OpenAI chat messages)",
        )
    return cast(NativeFormat, value)


def parse_native(
    format: str,
    items: Any,
    *,
    model: str | None,
    open_calls: Mapping[str, str] | Iterable[str] = (),
    stored_ids: Callable[[], Iterable[str]] | None = None,
) -> list[Message]:
    """The engine messages of a native batch, in order (ValidationFailed naming the
    place when the vendor's API would refuse it; nothing is half-parsed). `stored_ids`:
    the call ids the conversation holds, read only when a Gemini call without an id
    needs a synthetic one (`CallBook`)."""
    key = BODY_KEYS[check_format(format)]
    if not isinstance(items, list):
        raise refuse(key, f"{key} is a list, not {kind_name(items)}")
    book = CallBook(open_calls, stored_ids)
    if format == "anthropic":
        return [
            row
            for i, turn in enumerate(items)
            for row in anthropic.parse_turn(turn, f"messages[{i}]", book, model)
        ]
    if format == "responses":
        return responses.parse_items(items, book, model)
    return gemini.parse_contents(items, book, model)


def reasoning_units(native: Native | None) -> int:
    """Reasoning blocks (anthropic), items (responses) or parts (gemini: thought parts
    and parts carrying a thought signature) in a row's payload."""
    if native is None:
        return 0
    if native.format == "anthropic":
        return anthropic.reasoning_units(native.payload)
    if native.format == "responses":
        return responses.reasoning_units(native.payload)
    return gemini.reasoning_units(native.payload)


def shown_as(native: Native | None, role: str, text: str) -> Native | None:
    """`native` for a row whose content the context shows as `text` (a cleared tool
    result's stub, a large result's preview, a message cut to fit): the same slice
    with only its content replaced, so that its own format still sends it natively."""
    if native is None:
        return None
    vendor = {"anthropic": anthropic, "responses": responses, "gemini": gemini}[native.format]
    return Native(native.format, native.model, vendor.with_text(native.payload, role, text))


__all__ = [
    "BODY_KEYS",
    "GEMINI_ID_PREFIX",
    "CallBook",
    "check_format",
    "holds_native_blocks",
    "parse_default",
    "parse_native",
    "reasoning_units",
    "shown_as",
]
