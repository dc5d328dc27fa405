"""The files use cases (docs/api.md#the-file-object), one home each.

- `uploads`     accept_upload, get_file, file_content, list_files, delete_file: what the
                routes of `api/routes/files.py` call, each in one transaction
- `processing`  process_file: phase two, run by the `process_file` task
- `indexing`    index_file: a project file's whole text chunked for search (docs/retrieval.md)
- `recovery`    recover_files: the sweep beat runs
- `claims`      who may process a file (attempts, lease, holder identity, hand-ons)
- `outage`      what processing does while the database is away (wait, then hand on)
"""

from service.files.claims import (
    Claim,
    Release,
    claim_file,
    holder_is_dead,
    releases_from,
    worker_identity,
)
from service.files.indexing import Indexed, embed_missing_vectors, index_file
from service.files.processing import Outcome, process_file
from service.files.recovery import SweepReport, recover_backoff_s, recover_files
from service.files.uploads import (
    FileArtefact,
    accept_upload,
    check_upload_quota,
    delete_file,
    delete_rows,
    file_content,
    get_file,
    is_final,
    list_files,
)

__all__ = [
    "Claim",
    "FileArtefact",
    "Indexed",
    "Outcome",
    "Release",
    "SweepReport",
    "accept_upload",
    "check_upload_quota",
    "claim_file",
    "delete_file",
    "delete_rows",
    "embed_missing_vectors",
    "file_content",
    "get_file",
    "holder_is_dead",
    "index_file",
    "is_final",
    "list_files",
    "process_file",
    "recover_backoff_s",
    "recover_files",
    "releases_from",
    "worker_identity",
]
