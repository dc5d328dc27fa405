"""Task and queue names are constants; undeclared queues are refused."""

QUEUE_FILES = "files"
QUEUE_HISTORY = "history"
QUEUES = (QUEUE_FILES, QUEUE_HISTORY)

PROCESS_FILE = "contextq.process_file"
INDEX_FILE = "contextq.index_file"  # a ready file moved into a project
RECOVER_FILES = "contextq.recover_files"
SWEEP_BLOBS = "contextq.sweep_blobs"
EMBED_MISSING = "contextq.embed_missing"  # vectors for chunk sets indexed before them
COMPACT_CONVERSATION = "contextq.compact_conversation"
SWEEP_COMPACTIONS = "contextq.sweep_compactions"
DELIVER_WEBHOOK = "contextq.deliver_webhook"
SWEEP_EVENTS = "contextq.sweep_events"
NOOP = "contextq.noop"  # the framework's floor, for bench/upload_queue.py
# every task the worker registers (its metrics series exist from the first scrape)
TASKS = (
    PROCESS_FILE,
    INDEX_FILE,
    RECOVER_FILES,
    SWEEP_BLOBS,
    EMBED_MISSING,
    COMPACT_CONVERSATION,
    SWEEP_COMPACTIONS,
    DELIVER_WEBHOOK,
    SWEEP_EVENTS,
    NOOP,
)
