"""Keyword-only query helpers of the history service (conversations, messages,
compactions, memory, jobs). Shared by the API routes and the compaction task.

Messages go in through `insert_messages`: seq numbers are assigned under the
conversation's row lock (`FOR UPDATE` on PostgreSQL; SQLite write sessions hold
the database write lock from `BEGIN IMMEDIATE`), each message's token count is
computed once from its JSON serialisation as the API sends it, and the running
totals move in the same transaction.

`load_context_messages` is the context route's fast path: it reads only the
columns the engine needs, only from the newest compaction on (plus pinned and
system messages before it, with their tool chains), so its cost grows with what
can be kept, not with the history length.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Text, cast, delete, func, insert, select, update
from sqlmodel import Session

from contextq.errors import InputTooLarge, ValidationFailed
from contextq.history.chains import unit_at
from contextq.history.memory import HierarchicalMemory, score_message
from contextq.history.tokens import count_message_tokens, serialise
from contextq.history.types import Message as EngineMessage
from contextq.settings import Settings
from store.history_tables import Compaction, Conversation, Memory, Message
from store.tables import Job, JobStatus, new_id, utcnow

MAX_BATCH_MESSAGES = 10_000
MAX_MESSAGE_CHARS = 1_000_000  # of the message's JSON serialisation (≈ 1 MB)
MAX_PAGE = 1000
MAX_TOOL_CALLS = 128  # per assistant message (api/history_schemas.py): a chain's length

COMPACT_JOB_KIND = "compact_conversation"

# Columns the engine needs (no created_at, no cum_tokens), in `_to_engine`'s order. JSON
# columns are read as text and parsed with orjson (4x faster than the driver's json).
_CONTEXT_COLUMNS = (
    Message.id,
    Message.seq,
    Message.role,
    cast(Message.content, Text),
    cast(Message.tool_calls, Text),
    Message.tool_call_id,
    Message.name,
    Message.pinned,
    Message.kind,
    Message.importance,
    Message.token_count,
    cast(Message.file_ids, Text),
)


# ---------------------------------------------------------------- conversations


def get_conversation(
    session: Session, *, owner_id: str, conversation_id: str, for_update: bool = False
) -> Conversation | None:
    stmt = select(Conversation).where(
        Conversation.id == conversation_id, Conversation.owner_id == owner_id
    )
    if for_update:
        stmt = stmt.with_for_update()
    return session.execute(stmt).scalar_one_or_none()


def get_conversation_any_owner(
    session: Session, *, conversation_id: str, for_update: bool = False
) -> Conversation | None:
    """For the worker, which re-reads rows by id (the owner was checked when enqueued)."""
    stmt = select(Conversation).where(Conversation.id == conversation_id)
    if for_update:
        stmt = stmt.with_for_update()
    return session.execute(stmt).scalar_one_or_none()


def create_conversation(
    session: Session, *, owner_id: str, data: Mapping[str, Any]
) -> Conversation:
    conversation = Conversation(owner_id=owner_id, **data)
    session.add(conversation)
    session.flush()
    return conversation


def update_conversation(
    session: Session, *, conversation: Conversation, data: Mapping[str, Any]
) -> Conversation:
    for key, value in data.items():
        setattr(conversation, key, value)
    conversation.updated_at = utcnow()
    session.add(conversation)
    session.flush()
    return conversation


def delete_conversation(session: Session, *, conversation: Conversation) -> None:
    """Delete a conversation with its messages, compactions and memory (explicitly, so it
    does not depend on the database enforcing ON DELETE CASCADE)."""
    for table in (Message, Compaction, Memory):
        session.execute(delete(table).where(table.conversation_id == conversation.id))  # type: ignore[attr-defined]
    session.execute(delete(Conversation).where(Conversation.id == conversation.id))


# ---------------------------------------------------------------- messages


@dataclass(slots=True)
class InsertResult:
    rows: list[dict[str, Any]]
    conversation: Conversation
    crossed_compaction_threshold: bool


def _engine_message(data: Mapping[str, Any]) -> EngineMessage:
    return EngineMessage(
        role=data["role"],
        content=data.get("content"),
        tool_calls=data.get("tool_calls") or None,
        tool_call_id=data.get("tool_call_id"),
        name=data.get("name"),
        pinned=bool(data.get("pinned")),
        kind=data.get("kind"),
    )


def _importance(message: EngineMessage) -> float:
    return round(float(score_message(message)), 4)


def insert_messages(
    session: Session,
    *,
    conversation_id: str,
    owner_id: str,
    messages: Sequence[Mapping[str, Any]],
    settings: Settings,
) -> InsertResult | None:
    """Append `messages` (validated dicts: role, content, tool_calls, …) to a conversation.

    Returns None when the conversation does not exist for this owner. Raises
    ValidationFailed (too many pinned), InputTooLarge (a message or the batch too big).
    """
    if len(messages) > MAX_BATCH_MESSAGES:
        raise InputTooLarge(
            f"a batch holds at most {MAX_BATCH_MESSAGES} messages, got {len(messages)}; "
            "send the history in several requests"
        )
    conversation = get_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=True
    )
    if conversation is None:
        return None
    pinned_new = sum(1 for m in messages if m.get("pinned"))
    if pinned_new and conversation.pinned_count + pinned_new > settings.MAX_PINNED_MESSAGES:
        raise ValidationFailed(
            f"at most {settings.MAX_PINNED_MESSAGES} messages can be pinned per conversation "
            f"({conversation.pinned_count} already, {pinned_new} more asked); unpin some first",
            field="pinned",
        )
    now = utcnow()
    seq = conversation.last_seq
    cum = conversation.total_tokens
    rows: list[dict[str, Any]] = []
    parsed: list[EngineMessage] = []
    for index, data in enumerate(messages):
        message = _engine_message(data)
        wire = message.to_openai()
        if len(serialise(wire)) > MAX_MESSAGE_CHARS:
            raise InputTooLarge(
                f"message {index} is over {MAX_MESSAGE_CHARS} characters as JSON; "
                "upload large content as a file instead"
            )
        seq += 1
        message.id, message.seq = new_id(), seq
        message.token_count = count_message_tokens(wire, conversation.model)
        message.importance = _importance(message)
        message.file_ids = list(data.get("file_ids") or [])
        cum += message.token_count
        parsed.append(message)
        rows.append(
            {
                "id": message.id,
                "conversation_id": conversation.id,
                "seq": seq,
                "role": message.role,
                "content": message.content,
                "tool_calls": message.tool_calls,
                "tool_call_id": message.tool_call_id,
                "name": message.name,
                "pinned": message.pinned,
                "kind": message.kind,
                "importance": message.importance,
                "token_count": message.token_count,
                "cum_tokens": cum,
                "file_ids": message.file_ids,
                "created_at": now,
            }
        )
    if rows:
        session.execute(insert(Message), rows)
        _observe(session, conversation_id=conversation.id, messages=parsed, now=now)
        MESSAGE_CACHE.put_many(parsed)  # the next context read need not parse them
    added_tokens = cum - conversation.total_tokens
    threshold = settings.HISTORY_COMPACTION_MAX_TOKENS
    before = conversation.tokens_since_compaction
    conversation.message_count += len(rows)
    conversation.total_tokens = cum
    conversation.last_seq = seq
    conversation.pinned_count += pinned_new
    conversation.tokens_since_compaction = before + added_tokens
    conversation.updated_at = now
    session.add(conversation)
    session.flush()
    crossed = before < threshold <= conversation.tokens_since_compaction
    return InsertResult(rows, conversation, crossed)


def _observe(
    session: Session, *, conversation_id: str, messages: Sequence[EngineMessage], now: datetime
) -> None:
    """Feed new messages to the conversation's hierarchical memory (same transaction)."""
    memory = HierarchicalMemory.from_dict(
        get_memory_state(session, conversation_id=conversation_id)
    )
    for message in messages:
        message.created_at = now
        memory.observe(message)
        message.created_at = None  # as a read from the table gives it (`_to_engine`)
    save_memory_state(session, conversation_id=conversation_id, state=memory.to_dict())


