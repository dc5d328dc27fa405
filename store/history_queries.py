"""Keyword-only queries of the history tables (conversations, messages, compactions,
memory) and of the jobs the history service reports on. Persistence only: the rules
(limits, scoring, thresholds) are in `service.history`; engine messages are read
through `store.message_cache`.

Messages go in through `append_messages`: seq numbers are assigned under the
conversation's row lock (`FOR UPDATE` on PostgreSQL; SQLite write sessions hold the
database write lock from `BEGIN IMMEDIATE`), and the conversation's running totals
move in the same transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlmodel import Session, col

from contextq.history.types import Message
from store import cursors
from store.context_tables import ContextCutPoint, ConversationCitation
from store.history_tables import Compaction, Conversation, Memory, StoredMessage
from store.message_cache import MESSAGE_CACHE
from store.tables import Job, JobStatus, utcnow

MAX_JOB_ERROR_CHARS = 2000

# ---------------------------------------------------------------- conversations


def get_conversation(
    session: Session, *, owner_id: str, conversation_id: str, for_update: bool = False
) -> Conversation | None:
    stmt = select(Conversation).where(
        col(Conversation.id) == conversation_id, col(Conversation.owner_id) == owner_id
    )
    if for_update:
        stmt = stmt.with_for_update()
    return session.execute(stmt).scalar_one_or_none()


def list_conversations(
    session: Session, *, owner_id: str, limit: int, after: tuple[datetime, str] | None = None
) -> tuple[list[Conversation], str | None]:
    """The owner's conversations, newest first; returns (rows, next_cursor)."""
    created, conv_id = col(Conversation.created_at), col(Conversation.id)
    stmt = select(Conversation).where(col(Conversation.owner_id) == owner_id)
    if after is not None:
        ts, last_id = after
        stmt = stmt.where(or_(created < ts, and_(created == ts, conv_id < last_id)))
    stmt = stmt.order_by(created.desc(), conv_id.desc()).limit(limit + 1)
    rows = list(session.execute(stmt).scalars())
    last = rows[limit - 1] if len(rows) > limit else None
    return rows[:limit], cursors.encode(last.created_at, last.id) if last else None


def get_conversation_by_id(
    session: Session, *, conversation_id: str, for_update: bool = False
) -> Conversation | None:
    """For the worker, which re-reads rows by id (the owner was checked when enqueued)."""
    stmt = select(Conversation).where(col(Conversation.id) == conversation_id)
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
    tables = (StoredMessage, Compaction, Memory, ConversationCitation, ContextCutPoint)
    for table in tables:
        session.execute(delete(table).where(col(table.conversation_id) == conversation.id))
    session.execute(delete(Conversation).where(col(Conversation.id) == conversation.id))


# ---------------------------------------------------------------- messages


def append_messages(
    session: Session, *, conversation: Conversation, messages: Sequence[Message], now: datetime
) -> list[dict[str, Any]]:
    """Insert `messages` (with `id`, `token_count`, … set) after the conversation's last
    seq and move its running totals; `conversation` must be locked (`for_update`).
    Sets each message's `seq`, keeps the parsed messages for the next context read,
    and returns the inserted rows as dicts."""
    seq = conversation.last_seq
    cum = conversation.total_tokens
    rows: list[dict[str, Any]] = []
    for message in messages:
        seq += 1
        message.seq = seq
        cum += message.token_count or 0
        native = message.native
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
                "token_count": message.token_count or 0,
                "cum_tokens": cum,
                "file_ids": message.file_ids,
                "created_at": now,
                "native_format": native.format if native else None,
                "native_model": native.model if native else None,
                "native_payload": native.payload if native else None,
            }
        )
    if rows:
        session.execute(insert(StoredMessage), rows)
        MESSAGE_CACHE.put_many(messages)  # the next context read need not parse them
    added = cum - conversation.total_tokens
    conversation.message_count += len(rows)
    conversation.total_tokens = cum
    conversation.last_seq = seq
    conversation.pinned_count += sum(1 for m in messages if m.pinned)
    conversation.tokens_since_compaction += added
    conversation.updated_at = now
    session.add(conversation)
    session.flush()
    return rows


OPEN_CALLS_SCAN = 1000  # newest messages read for the current turn's open calls


def open_tool_calls(session: Session, *, conversation: Conversation) -> dict[str, str]:
    """The current turn's tool calls not answered yet (the messages after the newest
    user message, at most the newest OPEN_CALLS_SCAN): call id → function name, oldest
    first. A native batch's results may answer them (docs/api.md#native-turns)."""
    m = StoredMessage
    newest_user = (
        select(func.coalesce(func.max(col(m.seq)), 0))
        .where(col(m.conversation_id) == conversation.id, col(m.role) == "user")
        .scalar_subquery()
    )
    rows = session.execute(
        select(col(m.role), col(m.tool_calls), col(m.tool_call_id))
        .where(
            col(m.conversation_id) == conversation.id,
            col(m.seq) > newest_user,
            col(m.seq) > conversation.last_seq - OPEN_CALLS_SCAN,
            col(m.role).in_(("assistant", "tool")),
        )
        .order_by(col(m.seq))
    ).all()
    calls: dict[str, str] = {}
    for role, tool_calls, tool_call_id in rows:
        if role == "tool":
            calls.pop(str(tool_call_id), None)
            continue
        for call in tool_calls or ():
            calls[str(call.get("id", ""))] = str((call.get("function") or {}).get("name", ""))
    return calls


