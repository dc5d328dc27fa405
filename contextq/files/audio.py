"""Placeholder: being written (issue 3)."""

from __future__ import annotations

from pathlib import Path

from contextq.errors import UnsupportedFileType
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult


class AudioProcessor:
    name = "audio"

    def accepts(self, info: StreamInfo) -> bool:
        return info.category == "audio"

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        raise UnsupportedFileType("audio processing is not available yet")
