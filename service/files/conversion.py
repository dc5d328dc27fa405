"""The shared conversion cache: a document is converted once per content, whichever
of processing (`service.files.processing`) and indexing (`service.files.indexing`)
asks first; both take it from here."""

from __future__ import annotations

from contextq.settings import Settings
from store.blobs import BlobStore
from store.conversion_cache import LOCK_TTL_S, DbConversionCache


def conversion_cache(settings: Settings, blobs: BlobStore) -> DbConversionCache:
    """The shared conversion cache (documents are converted once per content)."""
    return DbConversionCache(
        blobs=blobs,
        redis_url=settings.REDIS_URL,
        lock_timeout_s=LOCK_TTL_S,  # renewed by its holder: a dead one's goes within 30 s
        wait_timeout_s=settings.TASK_SOFT_TIME_LIMIT_S / 2,  # then convert, with time left
    )
