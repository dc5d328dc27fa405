"""The workspace use cases (docs/workspaces.md), one home each.

- `entries`       prepare_put / put_entry (PUT), list_entries, open_raw, delete_entry
- `views`         processed_view: the processed text, or a portion from `offset`
- `removal`       remove_workspace: with its conversation
- `tool_results`  offload_after_commit, write_tool_results: tool results as workspace files
- `bulk`          put_new_files: many new workspace files in few transactions
- `locate`        where a workspace lives; the owner check
"""

from service.workspaces.entries import (
    EntryView,
    PutTicket,
    RawFile,
    delete_entry,
    list_entries,
    open_raw,
    prepare_put,
    put_entry,
)
from service.workspaces.removal import remove_workspace
from service.workspaces.tool_results import offload_after_commit, write_tool_result
from service.workspaces.views import PortionView, ProcessedView, processed_view

__all__ = [
    "EntryView",
    "PortionView",
    "ProcessedView",
    "PutTicket",
    "RawFile",
    "delete_entry",
    "list_entries",
    "offload_after_commit",
    "open_raw",
    "prepare_put",
    "processed_view",
    "put_entry",
    "remove_workspace",
    "write_tool_result",
]
