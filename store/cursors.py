"""Opaque page cursors over (created_at, id), for lists ordered newest first."""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime


def encode(created_at: datetime, row_id: str) -> str:
    ts = created_at if created_at.tzinfo is not None else created_at.replace(tzinfo=UTC)
    raw = f"{ts.isoformat()}|{row_id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(cursor: str) -> tuple[datetime, str]:
    """Raises ValueError on anything that is not a cursor we made."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        ts, row_id = raw.split("|", 1)
        return datetime.fromisoformat(ts), row_id
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError("invalid cursor") from exc
