"""Following a stub (docs/workspaces.md#following-a-stub): `GET …/context?builtin_tools=true` adds
the built-in tools' definitions (target format, counted like any tool), and `POST …/tools/{name}`
runs one: a cleared stub of a tool-heavy gpt-4 conversation read back whole, a 50 000-row CSV
in portions, the workspace listed, the project searched, the memory read and written;
bad arguments 422 naming the field, a foreign conversation 404 with no data, the
traversal corpus refused with nothing read. In process, over a real SQLite file."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from contextq import builtin_tools
from contextq.history.plan import tools_tokens
from contextq.settings import get_settings
from tests.engine.workspace.hostile_paths import HOSTILE_PATHS
from tests.support.api import in_process_client
from tests.support.workspaces import new_conversation, put_file

STUB = "[Old tool result cleared ("
PATH = re.compile(r"/workspace/tool-results/[\w-]+\.\w+")
SQL_TOOL = {"type": "function", "function": {"name": "sql", "parameters": {"type": "object"}}}


def _call(call_id: str, name: str = "health") -> dict[str, Any]:
    function = {"name": name, "arguments": "{}"}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _report(n: int) -> str:
    return f"health report {n}: " + " ".join(
        f"row{n}-{k} status=ok latency={k * 7 % 300}ms" for k in range(60)
    )


def _turn(n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"U{n} check the service health"},
        _call(f"c{n}"),
        {"role": "tool", "tool_call_id": f"c{n}", "content": _report(n)},
        {"role": "assistant", "content": f"A{n} all checks passed."},
    ]


def _tool(client: Any, cid: str, name: str, arguments: Any = None) -> Any:
    kwargs = {"json": arguments} if arguments is not None else {}
    return client.post(f"/v1/conversations/{cid}/tools/{name}", **kwargs)


def _result(client: Any, cid: str, name: str, arguments: Any = None) -> str:
    r = _tool(client, cid, name, arguments)
    assert r.status_code == 200, r.text
    content: str = r.json()["content"]
    return content


def _context(client: Any, cid: str, **params: Any) -> dict[str, Any]:
    r = client.get(f"/v1/conversations/{cid}/context", params=params)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def test_builtin_tools_join_the_tools_in_the_target_format(app_client: Any) -> None:
    cid = new_conversation(app_client, model="gpt-4", tools=[SQL_TOOL])
    app_client.post(f"/v1/conversations/{cid}/messages", json={"role": "user", "content": "hi"})
    plain = _context(app_client, cid)
    with_tools = _context(app_client, cid, builtin_tools="true")
    names = [t["function"]["name"] for t in with_tools["tools"]]
    assert names == ["sql", "workspace_read", "workspace_list", "project_search"]
    assert [t["function"]["name"] for t in plain["tools"]] == ["sql"]
    read = with_tools["tools"][1]["function"]
    assert read["parameters"]["required"] == ["path"]
    assert set(read["parameters"]["properties"]) == {"path", "offset", "limit"}
    # counted like any tool: the budget shrinks by 80 % of the definitions' tokens
    added = tools_tokens(with_tools["tools"], "cl100k_base") - tools_tokens(
        plain["tools"], "cl100k_base"
    )
    shrunk = plain["budget_tokens"] - with_tools["budget_tokens"]
    assert added > 100 and abs(shrunk - int(added * 0.8)) <= 1
    claude = _context(app_client, cid, builtin_tools="true", format="anthropic")
    assert [t["name"] for t in claude["tools"]] == names
    assert all("input_schema" in t for t in claude["tools"])
    # the system prompt's "when to use which tool" names them too
    assert "`workspace_read`" in str(with_tools["messages"][0]["content"])


def test_tool_definitions_are_listed_in_each_shape(app_client: Any) -> None:
    every = list(builtin_tools.TOOLS)
    for fmt, name_of in (
        ("openai", lambda t: t["function"]["name"]),
        ("anthropic", lambda t: t["name"]),
        ("mcp", lambda t: t["name"]),
    ):
        r = app_client.get("/v1/tools", params={"format": fmt})
        assert r.status_code == 200, r.text
        assert [name_of(t) for t in r.json()["data"]] == every
    mcp = app_client.get("/v1/tools", params={"format": "mcp"}).json()["data"]
    assert mcp[0]["inputSchema"]["properties"]["offset"]["minimum"] == 0
    assert app_client.get("/v1/tools", params={"format": "xml"}).status_code == 422


def test_a_cleared_stub_of_a_gpt4_conversation_is_read_back_whole(app_client: Any) -> None:
    cid = new_conversation(app_client, model="gpt-4", context_options={"keep_tool_results": 2})
    answer: dict[str, Any] = {}
    for n in range(1, 15):
        r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": _turn(n)})
        assert r.status_code == 201, r.text
        answer = _context(app_client, cid, builtin_tools="true")
        if len(answer["cleared_tool_result_ids"]) >= 3:
            break
    texts = [str(m.get("content")) for m in answer["messages"] if m["role"] == "tool"]
    stubs = [t for t in texts if t.startswith(STUB)]
    assert len(stubs) >= 3, "the gpt-4 window clears old tool results"
    for stub in stubs:
        found = PATH.search(stub)
        assert found is not None
        content = _result(app_client, cid, "workspace_read", {"path": found.group(0)})
        text, _, tail = content.rpartition("\n\n")
        n = int(re.search(r"health report (\d+)", text).group(1))  # type: ignore[union-attr]
        assert text == _report(n), "the exact original text"
        assert tail == f"[{found.group(0)}: lines 0-0 of 1]"
    # the same path without /workspace/, and a portion past the end
    bare = PATH.search(stubs[0]).group(0).removeprefix("/workspace/")  # type: ignore[union-attr]
    assert _result(app_client, cid, "workspace_read", {"path": bare}).startswith("health report")
    past = _result(app_client, cid, "workspace_read", {"path": bare, "offset": 5})
    assert "no lines from offset 5" in past
    listed = _result(app_client, cid, "workspace_list", {"prefix": "tool-results/"})
    assert all(PATH.search(s).group(0) in listed for s in stubs)  # type: ignore[union-attr]
    assert (
        _result(app_client, cid, "workspace_list", {"prefix": "nowhere/"})
        == "The workspace has no files under `nowhere/`."
    )


def test_a_50000_row_csv_reads_in_portions(app_client: Any) -> None:
    cid = new_conversation(app_client, model="gpt-4o")
    rows = [f"{i},{i * 3}" for i in range(50_000)]  # under the message's 1 MB as JSON
    content = "id,value\n" + "\n".join(rows) + "\n"
    r = app_client.post(
        f"/v1/conversations/{cid}/messages",
        json={"messages": [
            {"role": "user", "content": "export the table"},
            _call("q1", "sql"),
            {"role": "tool", "tool_call_id": "q1", "content": content},
        ]},
    )  # fmt: skip
    assert r.status_code == 201, r.text
    path = f"/workspace/tool-results/{r.json()['data'][2]['id']}.csv"
    portion = _result(
        app_client, cid, "workspace_read", {"path": path, "offset": 25_000, "limit": 20}
    )
    lines = portion.splitlines()
    assert lines[0] == "| id | value |"
    assert lines[2:22] == [f"| {i} | {i * 3} |" for i in range(25_000, 25_020)]
    assert lines[-1] == f"[{path}: rows 25000-25019 (header row shown); continue at offset=25020]"
    last = _result(app_client, cid, "workspace_read", {"path": path, "offset": 49_990, "limit": 50})
    assert last.splitlines()[-3] == "| 49999 | 149997 |"
    assert last.endswith("rows 49990-49999 of 50000 (header row shown)]")
    r = _tool(app_client, cid, "workspace_read", {"path": path, "limit": 2001})
    assert r.status_code == 422 and "limit" in r.text  # rows come at most 2000 at a time


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"path": "a.txt", "offset": -1}, "offset"),
        ({"path": "a.txt", "offset": "ten"}, "offset"),
        ({"path": "a.txt", "limit": 0}, "limit"),
        ({"path": "a.txt", "colour": "red"}, "colour"),
        ({}, "path"),
        ({"path": 7}, "path"),
        ([1, 2], None),
        ("just text", None),
    ],
)
def test_bad_arguments_are_422_naming_the_field(
    app_client: Any, arguments: Any, field: str | None
) -> None:
    cid = new_conversation(app_client)
    r = _tool(app_client, cid, "workspace_read", arguments)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail
    if field is not None:
        assert detail[0]["loc"][-1] == field, detail


def test_unknown_tools_and_foreign_conversations_answer_404_with_no_data(
    stack: Any, app_client: Any, make_owner: Any
) -> None:
    cid = new_conversation(app_client)
    put_file(app_client, cid, "secret.txt", b"alice's secret")
    assert "alice's secret" in _result(app_client, cid, "workspace_read", {"path": "secret.txt"})
    r = _tool(app_client, cid, "shell", {"command": "ls"})
    assert r.status_code == 404 and "workspace_read" in r.json()["detail"]
    mallory = make_owner("mallory")
    with in_process_client(mallory.key) as other:
        for name, arguments in (
            ("workspace_read", {"path": "secret.txt"}),
            ("workspace_list", {}),
            ("memory_get", {}),
            ("memory_add_decision", {"decision": "take over"}),
            ("workspace_read", {"path": "../../" + cid + "/secret.txt"}),
        ):
            r = _tool(other, cid, name, arguments)
            assert r.status_code in (404, 422), (name, r.text)
            assert "secret" not in r.text
    assert _result(app_client, cid, "memory_get").startswith("The memory is empty")


def test_the_traversal_corpus_is_refused_and_reads_nothing(
    app_client: Any, owner: Any, tmp_path: Path
) -> None:
    cid = new_conversation(app_client)
    put_file(app_client, cid, "seed.txt", b"seed")
    root = get_settings().workspaces_dir / owner.owner_id / cid
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE-SECRET")
    os.symlink(outside, root / "link")
    os.symlink(outside / "secret.txt", root / "secret-link.txt")
    # a registered entry whose file was swapped for a link: opened without following it
    put_file(app_client, cid, "swapped.txt", b"inside")
    (root / "swapped.txt").unlink()
    os.symlink(outside / "secret.txt", root / "swapped.txt")
    for path in [*HOSTILE_PATHS, "link/secret.txt", "secret-link.txt", "swapped.txt"]:
        for name, arguments in (
            ("workspace_read", {"path": path}),
            ("workspace_read", {"path": path, "offset": 3, "limit": 2}),
            ("workspace_list", {"prefix": path}),
        ):
            r = _tool(app_client, cid, name, arguments)
            assert r.status_code != 500 and r.status_code < 503, (path, r.text)
            assert "OUTSIDE-SECRET" not in r.text, path
            if name == "workspace_read":
                assert r.status_code in (404, 409, 410, 422), (path, r.status_code, r.text)
                assert r.json()["detail"], path


def test_memory_tools_record_and_read(app_client: Any) -> None:
    cid = new_conversation(app_client)
    done = _result(
        app_client,
        cid,
        "memory_add_decision",
        {"decision": "use PostgreSQL", "rationale": "row locks", "impact": "high"},
    )
    assert done == "Recorded the decision (high impact); the memory holds 1 decision."
    for _ in range(3):
        seen = _result(app_client, cid, "memory_record_error", {"error": "timeout after 30 s"})
    assert "seen 3 times; it keeps coming back" in seen
    text = _result(app_client, cid, "memory_get")
    assert "use PostgreSQL" in text and "timeout" in text
    snapshot = app_client.get(f"/v1/conversations/{cid}/memory").json()
    assert snapshot["decisions"][0]["decision"] == "use PostgreSQL"
    assert snapshot["error_patterns"][0]["count"] == 3
    r = _tool(app_client, cid, "memory_add_decision", {"decision": "x", "impact": "huge"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "impact"


def test_project_search_finds_the_projects_passages(app_client: Any) -> None:
    from service import files as fs
    from tests.support.files import upload

    lone = new_conversation(app_client)
    r = _tool(app_client, lone, "project_search", {"query": "torque"})
    assert r.status_code == 409 and "no project" in r.json()["detail"]
    project = app_client.post("/v1/projects", json={"name": "manual"}).json()
    note = b"# Maintenance\n\nTighten the wheel bolts to a torque of 120 Nm.\n"
    body = upload(app_client, "maintenance.md", note, project_id=project["id"])
    fs.process_file(settings=get_settings(), file_id=body["id"])
    cid = new_conversation(app_client, project_id=project["id"])
    found = _result(app_client, cid, "project_search", {"query": "bolt torque", "limit": 3})
    assert found.startswith("[1] maintenance.md (chunk 0")
    assert "120 Nm" in found
    empty = app_client.post("/v1/projects", json={"name": "empty"}).json()
    bare = new_conversation(app_client, project_id=empty["id"])
    none = _result(app_client, bare, "project_search", {"query": "zeppelin"})
    assert none == "No passage of the project matches 'zeppelin'."