def message_public(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "seq": row["seq"],
        "role": row["role"],
        "content": row["content"],
        "tool_calls": row["tool_calls"],
        "tool_call_id": row["tool_call_id"],
        "name": row["name"],
        "pinned": row["pinned"],
        "kind": row["kind"],
        "importance": row["importance"],
        "token_count": row["token_count"],
        "file_ids": row["file_ids"] or [],
        "created_at": row["created_at"],
    }


def list_messages(
    session: Session, *, conversation_id: str, after_seq: int = 0, limit: int = 100
) -> tuple[list[Message], int | None]:
    """A page of the original history in seq order; returns (rows, next after_seq or None)."""
    limit = max(1, min(limit, MAX_PAGE))
    rows = list(
        session.execute(
            select(Message)
            .where(Message.conversation_id == conversation_id, Message.seq > after_seq)
            .order_by(Message.seq)  # type: ignore[arg-type]
            .limit(limit + 1)
        ).scalars()
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (rows[-1].seq if more and rows else None)


def get_message(session: Session, *, conversation_id: str, message_id: str) -> Message | None:
    return session.execute(
        select(Message).where(Message.id == message_id, Message.conversation_id == conversation_id)
    ).scalar_one_or_none()


def set_pinned(
    session: Session,
    *,
    conversation: Conversation,
    message: Message,
    pinned: bool,
    settings: Settings,
) -> Message:
    """Pin or unpin (the only change a stored message ever gets); max MAX_PINNED_MESSAGES."""
    if message.pinned == pinned:
        return message
    if pinned and conversation.pinned_count + 1 > settings.MAX_PINNED_MESSAGES:
        raise ValidationFailed(
            f"at most {settings.MAX_PINNED_MESSAGES} messages can be pinned per conversation; "
            "unpin one first",
            field="pinned",
        )
    message.pinned = pinned
    conversation.pinned_count = max(0, conversation.pinned_count + (1 if pinned else -1))
    conversation.updated_at = utcnow()
    session.add(message)
    session.add(conversation)
    session.flush()
    return message


# ---------------------------------------------------------------- context loading


def _json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


def _to_engine(row: Sequence[Any], pinned: bool | None = None) -> EngineMessage:
    """An engine message from a `_CONTEXT_COLUMNS` row (JSON columns as text)."""
    (
        id_,
        seq,
        role,
        content,
        calls,
        call_id,
        name,
        stored_pinned,
        kind,
        importance,
        tokens,
        files,
    ) = row
    return EngineMessage(
        id=id_,
        seq=seq,
        role=role,
        content=_json(content),
        tool_calls=_json(calls),
        tool_call_id=call_id,
        name=name,
        pinned=stored_pinned if pinned is None else pinned,
        kind=kind,
        importance=importance,
        token_count=tokens,
        file_ids=_json(files) or [],
    )


class MessageCache:
    """Parsed stored messages by id, least recently used out first, shared by the
    threads of one API process.

    A stored message never changes after insert except its `pinned` flag, which is
    always read from the database (a cached message whose flag differs is copied), so
    entries never go stale and need no invalidation across processes. An agent asks
    for its context after each new message: the window moves by a few messages, so
    almost every message comes from here and only the new ones are read and parsed.
    Cached messages are shared between requests: nothing may mutate them.

    Garbage collection: a full collection walks every tracked object, and this cache
    holds hundreds of thousands of them (≈ 150 ms per full pass measured on the 2-core
    dev machine: the p99 of GET /context). After every `freeze_every` new entries the
    cache runs a young-generation collection and `gc.freeze()`, which moves every live
    object out of the collector's way; they are still freed by reference counting when
    evicted (messages hold no reference cycles). Set `freeze_every=0` to turn it off.
    """

    def __init__(self, max_items: int = 50_000, freeze_every: int = 5_000) -> None:
        self.max_items = max_items  # ≈ 50 MB of typical agent messages
        self.freeze_every = freeze_every
        self._items: OrderedDict[str, EngineMessage] = OrderedDict()
        self._lock = threading.Lock()
        self._since_freeze = 0

    def get_many(self, ids: Sequence[str]) -> dict[str, EngineMessage]:
        found: dict[str, EngineMessage] = {}
        with self._lock:
            items = self._items
            for id_ in ids:
                message = items.get(id_)
                if message is not None:
                    items.move_to_end(id_)
                    found[id_] = message
        return found

    def put_many(self, messages: Sequence[EngineMessage]) -> None:
        with self._lock:
            for message in messages:
                self._items[str(message.id)] = message
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)
            self._since_freeze += len(messages)
            freeze = self.freeze_every and self._since_freeze >= self.freeze_every
            if freeze:
                self._since_freeze = 0
        if freeze:
            gc.collect(1)  # young garbage first, so that little of it is frozen
            gc.freeze()

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


