"""A small exception hierarchy for the engine.

Mapped to HTTP status in exactly one place (`api/errors.py`) and to row
status in exactly one place (`tasks/files.py` via `store`).
"""

from __future__ import annotations


class ContextqError(Exception):
    """Base of every error the engine raises on purpose. `str(e)` is shown to users."""


class UnsupportedFileType(ContextqError):
    """The bytes are of a kind we do not process."""


class InvalidInput(ContextqError):
    """The bytes claim a format but cannot be read as it (corrupt, truncated, encrypted)."""


class InputTooLarge(ContextqError):
    """The input (or what it expands to) is over a configured limit."""


class HostileInput(ContextqError):
    """The input looks built to exhaust resources: zip/XML/YAML bombs, decompression bombs."""


class ValidationFailed(ContextqError):
    """Options or arguments are invalid; `field` names the culprit."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NotFound(ContextqError):
    """The resource does not exist for this owner (a foreign one looks exactly missing)."""


class Conflict(ContextqError):
    """The resource exists but is not in a state that allows this (e.g. not ready yet)."""


class Gone(ContextqError):
    """The resource existed but its stored data is no longer there."""


class SummarizerError(ContextqError):
    """A summariser could not produce a summary. Never stored as one (DESIGN habit 10)."""


class QuotaExceeded(ContextqError):
    """An owner's quota (files, storage, request rate) would be exceeded; the message
    names the limit. `retry_after_s` is set when waiting helps (the request rate)."""

    def __init__(self, message: str, *, limit: str, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.retry_after_s = retry_after_s
