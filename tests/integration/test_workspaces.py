"""Workspaces with every part real: uvicorn, a Celery worker, Valkey, SQLite (docs/workspaces.md).

A workspace file is processed by the same queue as uploads; a 50 000-row CSV tool
result goes to /workspace/tool-results/ at insert and reads back in portions and raw;
a reader never sees a partial file while a PUT streams; the CLI works against the API.
"""

from __future__ import annotations

import hashlib
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from contextq.settings import get_settings
from tests.engine.files.media_samples import pdf_bytes, sentinel_for
from tests.support.files import wait_file_done
from tests.support.procs import executable
from tests.support.workspaces import new_conversation, put_file, ws_url

pytestmark = pytest.mark.integration


def csv_rows(n: int) -> str:
    return "id,value\n" + "".join(f"{i},{i * 3}\n" for i in range(n))


def test_a_workspace_file_is_processed_by_the_queue(stack, worker, client) -> None:
    conv = new_conversation(client)
    data = csv_rows(5000).encode()
    entry = put_file(client, conv, "reports/big.csv", data)
    done = wait_file_done(client, entry["file_id"])
    assert done["status"] == "ready" and done["category"] == "tabular"
    assert done["conversation_id"] == conv
    listed = client.get(ws_url(conv), params={"prefix": "reports/"}).json()["data"]
    assert listed[0]["status"] == "ready"
    view = client.get(ws_url(conv, "reports/big.csv"), params={"view": "processed"}).json()
    assert view["truncation"]["truncated"] is True
    assert "| 0 | 0 |" in view["text"] and "| 4999 | 14997 |" in view["text"]
    assert "| 2500 | 7500 |" not in view["text"]
    assert view["processed_token_count"] == done["processed_token_count"]


