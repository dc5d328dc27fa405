"""Routes: the owner's settings (docs/history.md#the-ready-to-send-context): the system prompt
conversations without their own get, over the packaged default."""

from __future__ import annotations

from fastapi import APIRouter, Response

from api.deps import OwnerDep, read, write
from api.responses import json_response
from api.schemas.settings import SettingsPublic, SettingsUpdate
from service import settings as owner_settings

router = APIRouter(tags=["settings"])


@router.get("/settings", response_model=SettingsPublic)
async def get_settings(owner_id: OwnerDep) -> Response:
    answer = await read(owner_settings.get_settings, owner_id=owner_id)
    return json_response(SettingsPublic.model_validate(answer))


@router.put("/settings", response_model=SettingsPublic)
async def put_settings(body: SettingsUpdate, owner_id: OwnerDep) -> Response:
    answer = await write(
        owner_settings.put_settings, owner_id=owner_id, system_prompt=body.system_prompt
    )
    return json_response(SettingsPublic.model_validate(answer))
