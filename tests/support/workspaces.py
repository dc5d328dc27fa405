"""Workspace helpers for tests: URLs that reach the server exactly as written."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote


def ws_url(conversation_id: str, path: str = "") -> str:
    """The URL of a workspace path, every byte percent-encoded and the dots too, so no
    client normalises `..` away before the server sees it."""
    base = f"/v1/conversations/{conversation_id}/workspace"
    if not path:
        return base
    return base + "/" + quote(path, safe="/").replace(".", "%2E")


def new_conversation(client: Any, **body: Any) -> str:
    resp = client.post("/v1/conversations", json=body)
    assert resp.status_code == 201, resp.text
    conversation_id: str = resp.json()["id"]
    return conversation_id


def put_file(client: Any, conversation_id: str, path: str, data: bytes, expect: int = 201) -> Any:
    resp = client.put(ws_url(conversation_id, path), content=data)
    assert resp.status_code == expect, (resp.status_code, resp.text)
    return (
        resp.json() if resp.headers.get("content-type", "").startswith("application/json") else resp
    )
