"""The one error vocabulary: what the engine, the service and the API's routes raise.

Mapped to HTTP status in exactly one place (`api/errors.py`; a route raises these, never
an HTTP exception: ruff's banned-api rule says so) and to row status in exactly one place
(`tasks/files.py` via `store`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class ContextqError(Exception):
    """Base of every error the engine raises on purpose. `str(e)` is shown to users."""


class UnsupportedFileType(ContextqError):
    """The bytes are of a kind we do not process."""


class InvalidInput(ContextqError):
    """The bytes claim a format but cannot be read as it (corrupt, truncated, encrypted)."""


class InputTooLarge(ContextqError):
    """The input (or what it expands to) is over a configured limit."""


class UploadTooLarge(InputTooLarge):
    """An upload's body is over MAX_UPLOAD_BYTES, refused before the rest of it is read:
    the answer closes the connection (what was not read is not waited for)."""


class BadRequest(ContextqError):
    """The request itself cannot be read: a malformed body, or one cut off before its end."""


class Unauthenticated(ContextqError):
    """No credentials, or ones that name no one; the message says how to send them."""


class Forbidden(ContextqError):
    """The credentials are known (or none are needed) but do not allow this."""


class HostileInput(ContextqError):
    """The input looks built to exhaust resources: zip/XML/YAML bombs, decompression bombs."""


@dataclass(frozen=True)
class Problem:
    """One invalid value of a request: where it is (`("body", "messages", 0, "role")`),
    what is wrong with it, and the kind of error (a validator's own type name)."""

    loc: tuple[str | int, ...]
    msg: str
    type: str


class ValidationFailed(ContextqError):
    """Options or arguments are invalid; `field` names the culprit, or `problems` lists
    every invalid value (a request body checked against its schema)."""

    def __init__(
        self, message: str, *, field: str | None = None, problems: Sequence[Problem] = ()
    ) -> None:
        super().__init__(message)
        self.field = field
        self.problems = tuple(problems)


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
