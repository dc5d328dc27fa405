"""Messages: append, list the original history, read some by seq, pin (docs/api.md#routes,
docs/provenance.md).

An append is one transaction: the messages are checked (chat-format pairing, size,
pin limit), each gets its token count (its JSON as the API sends it, for the
conversation's model) and importance once, they feed the hierarchical memory, and
the conversation's totals move. An append that takes the uncompacted tokens over
HISTORY_COMPACTION_MAX_TOKENS also gets a compaction job, enqueued after the commit.
The memory sees each message with the seq it is stored under, so what it records from
it (a decision, an error pattern) cites that message.
A tool message over TOOL_RESULT_OFFLOAD_TOKENS is also written to the conversation's
workspace once the append commits (`service.workspaces.tool_results`).

Native turns (docs/api.md#native-turns): a batch in a vendor's own shape (`NativeBatch`), and
default-form messages holding Anthropic-only blocks, are parsed by the engine
(`contextq.history.native`) into messages that each carry their slice of the payload;
results may answer the calls the batch makes or the stored turn's open calls. From
there one path stores both forms: the same checks (batch size, each message's size as
JSON, the pin limit, file ids), all or nothing in one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from contextq.errors import InputTooLarge, NotFound, ValidationFailed
from contextq.history import Message, count_message_tokens
from contextq.history.memory import score_message
from contextq.history.message_tokens import serialise
from contextq.history.native import (
    BODY_KEYS,
    GEMINI_ID_PREFIX,
    CallBook,
    holds_native_blocks,
    parse_default,
    parse_native,
)
from contextq.settings import Settings
from contextq.tokens import count_tokens, encoding_name_for_model
from service.history.compaction import crossed_on_append, enqueue_compaction
from service.history.memory import observe_messages
from service.workspaces.locate import owned_conversation
from service.workspaces.tool_results import offload_after_commit
from store import history_queries as q
from store.context_queries import owned_file_ids
from store.history_tables import Conversation, StoredMessage
from store.tables import new_id, utcnow

MAX_BATCH_MESSAGES = 10_000
MAX_MESSAGE_CHARS = 1_000_000  # of the message's JSON serialisation (≈ 1 MB)
MAX_PAGE = 1000
MAX_SEQS = 200  # originals one `?seqs=` read returns (a summary line cites at most 8)


@dataclass(frozen=True, slots=True)
class Appended:
    rows: list[dict[str, Any]]  # the stored messages, in seq order
    compaction_job_id: str | None  # set when this append triggered a compaction


@dataclass(frozen=True, slots=True)
class MessagePage:
    rows: list[StoredMessage]
    next_cursor: str | None


def check_batch_size(count: int) -> None:
    """A batch holds at most MAX_BATCH_MESSAGES messages (InputTooLarge)."""
    if count > MAX_BATCH_MESSAGES:
        raise InputTooLarge(
            f"a batch holds at most {MAX_BATCH_MESSAGES} messages, got {count}; "
            "send the history in several requests"
        )


@dataclass(frozen=True, slots=True)
class NativeBatch:
    """A batch in a vendor's own shape: `items` are the body's `messages` (anthropic),
    `items` (responses) or `contents` (gemini); `model` produced its assistant turns
    (None: the conversation's)."""

    format: str
    items: list[Any]
    model: str | None = None


def append_messages(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    messages: Sequence[Mapping[str, Any]] = (),
    native: NativeBatch | None = None,
    batch: bool = True,
) -> Appended:
    """Append `messages` (dicts in the OpenAI shape, plus `pinned`, `kind`, `file_ids`)
    or a `native` batch.

    Raises NotFound, ValidationFailed (pairing, a native turn its API would refuse, too
    many pinned; the field is named `messages[i].<name>` when `batch`, else `<name>`,
    and `items[i]…`, `contents[i]…` for those formats), InputTooLarge (a message or the
    batch too big)."""
    check_batch_size(len(native.items) if native else len(messages))
    conversation = owned_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=True
    )
    _check_sizes(native, messages, batch)
    _check_file_ids(session, owner_id, messages, batch)
    parsed = _parse(session, conversation, messages, native, batch)
    _check_pin_room(conversation, sum(1 for m in parsed if m.pinned), settings)
    for message in parsed:
        _prepare(message, conversation.model)
    for offset, message in enumerate(parsed, 1):  # the seqs the insert will give them
        message.seq = conversation.last_seq + offset
    now = utcnow()
    if parsed:
        observe_messages(
            session, settings=settings, conversation=conversation, messages=parsed, now=now
        )
    before = conversation.tokens_since_compaction
    rows = q.append_messages(session, conversation=conversation, messages=parsed, now=now)
    # large tool results also go to the workspace, once this transaction has committed
    offload_after_commit(
        session,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation.id,
        messages=parsed,
    )
    job_id = None
    if crossed_on_append(before, conversation.tokens_since_compaction, settings):
        job_id = enqueue_compaction(
            session, settings=settings, owner_id=owner_id, conversation_id=conversation.id
        )
    return Appended(rows, job_id)


def _parse(
    session: Session,
    conversation: Conversation,
    messages: Sequence[Mapping[str, Any]],
    native: NativeBatch | None,
    batch: bool,
) -> list[Message]:
    """The engine messages of either form (ValidationFailed naming the place). Results
    may answer the stored turn's open calls, read only when the batch can hold one."""
    if native is not None:
        return parse_native(
            native.format,
            native.items,
            model=native.model or conversation.model,
            open_calls=q.open_tool_calls(session, conversation=conversation),
            stored_ids=lambda: q.answered_call_ids(
                session, conversation=conversation, prefix=f"{GEMINI_ID_PREFIX}-"
            ),
        )
    open_calls: dict[str, str] = {}
    if holds_native_blocks(messages):
        open_calls = q.open_tool_calls(session, conversation=conversation)
    return parse_default(
        messages, model=conversation.model, book=CallBook(open_calls), single=not batch
    )


