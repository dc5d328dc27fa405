"""Stored messages as engine messages: the context route's cached read path.

`load_context_messages` reads only the columns the engine needs, only from a given
seq on (plus the system and pinned messages before it, with their tool chains), so
its cost grows with what can be kept, not with the history length.

Two process-global caches serve it, shared by the threads of one API process:
`MESSAGE_CACHE` (parsed messages by id) and `SEQ_INDEX` (each conversation's ids by
seq). Neither needs invalidating across processes: a stored message never changes
after insert except its `pinned` flag, which is always read from the database, and
seqs are only ever appended.
"""

from __future__ import annotations

import gc
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson
from sqlalchemy import Text, bindparam, cast, select
from sqlmodel import Session, col

from contextq.history.chains import unit_at
from contextq.history.types import MAX_TOOL_CALLS, Message, Native
from store.history_tables import Conversation, StoredMessage

# Columns the engine needs (no created_at, no cum_tokens), in `to_engine`'s order. JSON
# columns are read as text and parsed with orjson (4x faster than the driver's json).
CONTEXT_COLUMNS = (
    col(StoredMessage.id),
    col(StoredMessage.seq),
    col(StoredMessage.role),
    cast(col(StoredMessage.content), Text),
    cast(col(StoredMessage.tool_calls), Text),
    col(StoredMessage.tool_call_id),
    col(StoredMessage.name),
    col(StoredMessage.pinned),
    col(StoredMessage.kind),
    col(StoredMessage.importance),
    col(StoredMessage.token_count),
    cast(col(StoredMessage.file_ids), Text),
    col(StoredMessage.native_format),
    col(StoredMessage.native_model),
    cast(col(StoredMessage.native_payload), Text),
)


# The statements of the cached read, built once (building one costs 30-50 µs, a
# read runs about six); their values are bound per call.
_M = StoredMessage
_IDS_AFTER = (
    select(col(_M.seq), col(_M.id))
    .where(col(_M.conversation_id) == bindparam("cid"), col(_M.seq) > bindparam("lo"))
    .where(col(_M.seq) <= bindparam("hi"))
    .order_by(col(_M.seq))
)
_PINNED = select(col(_M.seq)).where(
    col(_M.conversation_id) == bindparam("cid"),
    col(_M.pinned).is_(True),
)
_SYSTEM = (
    select(col(_M.seq))
    .where(col(_M.conversation_id) == bindparam("cid"), col(_M.role) == "system")
    .where(col(_M.seq) <= bindparam("hi"))
    .order_by(col(_M.seq))
)
_ROWS = (
    select(*CONTEXT_COLUMNS)
    .where(
        col(_M.conversation_id) == bindparam("cid"),
        col(_M.seq).between(bindparam("lo"), bindparam("hi")),
    )
    .order_by(col(_M.seq))
)


def _json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


# orjson reads an integer past 64 bits as a float: a native payload goes back to its
# vendor verbatim, so one holding such a number is read with `json` (kept exact)
_LONG_NUMBER = re.compile(r"\d{19}")


def _payload(text: str) -> Any:
    return json.loads(text) if _LONG_NUMBER.search(text) else orjson.loads(text)


def to_engine(row: Sequence[Any], pinned: bool | None = None) -> Message:
    """An engine message from a `CONTEXT_COLUMNS` row (JSON columns as text)."""
    id_, seq, role, content, calls, call_id, name, stored_pinned, kind, importance = row[:10]
    tokens, files, native_format = row[10], row[11], row[12]
    native = None
    if native_format is not None:  # a native turn's slice: its payload parsed only then
        native = Native(native_format, row[13], _payload(row[14]))
    return Message(
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
        native=native,
    )


