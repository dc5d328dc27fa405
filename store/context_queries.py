"""Keyword-only queries of the context read (docs/history.md#the-ready-to-send-context): owner
settings, citation ids, the state carried from answer to answer (cut point, clearing line: read with
its version, written only while that version holds), and the file rows and processed texts a context
shows. Persistence only: what they mean is `contextq.assembly`'s;
`service.history.context` calls these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import orjson
from sqlalchemy import Table, Text, bindparam, cast, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col

from store.context_tables import ContextCutPoint, ConversationCitation, OwnerSettings
from store.history_tables import Conversation, StoredMessage
from store.tables import File, FileContent, utcnow

# the attributes (their keys name the labels below: `meta` is the column `metadata`)
FILE_VIEW_COLUMNS: tuple[Any, ...] = (
    File.id,
    File.status,
    File.filename,
    File.category,
    File.file_type,
    File.truncation,
    File.meta,
    File.error,
    File.content_sha256,
    File.content_media_type,
)

# the JSON columns read as text and parsed with orjson (much faster than the driver's json)
_JSON_AT = (5, 6)
_FILE_VIEW_SELECT = tuple(
    cast(c, Text).label(c.key) if i in _JSON_AT else c for i, c in enumerate(FILE_VIEW_COLUMNS)
)


class FileRow(NamedTuple):
    """A row of `FILE_VIEW_COLUMNS`, the JSON ones parsed."""

    id: str
    status: str
    filename: str
    category: str
    file_type: str
    truncation: dict[str, Any] | None
    meta: dict[str, Any] | None
    error: str | None
    content_sha256: str | None
    content_media_type: str | None


# ---------------------------------------------------------------- owner settings


def get_owner_settings(session: Session, *, owner_id: str) -> OwnerSettings | None:
    return session.get(OwnerSettings, owner_id)


def put_owner_settings(
    session: Session, *, owner_id: str, system_prompt: str | None
) -> OwnerSettings:
    row = session.get(OwnerSettings, owner_id, with_for_update=True)
    if row is None:
        row = OwnerSettings(owner_id=owner_id)
    row.system_prompt = system_prompt
    row.updated_at = utcnow()
    session.add(row)
    session.flush()
    return row


def owner_system_prompt(session: Session, *, owner_id: str) -> str | None:
    return session.connection().execute(_OWNER_PROMPT, {"owner": owner_id}).scalar_one_or_none()


# ---------------------------------------------------------------- citations


def citation_ids(
    session: Session, *, conversation_id: str, source_keys: Sequence[str]
) -> tuple[dict[str, int], int]:
    """The stored ids of `source_keys`, and the highest id in use in the conversation
    (one statement: the highest rides along as a scalar subquery)."""
    conn = session.connection()
    rows: list[Any] = []
    if source_keys:
        keys = sorted(set(source_keys))
        rows = list(conn.execute(_CITATIONS, {"cid": conversation_id, "keys": keys}).all())
    if not rows:
        return {}, int(conn.execute(_HIGHEST, {"cid": conversation_id}).scalar_one() or 0)
    return {key: int(cid) for _, key, cid in rows}, int(rows[0][0] or 0)


def _insert(session: Session) -> Any:
    dialect = session.get_bind().dialect.name
    return postgresql.insert if dialect == "postgresql" else sqlite.insert


def add_citations(session: Session, *, conversation_id: str, ids: Mapping[str, int]) -> bool:
    """Store new citation ids; False when another request stored some of these keys or
    ids first (the caller then rolls back and rebuilds with the stored ones)."""
    if not ids:
        return True
    now = utcnow()
    rows = [
        {"conversation_id": conversation_id, "source_key": k, "citation_id": v, "created_at": now}
        for k, v in ids.items()
    ]
    stmt = (
        _insert(session)(ConversationCitation)
        .values(rows)
        .on_conflict_do_nothing()
        .returning(col(ConversationCitation.source_key))
    )
    inserted = session.connection().execute(stmt).all()  # Core: the rows it inserted
    return len(inserted) == len(rows)


# ---------------------------------------------------------------- carried state


class Carried(NamedTuple):
    """The state a conversation's contexts carry for a model (one `context_cut_points`
    row), read in one statement, and the version it was read at (None: no row yet).
    Each field but `version` is the column of the same name; a new carried field is its
    column and one line here (`put_carried` writes whichever fields it is given)."""

    version: int | None = None
    seq: int | None = None  # the cut point
    clear_seq: int | None = None  # the clearing line
    reasoning_seq: int | None = None  # bound reasoning's watermark
    binding: dict[str, Any] | None = None  # bound reasoning's state (`BindState.to_json`)


def get_carried(session: Session, *, conversation_id: str, model: str) -> Carried:
    """The state stored for the conversation and model, with its version."""
    params = {"cid": conversation_id, "model": model}
    row = session.connection().execute(_CARRIED, params).first()
    return Carried(*row) if row is not None else Carried()


def put_carried(
    session: Session,
    *,
    conversation_id: str,
    model: str,
    moved: Mapping[str, Any],
    version: int | None,
) -> bool:
    """Store the carried fields an answer moved (`moved`, by column; the others stay as
    they are) if the state is still the one that answer was assembled from: the row at
    `version`, or no row when `version` is None. One statement, a compare-and-set on
    both backends (an UPDATE guarded by the version, or an INSERT that does nothing on
    a row another read inserted first). True when written; False when another read
    moved the state first (the caller reads the winner's state and assembles again)."""
    unknown = set(moved) - set(Carried._fields[1:])
    if unknown:
        raise ValueError(f"not a carried field: {sorted(unknown)}")
    values = {**moved, "updated_at": utcnow()}
    conn = session.connection()
    if version is None:
        insert = _insert(session)(ContextCutPoint).values(
            conversation_id=conversation_id, model=model, version=1, **values
        )
        inserted = insert.on_conflict_do_nothing().returning(ContextCutPoint.version)
        return conn.execute(inserted).first() is not None
    guarded = _CUT_POINT.update().where(
        _CUT_POINT.c.conversation_id == conversation_id,
        _CUT_POINT.c.model == model,
        _CUT_POINT.c.version == version,
    )
    result = conn.execute(guarded.values(version=_CUT_POINT.c.version + 1, **values))
    return bool(result.rowcount == 1)


# ---------------------------------------------------------------- files and messages


def file_rows(session: Session, *, owner_id: str, file_ids: Sequence[str]) -> list[Any]:
    """The owner's files among `file_ids` (`FILE_VIEW_COLUMNS`, by name)."""
    if not file_ids:
        return []
    # by primary key alone, the owner checked here: with `owner_id = ?` in the WHERE,
    # SQLite walks the owner's index, every file of the owner (workspace files too)
    rows = session.connection().execute(_FILE_ROWS, {"ids": sorted(set(file_ids))})
    return [_file_row(row[1:]) for row in rows if row[0] == owner_id]


def _file_row(row: Sequence[Any]) -> FileRow:
    values = list(row)
    for i in _JSON_AT:
        values[i] = None if values[i] is None else orjson.loads(values[i])
    return FileRow(*values)


def owned_file_ids(session: Session, *, owner_id: str, file_ids: Sequence[str]) -> set[str]:
    if not file_ids:
        return set()
    rows = session.connection().execute(  # by primary key alone (see `file_rows`)
        select(col(File.id), col(File.owner_id)).where(col(File.id).in_(sorted(set(file_ids))))
    )
    return {file_id for file_id, owner in rows if owner == owner_id}


def file_texts(session: Session, *, file_ids: Sequence[str]) -> dict[str, str]:
    if not file_ids:
        return {}
    rows = session.execute(
        select(col(FileContent.file_id), col(FileContent.text)).where(
            col(FileContent.file_id).in_(sorted(set(file_ids)))
        )
    ).all()
    return {file_id: text for file_id, text in rows}


def newest_user_seq(session: Session, *, conversation_id: str) -> int | None:
    """The seq of the conversation's newest user message (through an index)."""
    return window_seqs(session, conversation_id=conversation_id)[0]


def window_seqs(
    session: Session, *, conversation_id: str, past_tokens: int | None = None
) -> tuple[int | None, int | None]:
    """In one statement: the seq of the newest user message, and (with `past_tokens`)
    the first seq whose running token total passes `past_tokens`. Running totals only
    grow with seq, so that seq is the one with the smallest total past it: one seek in
    the (conversation, cum_tokens) index (`min(seq)` over the rows past it scanned them
    all, or the whole conversation when the planner chose the seq index: ~1 ms at
    10 000 messages)."""
    conn = session.connection()
    if past_tokens is None:
        user = conn.execute(_NEWEST_USER, {"cid": conversation_id}).scalar_one()
        return (None if user is None else int(user)), None
    params = {"cid": conversation_id, "past": past_tokens}
    user, start = conn.execute(_NEWEST_USER_AND_START, params).one()
    return (None if user is None else int(user)), (None if start is None else int(start))


def owned_conversation_exists(session: Session, owner_id: str, conversation_id: str) -> bool:
    found = session.execute(
        select(col(Conversation.id)).where(
            col(Conversation.id) == conversation_id, col(Conversation.owner_id) == owner_id
        )
    ).first()
    return found is not None


# ---------------------------------------------------------------- the read's statements
# Built once (building one costs 30-50 µs, a context read runs about ten); values are
# bound per call, lists through expanding parameters.

_CC = ConversationCitation
_M = StoredMessage
_OWNER_PROMPT = select(col(OwnerSettings.system_prompt)).where(
    col(OwnerSettings.owner_id) == bindparam("owner")
)
_HIGHEST = select(func.max(col(_CC.citation_id))).where(
    col(_CC.conversation_id) == bindparam("cid")
)
_CITATIONS = (
    select(_HIGHEST.scalar_subquery(), col(_CC.source_key), col(_CC.citation_id))
    .select_from(_CC)
    .where(
        col(_CC.conversation_id) == bindparam("cid"),
        col(_CC.source_key).in_(bindparam("keys", expanding=True)),
    )
)
_CUT_POINT: Table = ContextCutPoint.__table__  # type: ignore[attr-defined]
_CARRIED = select(*(_CUT_POINT.c[name] for name in Carried._fields)).where(
    _CUT_POINT.c.conversation_id == bindparam("cid"), _CUT_POINT.c.model == bindparam("model")
)
_USER = (
    select(func.max(col(_M.seq)))
    .where(col(_M.conversation_id) == bindparam("cid"), col(_M.role) == "user")
    .scalar_subquery()
)
_START = (
    select(col(_M.seq))
    .where(col(_M.conversation_id) == bindparam("cid"), col(_M.cum_tokens) > bindparam("past"))
    .order_by(col(_M.cum_tokens), col(_M.seq))
    .limit(1)
    .scalar_subquery()
)
_NEWEST_USER = select(_USER)
_NEWEST_USER_AND_START = select(_USER, _START)
_FILE_ROWS = select(col(File.owner_id), *_FILE_VIEW_SELECT).where(
    col(File.id).in_(bindparam("ids", expanding=True))
)
