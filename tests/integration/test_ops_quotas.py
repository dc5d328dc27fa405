"""Quotas (OWASP API4): files and bytes per owner, and the request rate per key shared by
two real API processes through the real broker."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.api import ApiServer
from tests.support.files import upload

pytestmark = pytest.mark.integration


def stored_blobs(stack: Any) -> list[Path]:
    root = Path(stack.data_dir) / "blobs"
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@pytest.mark.stack_env(MAX_FILES_PER_OWNER="2")
def test_max_files_per_owner(stack: Any, app_client: Any, make_owner: Any) -> None:
    first = upload(app_client, "a.txt", b"one\n")
    upload(app_client, "b.txt", b"two\n")
    before = stored_blobs(stack)
    refused = upload(app_client, "c.txt", b"three: never stored\n", expect=429)
    assert "MAX_FILES_PER_OWNER" in refused["detail"] and "2" in refused["detail"]
    assert stored_blobs(stack) == before  # nothing of the refused upload was kept
    other = make_owner("bob")
    resp = app_client.post(
        "/v1/files", files={"file": ("x.txt", b"bob's\n")}, headers=other.headers
    )
    assert resp.status_code == 202  # quotas are per owner
    assert app_client.delete(f"/v1/files/{first['id']}").status_code == 204
    upload(app_client, "c.txt", b"three, after a delete\n")


@pytest.mark.stack_env(MAX_STORAGE_BYTES_PER_OWNER="1000")
def test_max_storage_bytes_per_owner(stack: Any, app_client: Any) -> None:
    upload(app_client, "a.bin", b"a" * 600)
    before = stored_blobs(stack)
    refused = upload(app_client, "b.bin", b"b" * 401, expect=429)
    assert "MAX_STORAGE_BYTES_PER_OWNER" in refused["detail"]
    assert "600 of 1000 bytes" in refused["detail"] and "401 bytes" in refused["detail"]
    assert stored_blobs(stack) == before
    upload(app_client, "c.bin", b"c" * 400)  # exactly at the limit
    assert len(stored_blobs(stack)) == len(before) + 1


@pytest.mark.stack_env(MAX_STORAGE_BYTES_PER_OWNER="100000")
def test_an_upload_that_cannot_fit_is_refused_before_its_body_is_read(
    stack: Any, api_server: ApiServer, owner: Any
) -> None:
    """Content-Length says 50 MB: the 429 comes back though only 1 KB of the body was sent."""
    host, port = "127.0.0.1", api_server.port
    head = (
        f"POST /v1/files HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {owner.key}\r\n"
        "Content-Type: multipart/form-data; boundary=XyZ\r\n"
        f"Content-Length: {50_000_000}\r\n\r\n"
    ).encode()
    part = b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n'
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(head + part + b"x" * 1024)
        answer = ""
        while "MAX_STORAGE" not in answer and (chunk := sock.recv(65536)):
            answer += chunk.decode("latin-1")  # the head and the body may come apart
    assert answer.startswith("HTTP/1.1 429"), answer[:200]
    assert "MAX_STORAGE_BYTES_PER_OWNER" in answer
    assert stored_blobs(stack) == []


@pytest.mark.stack_env(RATE_LIMIT_PER_MINUTE="6")
def test_rate_limit_per_key_is_shared_by_two_api_processes(
    stack: Any, owner: Any, make_owner: Any, tmp_path: Path
) -> None:
    other = make_owner("bob")
    servers = [ApiServer(stack, log_dir=tmp_path / "logs").start() for _ in range(2)]
    try:
        statuses = []
        for i in range(6):  # alternating: 3 requests on each process
            base = servers[i % 2].base_url
            resp = httpx.get(f"{base}/v1/files", headers=owner.headers, timeout=10)
            statuses.append(resp.status_code)
        assert statuses == [200] * 6
        for server in servers:  # the 7th and 8th of this minute, whichever process
            resp = httpx.get(f"{server.base_url}/v1/files", headers=owner.headers, timeout=10)
            assert resp.status_code == 429, resp.text
            assert "RATE_LIMIT_PER_MINUTE" in resp.json()["detail"]
            assert 1 <= int(resp.headers["Retry-After"]) <= 60
        # another key has its own budget; health and metrics are never limited
        base = servers[0].base_url
        assert httpx.get(f"{base}/v1/files", headers=other.headers, timeout=10).is_success
        for _ in range(10):
            assert httpx.get(f"{base}/healthz", timeout=10).status_code == 200
            assert httpx.get(f"{base}/metrics", timeout=10).status_code == 200
        metrics = httpx.get(f"{base}/metrics", timeout=10).text
        assert 'contextq_quota_refusals_total{limit="RATE_LIMIT_PER_MINUTE"} 2.0' in metrics
    finally:
        for server in servers:
            server.stop()
