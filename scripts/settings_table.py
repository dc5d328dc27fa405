"""Print, write or check the configuration table of docs/configuration.md, made from Settings.

    .venv/bin/python scripts/settings_table.py           # print the table
    .venv/bin/python scripts/settings_table.py --write   # replace it in docs/configuration.md
    .venv/bin/python scripts/settings_table.py --check   # exit 1 when the page's table is stale

The page holds the table between `<!-- settings:start -->` and `<!-- settings:end -->`;
tests/test_readme.py runs the check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from contextq.settings import Settings  # noqa: E402

START, END = "<!-- settings:start -->", "<!-- settings:end -->"
PAGE = ROOT / "docs" / "configuration.md"

MEANING: dict[str, str] = {
    "ENVIRONMENT": "`development`, `test` or `production`; production refuses the TEST_* hooks",
    "DATA_DIR": "database (SQLite), blobs (`BLOB_STORE=filesystem`) or the blob cache (`s3`), "
    "workspaces, embedded broker data, metrics, logs, dev key and secrets",
    "DATABASE_URL": "SQLAlchemy URL; unset: `sqlite:///DATA_DIR/contextq.db` (WAL). "
    "PostgreSQL: `postgresql+psycopg://user:pass@host/db`",
    "REDIS_URL": "broker and Celery results; unset: `contextq up` starts an embedded Valkey",
    "MAX_TOKENS_PER_FILE": "final tiktoken truncation of every processed text",
    "MAX_TOTAL_OUTPUT": "characters of processed output per file",
    "MAX_LINES": "lines kept of a text or code file",
    "MAX_LINE_LENGTH": "characters kept of one line",
    "MAX_COLUMNS": "CSV/TSV/XLSX columns kept",
    "DEFAULT_ROWS_HEAD": "first rows kept of a table",
    "DEFAULT_ROWS_TAIL": "last rows kept of a table",
    "MAX_CELL_LENGTH": "characters kept of one cell",
    "MAX_NESTING_DEPTH": "JSON/YAML/XML depth kept",
    "MAX_ARRAY_ITEMS": "items kept of one array",
    "MAX_OBJECT_KEYS": "keys kept of one object",
    "MAX_STRING_LENGTH": "characters kept of one string value",
    "MAX_IMAGE_ATTACHMENT_SIZE": "bytes; larger images are resized (LANCZOS)",
    "MAX_IMAGE_DIMENSION": "pixels of the longer side; unset: resize by size only",
    "MAX_IMAGE_PIXELS": "pixels; a larger image is refused (decompression bomb)",
    "MAX_AUDIO_BYTES": "bytes; larger audio is subsampled (mono, lower rate) and cut",
    "MAX_AUDIO_DURATION_S": "seconds of audio kept",
    "MAX_ARCHIVE_ENTRIES": "entries of a zip-based file (DOCX, XLSX, …) before it is refused",
    "MAX_ARCHIVE_UNCOMPRESSED_BYTES": "summed uncompressed size of a zip-based file",
    "MAX_ARCHIVE_RATIO": "compression ratio over which a zip-based file is refused",
    "MAX_JSON_PARSE_BYTES": "JSON above this is streamed (ijson) instead of parsed whole",
    "HISTORY_COMPACTION_MAX_TOKENS": "history tokens that trigger a compaction",
    "HISTORY_COMPACTION_TARGET_TOKENS": "size a compaction aims for",
    "SUMMARIZER_INPUT_MAX_TOKENS": "tokens given to the summariser at most",
    "MAX_PINNED_MESSAGES": "pinned messages per conversation (over: 422)",
    "MIN_MESSAGES_TO_KEEP": (
        "newest messages every strategy that drops messages keeps, while the budget holds "
        "them (then fewer, with a warning in the answer)"
    ),
    "LLM_PROVIDER": "provider whose context window applies to models the catalogue does not "
    "know: `azure-openai` 100 000, `openai` 100 000, `aws-bedrock` 150 000, `anthropic-claude` "
    "150 000, `anthropic` 150 000, `google-gemini` 800 000, `gcp-vertexai` 150 000, or a "
    "catalogue id (`google`, `mistral`, `meta`, `qwen`, `deepseek`, `xai`)",
    "MAX_CONTEXT_TOKENS": "caps the context window of every model",
    "ENABLE_AUTO_COMPRESSION": (
        "filter the context and compact automatically past the threshold (insert trigger "
        "and beat sweep); `false`: only `force_filter` and `POST …/compact` (the hard room "
        "still holds)"
    ),
    "SUMMARIZER": "`extractive` (offline), `openai` (any OpenAI-compatible endpoint) "
    "or `truncation`",
    "OPENAI_BASE_URL": "endpoint of the `openai` summariser",
    "OPENAI_API_KEY": "key of the `openai` summariser",
    "SUMMARIZER_MODEL": "model of the `openai` summariser",
    "SUMMARIZER_TIMEOUT_S": "seconds per summariser call",
    "SUMMARIZER_MAX_RETRIES": "retries of a failed summariser call",
    "MAX_UPLOAD_BYTES": (
        "bytes per upload; over: 413 — before any of the body is read when its "
        "Content-Length says so (on `POST /v1/files`, past the limit plus 64 KiB of "
        "multipart framing); a body without one (chunked) is read until it passes the "
        "limit, then refused and its temporary blob removed"
    ),
    "TASK_SOFT_TIME_LIMIT_S": "soft limit per task (the task fails the file saying so)",
    "TASK_TIME_LIMIT_S": "hard limit per task (the pool child is killed and replaced)",
    "MAX_ATTEMPTS": "processing attempts per file (worker killed or timed out) before `failed`",
    "BLOB_STORE": "`filesystem` (`DATA_DIR/blobs`, a disk every host sees) or `s3` "
    "(docs/scaling.md); checked at start by the API and the worker",
    "S3_BUCKET": "`BLOB_STORE=s3`: an existing bucket; credentials from the standard AWS "
    "variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, a role)",
    "S3_PREFIX": "key prefix in the bucket (`contextq/`): blobs under `<prefix>blobs/`, "
    "uploads in flight under `<prefix>tmp/`",
    "S3_ENDPOINT_URL": "an S3-compatible server (MinIO, Ceph, Garage, moto): "
    "`http://host:9000`; unset: AWS",
    "S3_PART_SIZE_BYTES": "multipart part size of S3 uploads (memory: about four parts "
    "per upload in flight)",
    "BLOB_CACHE_MAX_BYTES": "`BLOB_STORE=s3`: blobs kept on a host's disk for its workers "
    "(`DATA_DIR/cache/blobs`, least recently used go first); 0: download per task",
    "RECOVERY_SWEEP_INTERVAL_S": "how often beat re-enqueues stuck `uploaded`/`processing` rows",
    "RECOVERY_UPLOADED_GRACE_S": "an `uploaded` row younger than this is left to its own enqueue",
    "COMPACTION_SWEEP_INTERVAL_S": "how often beat looks for conversations past the threshold",
    "WORKER_MAX_MEMORY_MB": "a pool child over it is replaced after its task",
    "TASK_EXPIRES_S": "every enqueued message expires after this",
    "BROKER_VISIBILITY_TIMEOUT_S": "seconds before an unacked message (killed worker) comes "
    "back; unset: TASK_TIME_LIMIT_S + 60",
    "LOG_LEVEL": "level of the API, worker and beat logs (`DEBUG` … `CRITICAL`)",
    "LOG_FORMAT": "`text`, or `json`: one JSON object per line (python-json-logger)",
    "CHUNK_TOKENS": "target tokens of a project chunk (search and retrieval, docs/retrieval.md)",
    "CHUNK_OVERLAP_TOKENS": "tokens a chunk repeats from the one before it (at most half)",
    "MAX_INDEX_TOKENS_PER_FILE": "tokens of one file indexed for search at most; the file "
    "says where indexing stopped",
    "EVENT_RETENTION_S": "how long events are kept: `GET /v1/events` resumes with "
    "`Last-Event-ID` over this window; the events sweep deletes older ones",
    "EVENTS_SWEEP_INTERVAL_S": "how often beat deletes expired events and enqueues webhook "
    "deliveries that are due",
    "EVENTS_HEARTBEAT_S": "seconds between heartbeat comments on an idle `GET /v1/events` stream",
    "CONTEXT_EVENTS": "record `context.filtered` / `context.strategy_unknown` (one per "
    "filtered context read, written off the request's path)",
    "WEBHOOK_RETRY_DELAYS_S": "seconds before each retry of a failed webhook delivery "
    "(comma-separated; after the last one the delivery is `failed`)",
    "WEBHOOK_ALLOWED_HOSTS": "comma-separated hosts, as written in the URL, that webhooks may "
    "reach although they are loopback/private (SSRF guard)",
    "WEBHOOK_TIMEOUT_S": "seconds one webhook attempt may take (connect, send, answer)",
    "FLOWER_USER": "Flower basic-auth user",
    "FLOWER_PASSWORD": "Flower basic-auth password; unset: generated once into "
    "DATA_DIR/flower-password (0600)",
    "TEST_PROCESS_DELAY_S": "test hook: process_file sleeps after claiming a row "
    "(refused in production)",
    "TEST_KILL_SENTINEL": "test hook: process_file SIGKILLs itself for files containing it "
    "(refused in production)",
}

MiB = 1024 * 1024


def _default(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int) and value >= MiB and value % MiB == 0:
        return f"{value} ({value // MiB} MiB)"
    return str(value)


def source_comments() -> dict[str, str]:
    """The comment next to (or just above) each field in contextq/settings.py: the
    meaning of a setting added without an entry in MEANING."""
    comments: dict[str, str] = {}
    above: list[str] = []
    for line in (ROOT / "contextq" / "settings.py").read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("# ").strip())
            continue
        match = re.match(r"\s+([A-Z][A-Z0-9_]+):[^#]*(?:#\s*(.*))?$", line)
        if match:
            text = match.group(2) or " ".join(above)
            comments[match.group(1)] = text.replace("|", "\\|")
        above = []
    return comments


def table() -> str:
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    comments = source_comments()
    for name, field in Settings.model_fields.items():
        meaning = MEANING.get(name) or comments.get(name, "")
        rows.append(f"| `{name}` | {_default(field.default)} | {meaning} |")
    return "\n".join(rows)


def documented_table(page: str) -> str:
    """The table as the page holds it (between the markers); "" when the markers are gone."""
    if START not in page or END not in page:
        return ""
    return page.split(START, 1)[1].split(END, 1)[0].strip("\n")


def main() -> int:
    text = table()
    if "--check" in sys.argv:
        if documented_table(PAGE.read_text(encoding="utf-8")) == text:
            return 0
        print(f"{PAGE.relative_to(ROOT)} is stale: run {sys.argv[0]} --write", file=sys.stderr)
        return 1
    if "--write" not in sys.argv:
        print(text)
        return 0
    content = PAGE.read_text(encoding="utf-8")
    head, _, rest = content.partition(START)
    _, _, tail = rest.partition(END)
    PAGE.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