def answered_call_ids(session: Session, *, conversation: Conversation, prefix: str) -> list[str]:
    """The call ids starting with `prefix` that the conversation's tool results answer
    (through the (conversation, role, seq) index: its tool rows only). Synthetic Gemini
    ids are numbered past them (`contextq.history.native.CallBook`)."""
    m = StoredMessage
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = session.execute(
        select(col(m.tool_call_id)).where(
            col(m.conversation_id) == conversation.id,
            col(m.role) == "tool",
            col(m.tool_call_id).like(pattern, escape="\\"),
        )
    ).all()
    return [str(row[0]) for row in rows]


def list_messages(
    session: Session, *, conversation_id: str, after_seq: int = 0, limit: int = 100
) -> tuple[list[StoredMessage], int | None]:
    """A page of the original history in seq order; returns (rows, next after_seq or None)."""
    rows = list(
        session.execute(
            select(StoredMessage)
            .where(
                col(StoredMessage.conversation_id) == conversation_id,
                col(StoredMessage.seq) > after_seq,
            )
            .order_by(col(StoredMessage.seq))
            .limit(limit + 1)
        ).scalars()
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (rows[-1].seq if more and rows else None)


def messages_by_seqs(
    session: Session, *, conversation_id: str, seqs: Sequence[int]
) -> list[StoredMessage]:
    """The messages of `seqs` (those that exist) in seq order, through the
    (conversation_id, seq) unique index."""
    if not seqs:
        return []
    return list(
        session.execute(
            select(StoredMessage)
            .where(
                col(StoredMessage.conversation_id) == conversation_id,
                col(StoredMessage.seq).in_(sorted(set(seqs))),
            )
            .order_by(col(StoredMessage.seq))
        ).scalars()
    )


def get_message(session: Session, *, conversation_id: str, message_id: str) -> StoredMessage | None:
    return session.execute(
        select(StoredMessage).where(
            col(StoredMessage.id) == message_id,
            col(StoredMessage.conversation_id) == conversation_id,
        )
    ).scalar_one_or_none()


def set_pinned(
    session: Session, *, conversation: Conversation, message: StoredMessage, pinned: bool
) -> StoredMessage:
    """Set a message's `pinned` flag (the only change a stored message ever gets) and the
    conversation's pinned count."""
    if message.pinned != pinned:
        message.pinned = pinned
        conversation.pinned_count = max(0, conversation.pinned_count + (1 if pinned else -1))
        conversation.updated_at = utcnow()
        session.add(message)
        session.add(conversation)
        session.flush()
    return message


def first_seq_past(session: Session, *, conversation_id: str, tokens: int) -> int | None:
    """The first seq whose running token total passes `tokens` (through an index)."""
    first = session.execute(
        select(func.min(col(StoredMessage.seq))).where(
            col(StoredMessage.conversation_id) == conversation_id,
            col(StoredMessage.cum_tokens) > tokens,
        )
    ).scalar_one()
    return None if first is None else int(first)


def tokens_after(session: Session, *, conversation_id: str, seq: int) -> int:
    return int(
        session.execute(
            select(func.coalesce(func.sum(col(StoredMessage.token_count)), 0)).where(
                col(StoredMessage.conversation_id) == conversation_id, col(StoredMessage.seq) > seq
            )
        ).scalar_one()
    )


# ---------------------------------------------------------------- compactions


def newest_compaction(session: Session, *, conversation_id: str) -> Compaction | None:
    return session.execute(
        select(Compaction)
        .where(col(Compaction.conversation_id) == conversation_id)
        .order_by(col(Compaction.through_seq).desc(), col(Compaction.created_at).desc())
        .limit(1)
    ).scalar_one_or_none()


def list_compactions(session: Session, *, conversation_id: str, limit: int) -> list[Compaction]:
    return list(
        session.execute(
            select(Compaction)
            .where(col(Compaction.conversation_id) == conversation_id)
            .order_by(col(Compaction.created_at).desc())
            .limit(limit)
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
        .where(col(Conversation.id) == compaction.conversation_id)
        .values(last_compacted_seq=compaction.through_seq, tokens_since_compaction=remaining)
    )
    session.flush()
    return compaction


def conversations_grown_since_compaction(
    session: Session, *, min_tokens: int, limit: int
) -> list[Conversation]:
    """Conversations that grew since their last compaction and hold at least `min_tokens`
    uncompacted tokens, most uncompacted first."""
    return list(
        session.execute(
            select(Conversation)
            .where(
                col(Conversation.last_seq) > col(Conversation.last_compacted_seq),
                col(Conversation.tokens_since_compaction) >= min_tokens,
            )
            .order_by(col(Conversation.tokens_since_compaction).desc())
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
        select(Job).where(col(Job.id) == job_id, col(Job.owner_id) == owner_id)
    ).scalar_one_or_none()


def unfinished_job_targets(
    session: Session, *, kind: str, target_ids: Iterable[str], since: datetime
) -> set[str]:
    """Which of `target_ids` have a job of `kind` queued or running, created since `since`."""
    ids = list(target_ids)
    if not ids:
        return set()
    return set(
        session.execute(
            select(col(Job.target_id)).where(
                col(Job.kind) == kind,
                col(Job.target_id).in_(ids),
                col(Job.status).in_([JobStatus.QUEUED, JobStatus.RUNNING]),
                col(Job.created_at) >= since,
            )
        ).scalars()
    )


def start_job(session: Session, *, job_id: str) -> bool:
    """queued → running (a conditional update: a redelivered message does not restart a
    finished job). Returns False when the job is already finished or missing."""
    result = session.execute(
        update(Job)
        .where(col(Job.id) == job_id, col(Job.status).in_([JobStatus.QUEUED, JobStatus.RUNNING]))
        .values(status=JobStatus.RUNNING, started_at=utcnow(), attempts=col(Job.attempts) + 1)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


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
        .where(col(Job.id) == job_id)
        .values(
            status=status,
            result=result,
            error=error and error[:MAX_JOB_ERROR_CHARS],
            finished_at=utcnow(),
        )
    )
