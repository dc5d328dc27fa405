"""The SDK against a real `contextq up` (worker, beat, broker): uploads that wait on the
long poll, the event stream, health, the async client."""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path

import pytest

from contextq.testing import RunningStack
from contextq_client import AsyncClient, Client

pytestmark = pytest.mark.integration


def test_health(contextq_client: Client) -> None:
    health = contextq_client.health()
    assert health.ok and health.live_workers >= 1


def test_upload_waits_for_the_worker(contextq_client: Client, tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nThe launch is on Friday.\n")
    from_path = contextq_client.files.upload(path, wait=True)
    assert from_path.status == "ready" and from_path.filename == "notes.md"
    assert "Friday" in contextq_client.files.content(from_path.id)
    from_bytes = contextq_client.files.upload(b"a,b\n1,2\n3,4\n", filename="t.csv", wait=True)
    assert from_bytes.status == "ready" and from_bytes.category == "tabular"
    handle = io.BytesIO(b"plain text")
    handle.name = "/somewhere/plain.txt"
    from_handle = contextq_client.files.upload(handle, wait=True)
    assert from_handle.filename == "plain.txt" and from_handle.done
    broken = contextq_client.files.upload(b"%PDF-1.7 not really", filename="x.pdf", wait=True)
    assert broken.status == "failed" and broken.error


def test_wait_returns_at_the_timeout(contextq_client: Client) -> None:
    uploaded = contextq_client.files.upload(b"x" * 10, filename="x.txt")
    started = time.monotonic()
    current = contextq_client.files.wait(uploaded.id, timeout=0)
    assert time.monotonic() - started < 5
    assert current.id == uploaded.id


def test_events_stream_replays_from_an_id(contextq_client: Client) -> None:
    uploaded = contextq_client.files.upload(b"hello events", filename="e.txt", wait=True)
    found = None
    for event in contextq_client.events.stream(last_event_id=0):  # replays what is kept
        if event.data.get("id") == uploaded.id:
            found = event
            break
    assert found is not None and found.type == "file.ready"
    later = next(iter(contextq_client.events.stream(last_event_id=found.id - 1)))
    assert later.id == found.id


def test_async_client_uploads_and_waits(contextq_stack: RunningStack) -> None:
    async def scenario() -> tuple[str, int]:
        async with AsyncClient(contextq_stack.base_url, api_key=contextq_stack.api_key) as c:
            files = await asyncio.gather(
                *(
                    c.files.upload(f"row,{i}\n".encode(), filename=f"{i}.csv", wait=True)
                    for i in range(3)
                )
            )
            listed = [f async for f in c.files.iter(page_size=2)]
            assert {f.id for f in files} <= {f.id for f in listed}
            health = await c.health()
            return files[0].status, health.live_workers

    status, workers = asyncio.run(scenario())
    assert status == "ready" and workers >= 1
