"""The history use cases (docs/api.md#routes, docs/history.md#the-ready-to-send-context,
docs/history.md#history-strategies, docs/history.md#compaction), one home each.

- `conversations`  create, list, get, update, delete a conversation (owner-checked)
- `messages`       append_messages, list_messages, pin_message
- `context`        build_context: plan (engine) → load (messages, files via
                   `context_files`, citation ids, cut point) → assemble (engine) → store
- `compaction`     request_compaction, run_compaction, sweep_compactions, list_compactions
- `memory`         the hierarchical memory (seed 001 over HTTP): snapshot, agent context,
                   stats, goal, phase, decisions, subtasks, actions, errors, reset,
                   export/import
- `stored_memory`  a memory loaded with the options in force, saved
- `checkpoint`     the private-data checkpoint
(docs/workspaces.md#private-data-conversation-and-memory-checkpoints), rewritten after each change
"""

from service.history.compaction import (
    list_compactions,
    request_compaction,
    run_compaction,
    sweep_compactions,
)
from service.history.context import build_context
from service.history.conversations import (
    create_conversation,
    delete_conversation,
    get_conversation,
    list_conversations,
    update_conversation,
)
from service.history.memory import (
    add_action,
    add_decision,
    complete_subtask,
    export_memory,
    get_memory,
    import_memory,
    memory_context,
    memory_stats,
    reset_memory,
    set_goal,
    set_phase,
    track_error,
)
from service.history.messages import (
    MAX_BATCH_MESSAGES,
    MAX_PAGE,
    Appended,
    MessagePage,
    NativeBatch,
    append_messages,
    check_batch_size,
    list_messages,
    pin_message,
)

__all__ = [
    "MAX_BATCH_MESSAGES",
    "MAX_PAGE",
    "Appended",
    "MessagePage",
    "NativeBatch",
    "add_action",
    "add_decision",
    "append_messages",
    "build_context",
    "check_batch_size",
    "complete_subtask",
    "create_conversation",
    "delete_conversation",
    "export_memory",
    "get_conversation",
    "get_memory",
    "import_memory",
    "list_compactions",
    "list_conversations",
    "list_messages",
    "memory_context",
    "memory_stats",
    "pin_message",
    "request_compaction",
    "reset_memory",
    "run_compaction",
    "set_goal",
    "set_phase",
    "sweep_compactions",
    "track_error",
    "update_conversation",
]