def _check_sizes(
    native: NativeBatch | None, messages: Sequence[Mapping[str, Any]], batch: bool
) -> None:
    """Each message (each native turn or item) is at most MAX_MESSAGE_CHARS as JSON."""
    key = BODY_KEYS.get(native.format, "items") if native else "messages"
    for i, item in enumerate(native.items if native else messages):
        if len(serialise(item)) > MAX_MESSAGE_CHARS:
            where = f"{key}[{i}]" if native or batch else "the message"
            raise InputTooLarge(
                f"{where} is over {MAX_MESSAGE_CHARS} characters as JSON; upload large "
                "content as a file instead"
            )


def _check_file_ids(
    session: Session, owner_id: str, messages: Sequence[Mapping[str, Any]], batch: bool
) -> None:
    """`file_ids` must name the owner's existing files (ValidationFailed naming the id)."""
    wanted = [str(f) for m in messages for f in m.get("file_ids") or ()]
    if not wanted:
        return
    owned = owned_file_ids(session, owner_id=owner_id, file_ids=wanted)
    for i, message in enumerate(messages):
        for j, file_id in enumerate(message.get("file_ids") or ()):
            if file_id not in owned:
                where = f"messages[{i}].file_ids[{j}]" if batch else f"file_ids[{j}]"
                raise ValidationFailed(
                    f"file {file_id!r} is not one of your files (unknown or deleted); "
                    "upload it with POST /v1/files and attach the id it gets",
                    field=where,
                )


def _check_pin_room(conversation: Conversation, more: int, settings: Settings) -> None:
    """At most MAX_PINNED_MESSAGES pinned messages per conversation (ValidationFailed)."""
    if more and conversation.pinned_count + more > settings.MAX_PINNED_MESSAGES:
        raise ValidationFailed(
            f"at most {settings.MAX_PINNED_MESSAGES} messages can be pinned per conversation "
            f"({conversation.pinned_count} already, {more} more asked); unpin some first",
            field="pinned",
        )


def _prepare(message: Message, model: str | None) -> None:
    """Give a parsed message its id, token count and importance."""
    message.id = new_id()
    if message.native is None:
        message.token_count = count_message_tokens(message.to_openai(), model)
    else:
        # a native row counts its payload's JSON (the largest form: reasoning included)
        # in the conversation model's encoding. It is NOT the exact OpenAI count of the
        # row's normalised rendering: the engine must not take it for one (the output
        # formats count what they render).
        payload = serialise(message.native.payload)
        message.token_count = count_tokens(payload, encoding_name_for_model(model))
    message.importance = round(float(score_message(message)), 4)


def list_messages(
    *,
    session: Session,
    owner_id: str,
    conversation_id: str,
    cursor: str | None = None,
    limit: int = 100,
) -> MessagePage:
    """A page of the original history in seq order, never altered by filtering or
    compaction; `cursor` is a page's `next_cursor`."""
    owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    after = 0
    if cursor:
        if not cursor.isdigit():
            raise ValidationFailed(
                "cursor must be a next_cursor value from this list", field="cursor"
            )
        after = int(cursor)
    rows, next_seq = q.list_messages(
        session,
        conversation_id=conversation_id,
        after_seq=after,
        limit=max(1, min(limit, MAX_PAGE)),
    )
    return MessagePage(rows, None if next_seq is None else str(next_seq))


def parse_seqs(text: str) -> list[int]:
    """`12,40` → [12, 40]: positive integers, comma-separated, at most MAX_SEQS
    (ValidationFailed naming `seqs` otherwise)."""
    parts = [part.strip().removeprefix("#") for part in text.split(",")]
    if not text.strip() or any(not part.isdigit() for part in parts):
        raise ValidationFailed(
            f"seqs must be message seqs separated by commas, like 12,40 (got {text[:100]!r})",
            field="seqs",
        )
    seqs = sorted({int(part) for part in parts})
    if len(seqs) > MAX_SEQS:
        raise ValidationFailed(f"at most {MAX_SEQS} seqs at a time", field="seqs")
    return seqs


def messages_by_seqs(
    *, session: Session, owner_id: str, conversation_id: str, seqs: str
) -> MessagePage:
    """The original messages a summary line cites (`?seqs=12,40`), in seq order. Seqs
    the conversation does not have are refused (ValidationFailed naming them)."""
    conversation = owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    wanted = parse_seqs(seqs)
    outside = [s for s in wanted if not 1 <= s <= conversation.last_seq]
    if outside:
        span = f"#1-#{conversation.last_seq}" if conversation.last_seq else "none yet"
        raise ValidationFailed(
            f"no message with seq {', '.join(map(str, outside[:10]))} in this conversation "
            f"(its messages: {span})",
            field="seqs",
        )
    rows = q.messages_by_seqs(session, conversation_id=conversation_id, seqs=wanted)
    return MessagePage(rows, None)


def pin_message(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    message_id: str,
    pinned: bool,
) -> StoredMessage:
    """Pin or unpin a message (the only change a stored message gets)."""
    conversation = owned_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=True
    )
    message = q.get_message(session, conversation_id=conversation_id, message_id=message_id)
    if message is None:
        raise NotFound("message not found")
    if pinned and not message.pinned:
        _check_pin_room(conversation, 1, settings)
    return q.set_pinned(session, conversation=conversation, message=message, pinned=pinned)