MESSAGE_CACHE = MessageCache()


class SeqIndex:
    """Each conversation's message ids by seq (`ids[seq - 1]`), least recently used
    conversation out first.

    Seqs are assigned 1, 2, 3, … under the conversation's row lock and messages are
    only ever appended (or deleted with their conversation), so the list only grows:
    a request reads just the ids added since the last one.
    """

    def __init__(self, max_ids: int = 500_000) -> None:  # ≈ 45 MB of ids
        self.max_ids = max_ids
        self._lists: OrderedDict[str, list[str]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def ids(self, session: Session, conversation_id: str, last_seq: int) -> list[str] | None:
        """Ids of seq 1..last_seq, or None if the seqs are not contiguous (not cached)."""
        with self._lock:
            cached = self._lists.get(conversation_id)
            if cached is not None:
                self._lists.move_to_end(conversation_id)
                if len(cached) >= last_seq:
                    return cached[:last_seq]
                cached = cached[:]
        have = len(cached) if cached is not None else 0
        rows = session.execute(
            select(Message.seq, Message.id)
            .where(
                Message.conversation_id == conversation_id,
                Message.seq > have,
                Message.seq <= last_seq,
            )
            .order_by(Message.seq)  # type: ignore[arg-type]
        ).all()
        if len(rows) != last_seq - have or (rows and rows[0][0] != have + 1):
            return None
        new = [r[1] for r in rows]
        with self._lock:
            current = self._lists.get(conversation_id)
            if current is None and have == 0:
                current = self._lists[conversation_id] = []
            if current is not None and len(current) == have:
                current.extend(new)
                self._total += len(new)
                self._evict()
        return (cached or []) + new

    def _evict(self) -> None:
        while self._total > self.max_ids and len(self._lists) > 1:
            _, dropped = self._lists.popitem(last=False)
            self._total -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._lists.clear()
            self._total = 0


SEQ_INDEX = SeqIndex()


class _Reader:
    """Reads a conversation's messages by seq for one request: ids from `SEQ_INDEX`,
    parsed messages from `MESSAGE_CACHE`, `pinned` flags from the database (≤ 10 rows),
    the rest parsed from one read per missing seq range."""

    def __init__(self, session: Session, conversation: Conversation) -> None:
        self.session = session
        self.conversation_id = conversation.id
        self.last_seq = conversation.last_seq
        self.ids = SEQ_INDEX.ids(session, conversation.id, conversation.last_seq)
        self.pinned = set(
            session.execute(
                select(Message.seq).where(
                    Message.conversation_id == conversation.id,
                    Message.pinned.is_(True),  # type: ignore[attr-defined]
                )
            ).scalars()
        )

    def seqs(self, *where: Any) -> list[int]:
        return list(
            self.session.execute(
                select(Message.seq)
                .where(Message.conversation_id == self.conversation_id, *where)
                .order_by(Message.seq)  # type: ignore[arg-type]
            ).scalars()
        )

    def read(self, lo: int, hi: int) -> list[EngineMessage]:
        """Messages with lo ≤ seq ≤ hi, in seq order."""
        lo, hi = max(1, lo), min(hi, self.last_seq)
        if lo > hi:
            return []
        if self.ids is None:  # seqs not contiguous: a plain read
            return self._parse(lo, hi)
        ids = self.ids[lo - 1 : hi]
        found = MESSAGE_CACHE.get_many(ids)
        if len(found) < len(ids):
            first = next(lo + i for i, id_ in enumerate(ids) if id_ not in found)
            last = next(hi - i for i, id_ in enumerate(reversed(ids)) if id_ not in found)
            parsed = [_to_engine(row) for row in self._rows(first, last)]
            MESSAGE_CACHE.put_many(parsed)
            found.update((str(m.id), m) for m in parsed)
        out = []
        for seq, id_ in enumerate(ids, start=lo):
            message = found[id_]
            pinned = seq in self.pinned
            out.append(message if message.pinned == pinned else replace(message, pinned=pinned))
        return out

    def read_seqs(self, seqs: Sequence[int]) -> list[EngineMessage]:
        return [m for seq in seqs for m in self.read(seq, seq)]

    def _rows(self, lo: int, hi: int) -> list[tuple[Any, ...]]:
        return [
            tuple(r)
            for r in self.session.execute(
                select(*_CONTEXT_COLUMNS)
                .where(
                    Message.conversation_id == self.conversation_id,
                    Message.seq.between(lo, hi),  # type: ignore[attr-defined]
                )
                .order_by(Message.seq)  # type: ignore[arg-type]
            )
        ]

    def _parse(self, lo: int, hi: int) -> list[EngineMessage]:
        pinned = self.pinned
        return [_to_engine(row, row[1] in pinned) for row in self._rows(lo, hi)]

    def removed_before(self, start: int, loaded: set[int]) -> list[str]:
        """Ids of the messages with seq < start that are not in `loaded` (seqs)."""
        ids = self.ids
        if ids is None:
            rows = self.session.execute(
                select(Message.seq, Message.id)
                .where(Message.conversation_id == self.conversation_id, Message.seq < start)
                .order_by(Message.seq)  # type: ignore[arg-type]
            ).all()
            return [id_ for seq, id_ in rows if seq not in loaded]
        return [id_ for seq, id_ in enumerate(ids[: start - 1], start=1) if seq not in loaded]


@dataclass(slots=True)
class ContextMessages:
    """History the context route hands to the engine, oldest first."""

    messages: list[EngineMessage]
    anchors: list[int]  # indices of system and pinned messages
    history_tokens: int  # tokens of `messages`
    removed_before: list[str]  # ids before through_seq not read (only with `with_removed`)


def load_context_messages(
    session: Session,
    *,
    conversation: Conversation,
    through_seq: int = 0,
    with_removed: bool = False,
) -> ContextMessages:
    """Messages with seq > `through_seq`, plus, from before it, system and pinned
    messages with their whole tool chains (they stay verbatim). With `with_removed`,
    also the ids of the earlier messages not read."""
    reader = _Reader(session, conversation)
    tail = reader.read(through_seq + 1, conversation.last_seq)
    head: list[EngineMessage] = []
    if through_seq > 0:
        head = _kept_before(reader, through_seq=through_seq)
    messages = head + tail
    anchors = [i for i, m in enumerate(messages) if m.pinned or m.role == "system"]
    history_tokens = sum(m.token_count or 0 for m in messages)
    removed: list[str] = []
    if with_removed and through_seq > 0:
        removed = reader.removed_before(through_seq + 1, {m.seq for m in head})
    return ContextMessages(messages, anchors, history_tokens, removed)


def _kept_before(reader: _Reader, *, through_seq: int) -> list[EngineMessage]:
    """System and pinned messages at or before `through_seq`, each with its tool chain
    (a chain's messages are adjacent: the results follow their call)."""
    system = reader.seqs(Message.role == "system", Message.seq <= through_seq)
    anchor_seqs = sorted({s for s in reader.pinned if s <= through_seq} | set(system))
    anchors = reader.read_seqs(anchor_seqs)
    keep = {m.seq: m for m in anchors}
    for anchor in anchors:
        if anchor.tool_calls:
            lo, hi = anchor.seq, anchor.seq + len(anchor.tool_calls)
        elif anchor.role == "tool":
            lo, hi = anchor.seq - MAX_TOOL_CALLS, anchor.seq + MAX_TOOL_CALLS
        else:
            continue
        window = reader.read(lo, min(hi, through_seq))
        index = next((i for i, m in enumerate(window) if m.seq == anchor.seq), None)
        if index is None:
            continue
        for j in unit_at(window, index).members:
            keep.setdefault(window[j].seq, window[j])
    return [keep[seq] for seq in sorted(keep)]


def all_engine_messages(
    session: Session, *, conversation_id: str, after_seq: int = 0, through_seq: int | None = None
) -> list[EngineMessage]:
    """Messages with after_seq < seq (≤ through_seq) as engine messages, for compaction."""
    stmt = select(*_CONTEXT_COLUMNS).where(
        Message.conversation_id == conversation_id, Message.seq > after_seq
    )
    if through_seq is not None:
        stmt = stmt.where(Message.seq <= through_seq)
    return [_to_engine(r) for r in session.execute(stmt.order_by(Message.seq))]  # type: ignore[arg-type]


def tokens_after(session: Session, *, conversation_id: str, seq: int) -> int:
    return int(
        session.execute(
            select(func.coalesce(func.sum(Message.token_count), 0)).where(
                Message.conversation_id == conversation_id, Message.seq > seq
            )
        ).scalar_one()
    )


# ---------------------------------------------------------------- compactions


def newest_compaction(session: Session, *, conversation_id: str) -> Compaction | None:
    return session.execute(
        select(Compaction)
        .where(Compaction.conversation_id == conversation_id)
        .order_by(Compaction.through_seq.desc(), Compaction.created_at.desc())  # type: ignore[attr-defined]
        .limit(1)
    ).scalar_one_or_none()


def list_compactions(
    session: Session, *, conversation_id: str, limit: int = 100
) -> list[Compaction]:
    return list(
        session.execute(
            select(Compaction)
            .where(Compaction.conversation_id == conversation_id)
            .order_by(Compaction.created_at.desc())  # type: ignore[attr-defined]
            .limit(max(1, min(limit, MAX_PAGE)))
        ).scalars()
    )


def add_compaction(session: Session, *, compaction: Compaction) -> Compaction:
    """Store a CompactionResult and move the conversation's since-compaction totals."""
    session.add(compaction)
    remaining = tokens_after(
        session, conversation_id=compaction.conversation_id, seq=compaction.through_seq
    )
    session.execute(
        update(Conversation)
        .where(Conversation.id == compaction.conversation_id)
        .values(last_compacted_seq=compaction.through_seq, tokens_since_compaction=remaining)
    )
    session.flush()
    return compaction


def conversations_due_for_compaction(
    session: Session, *, min_tokens: int, limit: int = 500
) -> list[Conversation]:
    """Conversations that grew since their last compaction and hold at least `min_tokens`
    uncompacted tokens (the caller applies each conversation's own threshold)."""
    return list(
        session.execute(
            select(Conversation)
            .where(
                Conversation.last_seq > Conversation.last_compacted_seq,
                Conversation.tokens_since_compaction >= min_tokens,
            )
            .order_by(Conversation.tokens_since_compaction.desc())  # type: ignore[attr-defined]
            .limit(limit)
        ).scalars()
    )


# ---------------------------------------------------------------- memory


def get_memory_state(session: Session, *, conversation_id: str) -> dict[str, Any] | None:
    row = session.get(Memory, conversation_id)
    return None if row is None else dict(row.state)


def save_memory_state(session: Session, *, conversation_id: str, state: dict[str, Any]) -> None:
    row = session.get(Memory, conversation_id)
    if row is None:
        session.add(Memory(conversation_id=conversation_id, state=state, updated_at=utcnow()))
    else:
        row.state = state
        row.updated_at = utcnow()
        session.add(row)
    session.flush()


# ---------------------------------------------------------------- jobs


def create_job(session: Session, *, owner_id: str, kind: str, target_id: str | None) -> Job:
    job = Job(owner_id=owner_id, kind=kind, target_id=target_id)
    session.add(job)
    session.flush()
    return job


def get_job(session: Session, *, owner_id: str, job_id: str) -> Job | None:
    return session.execute(
        select(Job).where(Job.id == job_id, Job.owner_id == owner_id)
    ).scalar_one_or_none()


def start_job(session: Session, *, job_id: str) -> bool:
    """queued → running (a conditional update: a redelivered message does not restart a
    finished job). Returns False when the job is already finished or missing."""
    result = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.status.in_([JobStatus.QUEUED, JobStatus.RUNNING]))  # type: ignore[attr-defined]
        .values(status=JobStatus.RUNNING, started_at=utcnow(), attempts=Job.attempts + 1)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


MAX_JOB_ERROR_CHARS = 2000


def finish_job(
    session: Session,
    *,
    job_id: str,
    status: str,
    result: dict[str, Any] | None = None,
    error: str | None = None,
) -> None:
    session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(
            status=status,
            result=result,
            error=error and error[:MAX_JOB_ERROR_CHARS],
            finished_at=utcnow(),
        )
    )
