"""Placeholder: being written (issue 3)."""

from __future__ import annotations

from pathlib import Path

from contextq.errors import UnsupportedFileType
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult


class DocumentProcessor:
    name = "documents"

    def accepts(self, info: StreamInfo) -> bool:
        return info.category == "document"

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        raise UnsupportedFileType("documents processing is not available yet")
