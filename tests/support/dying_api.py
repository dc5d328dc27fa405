"""The API with one fault injected, for `uvicorn tests.support.dying_api:app`: the process
SIGKILLs itself at the moment a committed upload's `process_file` would be published,
i.e. the API dies between the commit and the enqueue (docs/operations.md#running-the-service).
Everything else is the real app."""

from __future__ import annotations

import os
import signal
from typing import NoReturn

from service import enqueue


def _die_before_publishing(*_args: object, **_kwargs: object) -> NoReturn:
    os.kill(os.getpid(), signal.SIGKILL)
    raise SystemExit(1)  # not reached


enqueue.process_file = _die_before_publishing  # type: ignore[assignment]

from api.main import app  # noqa: E402  (after the fault is in place)

__all__ = ["app"]
