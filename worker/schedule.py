"""Beat schedule (filled by the spine)."""

from typing import Any

from contextq.settings import Settings


def beat_schedule(settings: Settings) -> dict[str, Any]:
    return {}
