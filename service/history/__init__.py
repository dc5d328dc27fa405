"""The history use cases (SPEC §2 "Conversations and messages", "Ready-to-send
context", "Compaction and jobs"; §4, §5), one home each.

- `conversations`  create, get, update, delete a conversation (owner-checked)
- `messages`       append_messages, list_messages, pin_message
- `context`        build_context: plan (engine) → load (messages, files via
                   `context_files`, citation ids, cut point) → assemble (engine) → store
- `compaction`     request_compaction, run_compaction, sweep_compactions, list_compactions
- `memory`         the hierarchical memory: snapshot, goal, phase, decisions, subtasks
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
    update_conversation,
)
from service.history.memory import (
    add_decision,
    complete_subtask,
    get_memory,
    set_goal,
    set_phase,
)
from service.history.messages import (
    MAX_BATCH_MESSAGES,
    MAX_PAGE,
    Appended,
    MessagePage,
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
    "add_decision",
    "append_messages",
    "build_context",
    "check_batch_size",
    "complete_subtask",
    "create_conversation",
    "delete_conversation",
    "get_conversation",
    "get_memory",
    "list_compactions",
    "list_messages",
    "pin_message",
    "request_compaction",
    "run_compaction",
    "set_goal",
    "set_phase",
    "sweep_compactions",
    "update_conversation",
]
