"""format=responses and format=gemini through the API (docs/history.md#the-ready-to-send-context):
a tool loop (parallel calls, a failed one, a final answer, a new turn that calls again)
with an image and a document attached and tools given, read in each format. Every answer
is valid for its own SDK's types as it is, its count is recounted from the answer alone
(`tests.support.recount`), its breakdown sums to it (`context_checks.check`)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from PIL import Image

from contextq.history.types import FORMAT_NAMES
from tests.api.context_checks import check
from tests.support.files import upload

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Reads a file of the repository.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    },
    {
        "name": "run_tests",
        "description": "Runs the test suite.",
        "input_schema": {"type": "object", "properties": {"k": {"type": "string"}}},
    },
]
MODELS = {"responses": "gpt-4o", "gemini": "gemini-2.5-flash"}


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 40, 40)).save(buffer, format="PNG")
    return buffer.getvalue()


def _ready(client: Any, name: str, data: bytes) -> str:
    from contextq.settings import get_settings
    from service.files.processing import process_file

    file_id = str(upload(client, name, data)["id"])
    assert process_file(settings=get_settings(), file_id=file_id).status == "ready"
    return file_id


def _call(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for cid, n, a in calls
        ],
    }


def _tool_loop(client: Any, model: str) -> str:
    cid = client.post("/v1/conversations", json={"model": model, "tools": TOOLS}).json()["id"]
    image = _ready(client, "chart.png", _png())
    document = _ready(client, "notes.md", b"# Notes\n\nThe retry limit is 3.\n")
    messages = [
        {"role": "system", "content": "Answer in English."},
        {"role": "user", "content": "What does the chart show?", "file_ids": [image, document]},
        _call(("call_1", "read_file", {"path": "a.py"}), ("call_2", "run_tests", {"k": "x"})),
        {"role": "tool", "tool_call_id": "call_1", "content": "print('a')"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: 2 failed", "kind": "error"},
        {"role": "assistant", "content": "A red chart; two tests fail."},
        {"role": "user", "content": "Fix them."},
        _call(("call_3", "read_file", {"path": "test_a.py"})),
        {"role": "tool", "tool_call_id": "call_3", "content": "def test_a(): assert 1 == 2"},
    ]
    r = client.post(f"/v1/conversations/{cid}/messages", json={"messages": messages})
    assert r.status_code == 201, r.text
    return str(cid)


def _context(client: Any, cid: str, fmt: str) -> dict[str, Any]:
    r = client.get(f"/v1/conversations/{cid}/context", params={"format": fmt})
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    check(answer)
    assert answer["format"] == fmt and "messages" not in answer
    return answer


def test_format_responses_is_ready_for_responses_create(app_client: Any) -> None:
    from openai.types.responses import FunctionToolParam, ResponseInputParam
    from pydantic import TypeAdapter

    answer = _context(app_client, _tool_loop(app_client, MODELS["responses"]), "responses")
    items = answer["input"]
    TypeAdapter(ResponseInputParam).validate_python(items, strict=True)
    assert isinstance(answer["instructions"], str) and answer["instructions"]
    kinds = [(i["type"], i.get("role")) for i in items]
    assert kinds[:2] == [("message", "system"), ("message", "user")]  # in place, then F and U
    calls = [i for i in items if i["type"] == "function_call"]
    assert [(c["call_id"], c["name"], json.loads(c["arguments"])) for c in calls] == [
        ("call_1", "read_file", {"path": "a.py"}),
        ("call_2", "run_tests", {"k": "x"}),
        ("call_3", "read_file", {"path": "test_a.py"}),
    ]
    outputs = [(i["call_id"], i["output"]) for i in items if i["type"] == "function_call_output"]
    assert outputs == [
        ("call_1", "print('a')"),
        ("call_2", "Error: 2 failed"),
        ("call_3", "def test_a(): assert 1 == 2"),
    ]
    first = next(i for i in items if i.get("role") == "user" and "chart" in json.dumps(i))
    image = next(p for p in first["content"] if p["type"] == "input_image")
    assert image["image_url"].startswith("data:image/png;base64,") and image["detail"] == "high"
    documents = [i for i in items if '{\\"documents\\"' in json.dumps(i)]
    assert documents and documents[0]["content"][0]["type"] == "input_text"
    assistant = [i for i in items if i.get("role") == "assistant"]
    assert assistant[-1] == {"type": "message", "role": "assistant", "content": "Let me look."}
    tools = answer["tools"]
    assert [t["name"] for t in tools] == ["read_file", "run_tests"]
    for tool in tools:
        TypeAdapter(FunctionToolParam).validate_python(tool, strict=True)
        assert tool["strict"] is False
    assert answer["token_breakdown"]["files"] > 0


def test_format_gemini_is_ready_for_generate_content(app_client: Any) -> None:
    from google.genai import types

    answer = _context(app_client, _tool_loop(app_client, MODELS["gemini"]), "gemini")
    assert answer["provider"] == "google" and answer["token_count_method"] == "calibrated"
    system = types.Content.model_validate(answer["system_instruction"])
    assert system.role is None and system.parts and system.parts[-1].text == "Answer in English."
    contents = [types.Content.model_validate(c) for c in answer["contents"]]
    assert [c.role for c in contents] == ["user", "model", "user", "model", "user", "model", "user"]
    first = answer["contents"][0]["parts"]  # F (the documents) and U, its image inline
    assert '{"documents": [' in first[0]["text"] and first[1]["text"] == "What does the chart show?"
    assert first[-1]["inlineData"]["mimeType"] == "image/png"
    assert [p["functionCall"] for p in answer["contents"][1]["parts"][1:]] == [
        {"name": "read_file", "args": {"path": "a.py"}, "id": "call_1"},
        {"name": "run_tests", "args": {"k": "x"}, "id": "call_2"},
    ]  # parallel calls: FC, FC, then FR, FR, each response named after its call
    assert [p["functionResponse"] for p in answer["contents"][2]["parts"]] == [
        {"name": "read_file", "response": {"output": "print('a')"}, "id": "call_1"},
        {"name": "run_tests", "response": {"error": "Error: 2 failed"}, "id": "call_2"},
    ]
    last = answer["contents"][-1]["parts"]
    assert last == [
        {
            "functionResponse": {
                "name": "read_file",
                "response": {"output": "def test_a(): assert 1 == 2"},
                "id": "call_3",
            }
        }
    ]
    (tool,) = [types.Tool.model_validate(t) for t in answer["tools"]]
    assert [d.name for d in tool.function_declarations or ()] == ["read_file", "run_tests"]
    config = types.GenerateContentConfig.model_validate(
        {"system_instruction": answer["system_instruction"], "tools": answer["tools"]}
    )
    assert config.tools and answer["token_breakdown"]["files"] > 0


def test_an_unknown_format_is_refused_with_422(app_client: Any) -> None:
    cid = app_client.post("/v1/conversations", json={}).json()["id"]
    r = app_client.get(f"/v1/conversations/{cid}/context", params={"format": "cohere"})
    assert r.status_code == 422
    assert "responses" in r.text and "gemini" in r.text


def _names(tools: list[dict[str, Any]]) -> set[str]:
    """Tool names in any format (Gemini lists its declarations inside one tool)."""
    declared = [d for t in tools for d in t.get("function_declarations", ())]
    return {d["name"] for d in declared} | {
        t.get("name") or t["function"]["name"] for t in tools if "function_declarations" not in t
    }


@pytest.mark.parametrize("fmt", ["responses", "gemini"])
def test_builtin_tools_in_each_format(app_client: Any, fmt: str) -> None:
    listed = app_client.get("/v1/tools", params={"format": fmt})
    assert listed.status_code == 200, listed.text
    assert {"workspace_read", "memory_get"} <= _names(listed.json()["data"])
    cid = app_client.post("/v1/conversations", json={"model": MODELS[fmt]}).json()["id"]
    app_client.post(f"/v1/conversations/{cid}/messages", json={"role": "user", "content": "hi"})
    r = app_client.get(
        f"/v1/conversations/{cid}/context", params={"format": fmt, "builtin_tools": "true"}
    )
    assert r.status_code == 200, r.text
    check(r.json())
    assert {"workspace_read", "workspace_list", "project_search"} <= _names(r.json()["tools"])


NATIVE = {
    "anthropic": ("messages", "anthropic_interleaved"),
    "responses": ("items", "responses_loop"),
    "gemini": ("contents", "gemini_parallel"),
}


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@pytest.mark.parametrize("vendor", list(NATIVE))
def test_native_turns_read_in_every_format_count_honestly(
    app_client: Any, vendor: str, fmt: str
) -> None:
    """A native tool loop (stored with its payload's count) read in each format, from
    its normalised rows: valid for that format's SDK, counted as sent (a native row's
    stored count is its payload's, never taken for its count in another shape)."""
    from tests.api import native_data

    key, batch = NATIVE[vendor]
    cid = app_client.post("/v1/conversations", json={"model": "claude-sonnet-4-5"}).json()["id"]
    body = {"format": vendor, key: getattr(native_data, batch)()}
    r = app_client.post(f"/v1/conversations/{cid}/messages", json=body)
    assert r.status_code == 201, r.text
    for model in ("gpt-4o", "claude-sonnet-4-5", "gemini-2.5-flash"):
        r = app_client.get(
            f"/v1/conversations/{cid}/context", params={"format": fmt, "model": model}
        )
        assert r.status_code == 200, r.text
        check(r.json())
