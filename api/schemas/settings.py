"""Request and response models of `GET/PUT /v1/settings`
(docs/history.md#the-ready-to-send-context)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class SettingsUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system_prompt: str | None = Field(default=None, max_length=200_000)


class SettingsPublic(BaseModel):
    system_prompt: str | None  # the owner's saved prompt; null: the packaged default applies
    default_system_prompt: str  # the packaged default
    updated_at: datetime | None
