"""Processor registry: one module per format, each self-selecting.

Modelled on markitdown's DocumentConverter: `accepts(info)` and
`process(path, info, ctx)`; processors are registered with a priority and
the generic text processor comes last. `accepts` never reads the file; the
detected type is in `info`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from contextq.files.result import Category, FileExtractionResult
from contextq.settings import Settings


@dataclass(frozen=True)
class StreamInfo:
    """What detection learned about a file. Frozen: processors cannot change it."""

    filename: str  # display name only, never a path
    extension: str  # lowercased, with dot: ".csv"; "" when none
    file_type: str  # short name: "csv", "python", "pdf", "png", ...
    category: Category
    media_type: str
    size: int
    sha256: str = ""


class ConversionCache(Protocol):
    """Converted markdown keyed by content hash + converter version + options.

    Shared across owners and workers. `lock(key)` guarantees at most one
    conversion of the same key runs at a time; a waiter re-checks `get`
    after acquiring it and reuses the result.
    """

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, markdown: str) -> None: ...

    def lock(self, key: str) -> contextlib.AbstractContextManager[None]: ...


class MemoryConversionCache:
    """In-process cache for tests and single-process use (ships next to the interface)."""

    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, key: str) -> str | None:
        return self._data.get(key)

    def put(self, key: str, markdown: str) -> None:
        self._data[key] = markdown

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        with self._guard:
            lk = self._locks.setdefault(key, threading.Lock())
        with lk:
            yield


class PartProcessor(Protocol):
    """The pipeline over one part of a file (an archive member): detection, its processor,
    the final cuts, with the cache, processors and time limits of the file it is part of."""

    def __call__(
        self, path: Path, filename: str, *, settings: Settings, work_dir: Path | None
    ) -> FileExtractionResult: ...


@dataclass
class ProcessContext:
    settings: Settings
    cache: ConversionCache | None = None
    work_dir: Path | None = None  # scratch space the caller cleans up
    # for processors that process parts (archive members); set by the pipeline
    process_part: PartProcessor | None = None
    reraise: tuple[type[BaseException], ...] = ()  # what parts must let escape (time limits)


class Processor(Protocol):
    name: str

    def accepts(self, info: StreamInfo) -> bool: ...

    def process(
        self, path: Path, info: StreamInfo, ctx: ProcessContext
    ) -> FileExtractionResult: ...


@dataclass(order=True)
class _Entry:
    priority: float
    order: int
    processor: Processor = field(compare=False)


class Registry:
    """Processors sorted by priority (lower first); ties keep registration order."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []

    def register(self, processor: Processor, *, priority: float = 0.0) -> None:
        self._entries.append(_Entry(priority, len(self._entries), processor))
        self._entries.sort()

    def find(self, info: StreamInfo) -> Processor | None:
        for entry in self._entries:
            if entry.processor.accepts(info):
                return entry.processor
        return None

    def __iter__(self) -> Iterator[Processor]:
        return (e.processor for e in self._entries)


PRIORITY_SPECIFIC = 0.0
PRIORITY_GENERIC = 10.0  # generic text comes last
