"""The storage sweep beat runs every BLOB_SWEEP_INTERVAL_S (docs/operations.md#running-the-service).

It deletes blobs no row references once they are older than BLOB_SWEEP_GRACE_S, and
partial uploads nobody added to for as long (an upload whose process died), on either
blob store (`store.blobs`). It never deletes a blob an upload in flight is about to
reference:

1. an upload streams into a temporary place (filesystem: a temp file under
   `blobs/tmp/` whose mtime moves with every write; S3: a multipart upload under
   `tmp/` that gains a part every S3_PART_SIZE_BYTES, or memory); it is not a blob yet;
2. once the body is in, the upload *pins* the blob before it looks for it, then either
   finds it stored or stores its own copy (fresh write time), and only then commits the
   row that points at it, milliseconds later. Filesystem: a shared `flock`, an inode
   check and a refreshed mtime (`store.blobstore.filesystem`); S3: a pin key in Valkey
   that outlives the grace, set by an atomic script that waits while a deleter holds
   the blob (`store.blobstore.pins`);
3. the sweep lists blobs written before the grace, then asks the database which of
   them a row references (a check made after the listing), and deletes each remaining
   one only while it holds it against writers (filesystem: an exclusive lock taken
   without waiting; S3: the pin key set to `deleting` only where no pin exists), after
   checking again, under that hold, that it is still old and that no row points at it
   (`BlobStore.delete_if_unused`).

An upload that pinned the blob before the sweep took its hold keeps it. An upload that
comes after finds it gone and stores its own copy. The grace (an hour by default, at
least 10 s) only has to exceed the time from a pin to its commit, which the API's
database timeout bounds to a few seconds.
"""

from __future__ import annotations

import functools
import itertools
import logging
import time
from dataclasses import dataclass

from contextq.settings import Settings
from store import files_queries as q
from store.blobs import get_blob_store
from store.db import read_session
from store.metrics import BLOBS_DELETED

log = logging.getLogger("contextq.storage")

BATCH = 500


@dataclass
class BlobSweepReport:
    examined: int = 0
    deleted: int = 0
    temps_deleted: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "examined": self.examined,
            "deleted": self.deleted,
            "temps_deleted": self.temps_deleted,
        }


def _still_unreferenced(sha: str) -> bool:
    with read_session() as session:
        return not q.referenced_blobs(session, shas=[sha])


def sweep_blobs(*, settings: Settings, now: float | None = None) -> BlobSweepReport:
    """One sweep (see the module doc for why it never races an upload)."""
    cutoff = (time.time() if now is None else now) - settings.BLOB_SWEEP_GRACE_S
    blobs = get_blob_store(settings)
    report = BlobSweepReport()
    report.temps_deleted = blobs.remove_abandoned_temps(older_than=cutoff)
    old = blobs.stored(older_than=cutoff)  # listed first ...
    while batch := list(itertools.islice(old, BATCH)):
        report.examined += len(batch)
        with read_session() as session:  # ... then the references, read after the listing
            referenced = q.referenced_blobs(session, shas=batch)
        for sha in batch:
            if sha in referenced:
                continue
            check = functools.partial(_still_unreferenced, sha)
            if blobs.delete_if_unused(sha, older_than=cutoff, unreferenced=check):
                report.deleted += 1
    if report.deleted or report.temps_deleted:
        BLOBS_DELETED.labels("blob").inc(report.deleted)
        BLOBS_DELETED.labels("temp").inc(report.temps_deleted)
        log.info(
            "storage sweep: deleted %d unreferenced blob(s) and %d abandoned temp file(s) "
            "of %d examined",
            report.deleted,
            report.temps_deleted,
            report.examined,
        )
    return report