class MessageCache:
    """Parsed stored messages by id, least recently used out first.

    An agent asks for its context after each new message: the window moves by a few
    messages, so almost every message comes from here and only the new ones are read
    and parsed. Cached messages are shared between requests: nothing may mutate them
    (a message whose `pinned` flag differs from the database is copied).

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
        self._items: OrderedDict[str, Message] = OrderedDict()
        self._lock = threading.Lock()
        self._since_freeze = 0

    def get_many(self, ids: Sequence[str]) -> dict[str, Message]:
        found: dict[str, Message] = {}
        with self._lock:
            items = self._items
            for id_ in ids:
                message = items.get(id_)
                if message is not None:
                    items.move_to_end(id_)
                    found[id_] = message
        return found

    def put_many(self, messages: Sequence[Message]) -> None:
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
        rows = (
            session.connection()
            .execute(_IDS_AFTER, {"cid": conversation_id, "lo": have, "hi": last_seq})
            .all()
        )
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
        self.pinned = set(session.connection().execute(_PINNED, {"cid": conversation.id}).scalars())

    def system_seqs(self, through_seq: int) -> list[int]:
        params = {"cid": self.conversation_id, "hi": through_seq}
        return list(self.session.connection().execute(_SYSTEM, params).scalars())

    def read(self, lo: int, hi: int) -> list[Message]:
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
            parsed = [to_engine(row) for row in self._rows(first, last)]
            MESSAGE_CACHE.put_many(parsed)
            found.update((str(m.id), m) for m in parsed)
        out = []
        for seq, id_ in enumerate(ids, start=lo):
            message = found[id_]
            pinned = seq in self.pinned
            out.append(message if message.pinned == pinned else replace(message, pinned=pinned))
        return out

    def read_seqs(self, seqs: Sequence[int]) -> list[Message]:
        return [m for seq in seqs for m in self.read(seq, seq)]

    def _rows(self, lo: int, hi: int) -> list[tuple[Any, ...]]:
        params = {"cid": self.conversation_id, "lo": lo, "hi": hi}
        return [tuple(r) for r in self.session.connection().execute(_ROWS, params)]

    def _parse(self, lo: int, hi: int) -> list[Message]:
        pinned = self.pinned
        return [to_engine(row, row[1] in pinned) for row in self._rows(lo, hi)]

    def removed_before(self, start: int, loaded: set[int]) -> list[str]:
        """Ids of the messages with seq < start that are not in `loaded` (seqs)."""
        ids = self.ids
        if ids is None:
            rows = self.session.execute(
                select(col(StoredMessage.seq), col(StoredMessage.id))
                .where(
                    col(StoredMessage.conversation_id) == self.conversation_id,
                    col(StoredMessage.seq) < start,
                )
                .order_by(col(StoredMessage.seq))
            ).all()
            return [id_ for seq, id_ in rows if seq not in loaded]
        removed = ids[: start - 1]  # a copy; the few loaded ones taken out, newest first
        for seq in sorted((s for s in loaded if 0 < s < start), reverse=True):
            del removed[seq - 1]
        return removed


@dataclass(slots=True)
class ContextMessages:
    """History the context read hands to the engine, oldest first."""

    messages: list[Message]
    anchors: list[int]  # indices of system and pinned messages
    removed_before: list[str]  # ids before through_seq not read (only with `with_removed`)


def load_context_messages(
    session: Session,
    *,
    conversation: Conversation,
    through_seq: int = 0,
    with_removed: bool = False,
    also_seqs: Sequence[int] = (),
) -> ContextMessages:
    """Messages with seq > `through_seq`, plus, from before it, system and pinned
    messages with their whole tool chains (they stay verbatim) and the messages of
    `also_seqs` (the newest user message). With `with_removed`, also the ids of the
    earlier messages not read."""
    reader = _Reader(session, conversation)
    tail = reader.read(through_seq + 1, conversation.last_seq)
    if through_seq > 0 and tail and tail[0].role == "tool":  # never inside a tool chain:
        through_seq = _chain_start(reader, tail[0].seq) - 1  # a result comes with its call
        tail = reader.read(through_seq + 1, conversation.last_seq)
    head: list[Message] = []
    if through_seq > 0:
        head = _kept_before(reader, through_seq=through_seq, also_seqs=also_seqs)
    messages = head + tail
    anchors = [i for i, m in enumerate(messages) if m.pinned or m.role == "system"]
    removed: list[str] = []
    if with_removed and through_seq > 0:
        removed = reader.removed_before(through_seq + 1, {m.seq for m in head})
    return ContextMessages(messages, anchors, removed)


def _chain_start(reader: _Reader, seq: int) -> int:
    """The seq of the call whose chain tool result `seq` belongs to (itself if none)."""
    before = reader.read(max(1, seq - MAX_TOOL_CALLS), seq)
    return before[unit_at(before, len(before) - 1).start].seq


def _kept_before(
    reader: _Reader, *, through_seq: int, also_seqs: Sequence[int] = ()
) -> list[Message]:
    """System and pinned messages at or before `through_seq` (and those of `also_seqs`),
    each with its tool chain (a chain's messages are adjacent: the results follow their
    call)."""
    system = reader.system_seqs(through_seq)
    extra = {s for s in also_seqs if 0 < s <= through_seq}
    anchor_seqs = sorted({s for s in reader.pinned if s <= through_seq} | set(system) | extra)
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


def read_messages(session: Session, *, conversation_id: str, after_seq: int = 0) -> list[Message]:
    """Every message with seq > `after_seq` as engine messages, uncached (compaction)."""
    stmt = (
        select(*CONTEXT_COLUMNS)
        .where(
            col(StoredMessage.conversation_id) == conversation_id,
            col(StoredMessage.seq) > after_seq,
        )
        .order_by(col(StoredMessage.seq))
    )
    return [to_engine(r) for r in session.execute(stmt)]
