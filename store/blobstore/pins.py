"""Pins of S3 blobs, in Valkey/Redis: why the sweep never deletes what an upload is
about to reference (the S3 form of `store.blobstore.filesystem`'s flock + mtime).

S3 has no locks and no way to refresh an object's Last-Modified, so each blob has one
key in Valkey, `contextq:blob-pin:<bucket>/<key>`, in one of two states:

- `pinned` (expires after BLOB_SWEEP_GRACE_S): a writer is about to reference the blob.
  A writer sets it (`pin`) *before* it looks for the object, and again once its own
  copy is stored, then commits the row that points at it;
- `deleting` (expires after DELETE_LEASE_S): a deleter holds the blob. It is taken only
  where no key exists (`SET NX`): never over a pin.

`pin` is one atomic script: it refuses while the key says `deleting` (the writer waits
a few milliseconds and asks again) and otherwise (re)sets `pinned`. So for any writer
and deleter of one blob, either the writer pinned first (the deleter's `SET NX` fails:
the blob is kept), or the deleter took the key first and finished (HEAD, reference
check, DELETE: milliseconds) before the writer's pin went through (the writer then finds
the object gone and stores its own copy). A pin outlives the time from a pin to its
row's commit (the API's database timeout bounds that to seconds); after it expires the
row's reference protects the blob. Without Valkey nothing is deleted, and a writer
fails (503 in the API) rather than write unprotected.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from store.blobstore.base import BlobStoreUnavailable
from store.redis_clients import redis_client

KEY_PREFIX = "contextq:blob-pin:"
PINNED, DELETING = b"pinned", b"deleting"
DELETE_LEASE_S = 120  # far longer than a HEAD, a reference check and a DELETE
PIN_WAIT_S = 30.0  # a writer waits this long for a deleter holding the blob
REDIS_TIMEOUT_S = 5.0

# KEYS[1] the pin key; ARGV[1] its lifetime in seconds. 1: pinned; 0: being deleted.
PIN_SCRIPT = """
if redis.call('GET', KEYS[1]) == 'deleting' then return 0 end
redis.call('SET', KEYS[1], 'pinned', 'EX', ARGV[1])
return 1
"""
# release the deleter's hold only if it is still the deleter's
RELEASE_SCRIPT = """
if redis.call('GET', KEYS[1]) == 'deleting' then return redis.call('DEL', KEYS[1]) end
return 0
"""


class Pins:
    def __init__(self, redis_url: str | None, *, namespace: str, pin_ttl_s: float) -> None:
        self.redis_url = redis_url
        self.namespace = namespace  # "<bucket>/<prefix>"
        self.pin_ttl_s = max(1, int(pin_ttl_s) + 1)

    def _redis(self) -> Any:
        if not self.redis_url:
            raise BlobStoreUnavailable(
                "BLOB_STORE=s3 needs REDIS_URL: the blob pins that keep the sweep from "
                "deleting a blob an upload is about to reference live in Valkey/Redis"
            )
        return redis_client(self.redis_url, timeout_s=REDIS_TIMEOUT_S)

    def key(self, object_key: str) -> str:
        return f"{KEY_PREFIX}{self.namespace}{object_key}"

    def pin(self, object_key: str) -> None:
        """Pin the blob for a writer; waits (up to PIN_WAIT_S) while a deleter holds it."""
        client = self._redis()
        script = client.register_script(PIN_SCRIPT)
        deadline = time.monotonic() + PIN_WAIT_S
        while not script(keys=[self.key(object_key)], args=[self.pin_ttl_s]):
            if time.monotonic() > deadline:
                raise BlobStoreUnavailable(
                    f"blob {object_key} stayed held by a deleter for {PIN_WAIT_S:.0f} s"
                )
            time.sleep(0.02)

    def is_pinned(self, object_key: str) -> bool:
        return bool(self._redis().get(self.key(object_key)) == PINNED)

    @contextlib.contextmanager
    def deleting(self, object_key: str) -> Iterator[bool]:
        """Hold the blob for a deleter: yields False (delete nothing) when a writer
        pinned it, another deleter holds it, or Valkey cannot be reached."""
        import redis  # noqa: PLC0415 - redis, where Valkey is used

        try:
            client = self._redis()
            held = bool(client.set(self.key(object_key), DELETING, nx=True, ex=DELETE_LEASE_S))
        except (redis.RedisError, BlobStoreUnavailable):
            held = False
        try:
            yield held
        finally:
            if held:
                with contextlib.suppress(redis.RedisError):
                    client.register_script(RELEASE_SCRIPT)(keys=[self.key(object_key)])
