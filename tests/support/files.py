"""Upload and poll helpers that work with httpx.Client and TestClient alike."""

from __future__ import annotations

import time
from typing import Any

TERMINAL = ("ready", "failed")


def upload(
    client: Any,
    filename: str,
    data: bytes,
    *,
    content_type: str = "application/octet-stream",
    conversation_id: str | None = None,
    project_id: str | None = None,
    expect: int | None = 202,
) -> Any:
    """POST /v1/files; returns the parsed JSON (or the response when `expect` is None)."""
    form = {}
    if conversation_id is not None:
        form["conversation_id"] = conversation_id
    if project_id is not None:
        form["project_id"] = project_id
    resp = client.post("/v1/files", files={"file": (filename, data, content_type)}, data=form)
    if expect is None:
        return resp
    assert resp.status_code == expect, (resp.status_code, resp.text)
    return resp.json()


def upload_targets(client: Any, owner_id: str) -> tuple[str, str]:
    """A conversation and a project of the owner (over the API), for uploads that name
    them."""
    cid = client.post("/v1/conversations", json={}).json()["id"]
    pid = client.post("/v1/projects", json={"name": "reports"}).json()["id"]
    return str(cid), str(pid)


def wait_file_done(client: Any, file_id: str, *, timeout: float = 60.0) -> dict[str, Any]:
    """Poll GET /v1/files/{id} until ready or failed; return the File object."""
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        resp = client.get(f"/v1/files/{file_id}")
        assert resp.status_code == 200, (resp.status_code, resp.text)
        body = resp.json()
        if body["status"] in TERMINAL:
            return body
        time.sleep(0.05)
    raise TimeoutError(f"file {file_id} still {body.get('status')!r} after {timeout}s: {body}")


def multipart_body(
    filename: bytes,
    data: bytes,
    *,
    fields: dict[str, str] | None = None,
    boundary: str = "contextqTestBoundary7MA4YWxkTrZu0gW",
    content_type: bytes = b"application/octet-stream",
) -> tuple[str, bytes]:
    """A multipart/form-data body built by hand, so a test controls every byte of the
    filename (clients percent-encode control characters). Returns (content_type, body)."""
    b = boundary.encode()
    parts: list[bytes] = []
    for name, value in (fields or {}).items():
        parts.append(
            b"--"
            + b
            + b'\r\nContent-Disposition: form-data; name="'
            + name.encode()
            + b'"\r\n\r\n'
            + value.encode()
            + b"\r\n"
        )
    parts.append(
        b"--"
        + b
        + b'\r\nContent-Disposition: form-data; name="file"; filename="'
        + filename
        + b'"\r\nContent-Type: '
        + content_type
        + b"\r\n\r\n"
        + data
        + b"\r\n"
    )
    parts.append(b"--" + b + b"--\r\n")
    return f"multipart/form-data; boundary={boundary}", b"".join(parts)


def upload_raw(
    client: Any, filename: bytes, data: bytes, *, expect: int | None = 202, **kw: Any
) -> Any:
    ctype, body = multipart_body(filename, data, **kw)
    resp = client.post("/v1/files", content=body, headers={"Content-Type": ctype})
    if expect is None:
        return resp
    assert resp.status_code == expect, (resp.status_code, resp.text)
    return resp.json()
