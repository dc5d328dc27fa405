"""One settings class. Every limit of docs/files.md is settable by an env var of the same name."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from contextq.errors import ValidationFailed
from contextq.providers import DEFAULT_LLM_PROVIDER, check_provider_name
from contextq.strategy_options import DEFAULT_MAX_PINNED, validate_options

MiB = 1024 * 1024


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=True)

    ENVIRONMENT: Literal["development", "test", "production"] = "development"

    # where things live
    DATA_DIR: Path = Path(".contextq")
    DATABASE_URL: str | None = None  # default: sqlite file in DATA_DIR
    REDIS_URL: str | None = None  # default: the embedded Valkey started by `contextq up`

    # files (docs/files.md)
    MAX_TOKENS_PER_FILE: int = Field(5000, ge=1)
    MAX_TOTAL_OUTPUT: int = Field(50_000, ge=1)
    MAX_LINES: int = Field(200, ge=1)
    MAX_LINE_LENGTH: int = Field(1000, ge=1)
    MAX_COLUMNS: int = Field(50, ge=1)
    DEFAULT_ROWS_HEAD: int = Field(20, ge=0)
    DEFAULT_ROWS_TAIL: int = Field(10, ge=0)
    MAX_CELL_LENGTH: int = Field(500, ge=1)
    MAX_NESTING_DEPTH: int = Field(5, ge=1)
    MAX_ARRAY_ITEMS: int = Field(50, ge=1)
    MAX_OBJECT_KEYS: int = Field(50, ge=1)
    MAX_STRING_LENGTH: int = Field(500, ge=1)
    MAX_IMAGE_ATTACHMENT_SIZE: int = Field(2 * MiB, ge=1024)
    MAX_IMAGE_DIMENSION: int | None = Field(None, ge=16)
    # Pillow's own default; over it is an error here
    MAX_IMAGE_PIXELS: int = Field(89_478_485, ge=1)
    MAX_AUDIO_BYTES: int = Field(10 * MiB, ge=1024)
    MAX_AUDIO_DURATION_S: float = Field(600.0, gt=0)
    # archives (DOCX/XLSX/PPTX/ODS/EPUB are zip files): checked before any parser opens them
    MAX_ARCHIVE_ENTRIES: int = Field(10_000, ge=1)
    MAX_ARCHIVE_UNCOMPRESSED_BYTES: int = Field(1024 * MiB, ge=1)
    MAX_ARCHIVE_RATIO: float = Field(200.0, gt=1)
    MAX_JSON_PARSE_BYTES: int = Field(64 * MiB, ge=1)  # above: streamed with ijson

    # history (docs/history.md#history-strategies, docs/history.md#compaction)
    HISTORY_COMPACTION_MAX_TOKENS: int = Field(120_000, ge=1)
    HISTORY_COMPACTION_TARGET_TOKENS: int = Field(40_000, ge=1)
    SUMMARIZER_INPUT_MAX_TOKENS: int = Field(180_000, ge=1)
    MAX_PINNED_MESSAGES: int = Field(DEFAULT_MAX_PINNED, ge=0)
    MIN_MESSAGES_TO_KEEP: int = Field(10, ge=0)
    MAX_CONTEXT_TOKENS: int | None = Field(None, ge=1)
    ENABLE_AUTO_COMPRESSION: bool = True
    SUMMARIZER: Literal["extractive", "openai", "truncation"] = "extractive"
    OPENAI_BASE_URL: str = "https://api.openai.com/v1"
    OPENAI_API_KEY: str | None = None
    SUMMARIZER_MODEL: str = "gpt-4o-mini"
    SUMMARIZER_TIMEOUT_S: float = Field(60.0, gt=0)
    SUMMARIZER_MAX_RETRIES: int = Field(3, ge=0)

    # --- memory, provider and context defaults (docs/history.md#hierarchical-memory,
    # docs/history.md#history-strategies) --------------------- provider whose window applies to
    # models the catalogue does not know (contextq.providers)
    LLM_PROVIDER: str = DEFAULT_LLM_PROVIDER
    # strategy of a conversation that names none
    CONTEXT_DEFAULT_STRATEGY: Literal["token_budget", "sliding_window", "noop", "hierarchical"] = (
        "token_budget"
    )
    # options (a JSON object) of CONTEXT_DEFAULT_STRATEGY for a conversation that sets none
    CONTEXT_DEFAULT_OPTIONS: dict[str, Any] = {}
    # usage (context tokens / window) at which filtering starts, for a conversation that sets none
    CONTEXT_DEFAULT_THRESHOLD: float = Field(0.8, gt=0, le=1)
    # hierarchical memory: compression runs past this share of MEMORY_MAX_WORKING_MEMORY actions
    MEMORY_COMPRESSION_THRESHOLD: float = Field(0.7, gt=0, le=1)
    # hierarchical memory: actions held in working memory at most
    MEMORY_MAX_WORKING_MEMORY: int = Field(10, ge=2, le=10_000)
    # hierarchical memory: tokens its rendered text (GET …/memory/context) is kept within
    MEMORY_MAX_CONTEXT_TOKENS: int = Field(8000, ge=100, le=2_000_000)

    # API and queue
    MAX_UPLOAD_BYTES: int = Field(1024 * MiB, ge=1)
    TASK_SOFT_TIME_LIMIT_S: int = Field(240, ge=1)
    TASK_TIME_LIMIT_S: int = Field(300, ge=2)
    MAX_ATTEMPTS: int = Field(3, ge=1)
    RECOVERY_SWEEP_INTERVAL_S: float = Field(60.0, gt=0)
    # an `uploaded` row younger than this is left to its own enqueue
    RECOVERY_UPLOADED_GRACE_S: float = Field(30.0, ge=0)
    COMPACTION_SWEEP_INTERVAL_S: float = Field(300.0, gt=0)
    WORKER_MAX_MEMORY_MB: int = Field(2048, ge=64)
    TASK_EXPIRES_S: int = Field(24 * 3600, ge=60)
    # fsync each blob (and its directory) before the row that points at it commits.
    # Default (unset): blobs are exactly as durable as the rows that point at them —
    # fsync on PostgreSQL; not on SQLite, whose WAL mode here (synchronous=NORMAL)
    # does not fsync commits either. Either way an app crash loses nothing; after a
    # power loss the worker fails a damaged upload saying so (it checks the stored size).
    BLOB_FSYNC: bool | None = None
    # a message a killed worker held comes back after this; default: TASK_TIME_LIMIT_S + 60
    # (it must stay above the hard limit, or a running task is delivered twice)
    BROKER_VISIBILITY_TIMEOUT_S: int | None = Field(None, ge=1)

    # how long an API request waits for the database (SQLite's write lock, PostgreSQL's
    # connect) before it answers 503 with Retry-After; the worker and beat wait 30 s
    DATABASE_LOCK_TIMEOUT_S: float = Field(5.0, gt=0, le=300)

    # --- operations (docs/operations.md#running-the-service) ---

    # uvicorn processes of `contextq api` (compose); unset: the number of cores
    API_WORKERS: int | None = Field(None, ge=1, le=64)
    # bearer token GET /metrics needs from anywhere but loopback; unset: loopback only
    METRICS_TOKEN: str | None = Field(None, min_length=16)
    # /healthz answers 503 once no worker has sent a heartbeat for this long
    HEALTH_WORKER_GRACE_S: float = Field(60.0, gt=0)
    # files one owner may keep; unset: no limit (over: 429)
    MAX_FILES_PER_OWNER: int | None = Field(None, ge=1)
    # bytes of one owner's uploads and workspace files together; unset: no limit (over: 429,
    # the upload or workspace write is not stored)
    MAX_STORAGE_BYTES_PER_OWNER: int | None = Field(None, ge=1)
    # requests per minute per API key, shared by every API process; unset: no limit
    RATE_LIMIT_PER_MINUTE: int | None = Field(None, ge=1)
    # how often beat deletes blobs no row references
    BLOB_SWEEP_INTERVAL_S: float = Field(3600.0, gt=0)
    # a blob written or reused this recently is never deleted by the sweep
    BLOB_SWEEP_GRACE_S: float = Field(3600.0, ge=10)

    # --- blob storage (docs/scaling.md): `filesystem` (DATA_DIR/blobs) or `s3` ---
    BLOB_STORE: Literal["filesystem", "s3"] = "filesystem"
    # the bucket (it must exist; checked at start); credentials: the standard AWS variables
    S3_BUCKET: str | None = Field(None, min_length=3, max_length=63)
    # key prefix inside the bucket (a deployment's own "folder"), e.g. `contextq/`
    S3_PREFIX: str = Field("", max_length=512)
    # an S3-compatible server (MinIO, Ceph, Garage, moto): `http://host:9000`; unset: AWS
    S3_ENDPOINT_URL: str | None = None
    # uploads past one part go out as multipart uploads of this size (memory: one part)
    S3_PART_SIZE_BYTES: int = Field(8 * MiB, ge=5 * MiB, le=512 * MiB)
    # BLOB_STORE=s3: bytes of blobs kept on a worker's disk (DATA_DIR/cache/blobs) for the
    # engine to read; least recently used go first; 0: download per task, delete after
    BLOB_CACHE_MAX_BYTES: int = Field(1024 * MiB, ge=0)

    @model_validator(mode="after")
    def _check_blob_store(self) -> Settings:
        if self.BLOB_STORE == "s3" and not self.S3_BUCKET:
            raise ValueError("BLOB_STORE=s3 needs S3_BUCKET (an existing bucket)")
        return self

    # workspaces (docs/workspaces.md): a tool message over this many tokens is also written to
    # /workspace/tool-results/<message_id>.<ext> as a workspace file
    TOOL_RESULT_OFFLOAD_TOKENS: int = Field(2000, ge=1)

    # logs of the API, worker and beat (docs/operations.md#running-the-service): level, and `text`
    # or `json` (one object a line)
    LOG_LEVEL: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    LOG_FORMAT: Literal["text", "json"] = "text"
    # projects and retrieval (docs/retrieval.md): chunking of a file's whole text for search
    CHUNK_TOKENS: int = Field(400, ge=32, le=8192)
    CHUNK_OVERLAP_TOKENS: int = Field(40, ge=0)
    MAX_INDEX_TOKENS_PER_FILE: int = Field(2_000_000, ge=1)

    @model_validator(mode="after")
    def _check_retrieval(self) -> Settings:
        if self.CHUNK_OVERLAP_TOKENS * 2 > self.CHUNK_TOKENS:
            raise ValueError("CHUNK_OVERLAP_TOKENS must be at most half of CHUNK_TOKENS")
        return self

    # events and webhooks (docs/events.md)
    # how long events are kept (GET /v1/events resumes with Last-Event-ID over this window)
    EVENT_RETENTION_S: int = Field(24 * 3600, ge=60)
    # how often beat deletes expired events and sends webhook deliveries that are due
    EVENTS_SWEEP_INTERVAL_S: float = Field(30.0, gt=0)
    # seconds between heartbeat comments on an idle GET /v1/events stream
    EVENTS_HEARTBEAT_S: float = Field(15.0, gt=0)
    # record `context.filtered` / `context.strategy_unknown` (one per filtered context read)
    CONTEXT_EVENTS: bool = True
    # seconds between a webhook's failed attempt and the next (comma-separated; then failed)
    WEBHOOK_RETRY_DELAYS_S: str = "5,30,120,600,3600,10800,21600,43200"
    # hosts (as written in the URL) a webhook may reach although they are private/loopback
    WEBHOOK_ALLOWED_HOSTS: str = ""
    # seconds one webhook attempt may take (connect, send, answer)
    WEBHOOK_TIMEOUT_S: float = Field(10.0, gt=0, le=60)

    # Flower (bound to loopback by `contextq up`)
    FLOWER_USER: str = "admin"
    FLOWER_PASSWORD: str | None = None  # generated and saved in DATA_DIR when unset

    # test-only hooks (honoured only when ENVIRONMENT is development or test)
    # process_file sleeps this long after claiming a row
    TEST_PROCESS_DELAY_S: float = 0.0
    # process_file SIGKILLs its own process for files containing it
    TEST_KILL_SENTINEL: str | None = None

    @field_validator("LOG_LEVEL", mode="before")
    @classmethod
    def _level_upper(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("LOG_FORMAT", mode="before")
    @classmethod
    def _format_lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("LLM_PROVIDER", mode="before")
    @classmethod
    def _provider_name(cls, value: Any) -> Any:
        return check_provider_name(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _context_defaults(self) -> Settings:
        try:
            validate_options(
                self.CONTEXT_DEFAULT_STRATEGY,
                self.CONTEXT_DEFAULT_OPTIONS,
                field="CONTEXT_DEFAULT_OPTIONS",
            )
        except ValidationFailed as exc:
            raise ValueError(f"{exc.field}: {exc}") from None
        return self

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.TASK_SOFT_TIME_LIMIT_S >= self.TASK_TIME_LIMIT_S:
            raise ValueError("TASK_SOFT_TIME_LIMIT_S must be below TASK_TIME_LIMIT_S")
        if self.HISTORY_COMPACTION_TARGET_TOKENS >= self.HISTORY_COMPACTION_MAX_TOKENS:
            raise ValueError(
                "HISTORY_COMPACTION_TARGET_TOKENS must be below HISTORY_COMPACTION_MAX_TOKENS"
            )
        if self.ENVIRONMENT == "production" and (
            self.TEST_PROCESS_DELAY_S or self.TEST_KILL_SENTINEL
        ):
            raise ValueError("TEST_* hooks are refused in production")
        if (
            self.ENVIRONMENT == "production"
            and self.broker_visibility_timeout_s <= self.TASK_TIME_LIMIT_S
        ):
            raise ValueError(
                "BROKER_VISIBILITY_TIMEOUT_S must be above TASK_TIME_LIMIT_S in production, "
                "or a running task is delivered to a second worker"
            )
        return self

    @field_validator("WEBHOOK_RETRY_DELAYS_S")
    @classmethod
    def _retry_delays(cls, value: str) -> str:
        delays = _numbers(value)
        if not delays or any(d <= 0 for d in delays) or sum(delays) > 7 * 24 * 3600:
            raise ValueError(
                "WEBHOOK_RETRY_DELAYS_S: positive seconds separated by commas, 7 days in all "
                "at most (e.g. 5,30,120)"
            )
        return value

    @property
    def webhook_retry_delays_s(self) -> tuple[float, ...]:
        return tuple(_numbers(self.WEBHOOK_RETRY_DELAYS_S))

    @property
    def webhook_allowed_hosts(self) -> frozenset[str]:
        hosts = (
            h.strip().lower().strip("[]").rstrip(".") for h in self.WEBHOOK_ALLOWED_HOSTS.split(",")
        )
        return frozenset(h for h in hosts if h)

    @property
    def data_dir(self) -> Path:
        return self.DATA_DIR.expanduser().resolve()

    @property
    def database_url(self) -> str:
        return self.DATABASE_URL or f"sqlite:///{self.data_dir / 'contextq.db'}"

    @property
    def blob_dir(self) -> Path:
        return self.data_dir / "blobs"

    @property
    def s3_prefix(self) -> str:
        """S3_PREFIX without a leading slash, with one trailing slash when not empty."""
        prefix = self.S3_PREFIX.strip().strip("/")
        return f"{prefix}/" if prefix else ""

    @property
    def workspaces_dir(self) -> Path:
        """`DATA_DIR/workspaces`: one directory per owner and conversation (a sandbox
        mounts `<owner>/<conversation>` at /workspace), and `_private-data` beside them."""
        return self.data_dir / "workspaces"

    @property
    def broker_visibility_timeout_s(self) -> int:
        return self.BROKER_VISIBILITY_TIMEOUT_S or self.TASK_TIME_LIMIT_S + 60

    @property
    def blob_fsync(self) -> bool:
        if self.BLOB_FSYNC is not None:
            return self.BLOB_FSYNC
        return not self.database_url.startswith("sqlite")

    @property
    def test_hooks_enabled(self) -> bool:
        return self.ENVIRONMENT != "production"


def _numbers(value: str) -> list[float]:
    try:
        return [float(part) for part in value.split(",") if part.strip()]
    except ValueError:
        return []


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
