"""Tasks over history: `compact_conversation` and the beat sweep `sweep_compactions`,
each a few lines over `service.history` (which holds the per-conversation lock)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from contextq.settings import get_settings
from service import history
from worker import names


@shared_task(name=names.COMPACT_CONVERSATION)
def compact_conversation(conversation_id: str, job_id: str | None = None) -> dict[str, Any]:
    return history.run_compaction(
        conversation_id=conversation_id, job_id=job_id, settings=get_settings()
    )


@shared_task(name=names.SWEEP_COMPACTIONS)
def sweep_compactions() -> dict[str, Any]:
    """The compaction sweep (beat, every COMPACTION_SWEEP_INTERVAL_S)."""
    return history.sweep_compactions(settings=get_settings())