def test_a_50000_row_csv_tool_result_round_trip(stack, worker, client) -> None:
    conv = new_conversation(client)
    content = csv_rows(50_000)
    call = {"id": "call_1", "type": "function", "function": {"name": "sql", "arguments": "{}"}}
    resp = client.post(
        f"/v1/conversations/{conv}/messages",
        json={
            "messages": [
                {"role": "user", "content": "export the table"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_1", "content": content},
            ]
        },
    )
    assert resp.status_code == 201, resp.text
    tool_message = resp.json()["data"][2]
    path = f"tool-results/{tool_message['id']}.csv"
    listed = client.get(ws_url(conv), params={"prefix": "/workspace/tool-results/"}).json()
    assert [e["path"] for e in listed["data"]] == [path]
    entry = listed["data"][0]
    assert entry["sha256"] == hashlib.sha256(content.encode()).hexdigest()
    assert wait_file_done(client, entry["file_id"])["status"] == "ready"

    stored = client.get(f"/v1/conversations/{conv}/messages").json()["data"][2]
    assert stored["content"] == content  # kept whole in the database

    raw = client.get(ws_url(conv, path))
    assert raw.status_code == 200 and raw.content == content.encode()

    view = client.get(ws_url(conv, path), params={"view": "processed"}).json()
    assert "| 0 | 0 |" in view["text"] and "| 49999 | 149997 |" in view["text"]
    assert "rows" in view["truncation"]["summary"]

    portion = client.get(
        ws_url(conv, path), params={"view": "processed", "offset": 25_000, "limit": 20}
    ).json()
    lines = portion["text"].splitlines()
    assert lines[0] == "| id | value |"
    assert lines[2:] == [f"| {i} | {i * 3} |" for i in range(25_000, 25_020)]
    assert portion["portion"] == {
        "unit": "rows",
        "offset": 25_000,
        "returned": 20,
        "next_offset": 25_020,
        "total": 50_000,
        "sheet": None,
    }


def test_small_tool_results_stay_out_of_the_workspace(stack, client) -> None:
    conv = new_conversation(client)
    call = {"id": "c", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    client.post(
        f"/v1/conversations/{conv}/messages",
        json={
            "messages": [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c", "content": "a.txt b.txt"},
            ]
        },
    ).raise_for_status()
    assert client.get(ws_url(conv)).json()["data"] == []


def test_pdf_pages_through_the_worker(stack, worker, client) -> None:
    conv = new_conversation(client)
    entry = put_file(client, conv, "docs/report.pdf", pdf_bytes(4, per_page_sentinel=True))
    assert wait_file_done(client, entry["file_id"])["status"] == "ready"
    got = client.get(
        ws_url(conv, "docs/report.pdf"), params={"view": "processed", "offset": 2, "limit": 1}
    ).json()
    assert sentinel_for(3) in got["text"] and sentinel_for(2) not in got["text"]
    assert got["portion"]["unit"] == "pages" and got["portion"]["total"] == 4


def test_a_reader_never_sees_a_partial_file_while_a_put_streams(stack, client) -> None:
    conv = new_conversation(client)
    old, new = b"a" * 2_000_000, b"b" * 2_000_000
    put_file(client, conv, "big.bin", old)
    host = get_settings().workspaces_dir
    on_disk = next(host.rglob("big.bin"))
    streaming = threading.Event()
    result: dict[str, Any] = {}

    def slow_body() -> Any:
        for i in range(0, len(new), 100_000):
            streaming.set()
            time.sleep(0.05)
            yield new[i : i + 100_000]

    def writer() -> None:
        result["resp"] = client.put(ws_url(conv, "big.bin"), content=slow_body())

    thread = threading.Thread(target=writer)
    thread.start()
    streaming.wait(10)
    seen_api: set[bytes] = set()
    seen_disk: set[bytes] = set()
    while thread.is_alive():
        body = client.get(ws_url(conv, "big.bin")).content
        seen_api.add(body[:1] + str(len(body)).encode() + body[-1:])
        disk = on_disk.read_bytes()
        seen_disk.add(disk[:1] + str(len(disk)).encode() + disk[-1:])
    thread.join()
    assert result["resp"].status_code == 201, result["resp"].text
    assert b"a2000000a" in seen_api  # the old file was read while the PUT streamed
    assert seen_api <= {b"a2000000a", b"b2000000b"}
    assert seen_disk <= {b"a2000000a", b"b2000000b"}
    assert client.get(ws_url(conv, "big.bin")).content == new


def _cli(stack: Any, api: Any, key: str, *args: str, **kw: Any) -> subprocess.CompletedProcess:
    return subprocess.run(
        [executable("contextq"), "workspace", *args, "--api", api.base_url, "--key", key],
        env=stack.subprocess_env(),
        capture_output=True,
        timeout=60,
        check=False,
        **kw,
    )


def test_cli_put_ls_get_rm(stack, api_server, owner, client, tmp_path: Path) -> None:
    conv = new_conversation(client)
    local = tmp_path / "notes.md"
    local.write_bytes("# Notes\n\nsome text ✓\n".encode())
    put = _cli(stack, api_server, owner.key, "put", conv, str(local), "/workspace/docs/notes.md")
    assert put.returncode == 0, put.stderr.decode()
    assert b"/workspace/docs/notes.md" in put.stdout
    default = _cli(stack, api_server, owner.key, "put", conv, str(local))
    assert default.returncode == 0, default.stderr.decode()

    ls = _cli(stack, api_server, owner.key, "ls", conv, "docs/")
    assert ls.returncode == 0 and b"docs/notes.md" in ls.stdout
    assert b"notes.md" in _cli(stack, api_server, owner.key, "ls", conv).stdout

    got = _cli(stack, api_server, owner.key, "get", conv, "docs/notes.md")
    assert got.returncode == 0 and got.stdout == local.read_bytes()
    out = tmp_path / "copy.md"
    got = _cli(stack, api_server, owner.key, "get", conv, "docs/notes.md", "-o", str(out))
    assert got.returncode == 0 and out.read_bytes() == local.read_bytes()

    rm = _cli(stack, api_server, owner.key, "rm", conv, "docs/notes.md")
    assert rm.returncode == 0, rm.stderr.decode()
    missing = _cli(stack, api_server, owner.key, "get", conv, "docs/notes.md", "-o", str(out))
    assert missing.returncode == 1 and b"HTTP 404" in missing.stderr
    assert out.read_bytes() == local.read_bytes()  # a failed get leaves -o FILE alone
    hostile = _cli(stack, api_server, owner.key, "put", conv, str(local), "../escape.md")
    assert hostile.returncode == 1 and b"HTTP 422" in hostile.stderr
    assert b"`..` is not allowed" in hostile.stderr
