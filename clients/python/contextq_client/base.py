"""The base of the SDK's result models: unknown fields a newer server sends are kept
(`extra="allow"`), never an error."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="allow")
