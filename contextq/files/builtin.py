"""The built-in processors, specific ones first and generic text last."""

from __future__ import annotations

from contextq.files import archive, audio, documents, images, structured, tabular, text
from contextq.files.registry import PRIORITY_GENERIC, PRIORITY_SPECIFIC, Registry


def build_registry() -> Registry:
    registry = Registry()
    for processor in (
        images.ImageProcessor(),
        audio.AudioProcessor(),
        tabular.TabularProcessor(),
        structured.StructuredProcessor(),
        documents.DocumentProcessor(),
        archive.ArchiveProcessor(),
    ):
        registry.register(processor, priority=PRIORITY_SPECIFIC)
    registry.register(text.TextProcessor(), priority=PRIORITY_GENERIC)
    return registry
