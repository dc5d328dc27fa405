"""The SDK against the API's own description of itself: every route covered (sync and
async), every result model field for field the response schema, the async methods
mirroring the sync ones, and the engine package free of server imports. (That the async
resources are generated from the sync ones is checked by `./scripts/lint`.)"""

from __future__ import annotations

import subprocess
import sys
import typing
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from contextq_client import models
from contextq_client.client import ASYNC_RESOURCES, SYNC_RESOURCES
from contextq_client.routing import routes_of

ROOT = Path(__file__).resolve().parents[2]
NOT_FOR_THE_SDK = {("GET", "/metrics")}  # Prometheus scrapes it; no Python caller wants it
HTTP_METHODS = {"get", "post", "put", "patch", "delete"}
# list answers the SDK types as Page[Item]: OpenAPI list schema -> the item model
PAGES: dict[str, type[BaseModel]] = {
    "FileList": models.File,
    "ConversationList": models.Conversation,
    "MessageList": models.Message,
    "CompactionList": models.Compaction,
    "WorkspaceEntryList": models.WorkspaceEntry,
    "ProjectList": models.Project,
    "DeliveryList": models.Delivery,
}


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    from api.main import app

    document: dict[str, Any] = app.openapi()
    return document


def _api_routes(openapi: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method.upper(), path)
        for path, item in openapi["paths"].items()
        for method in item
        if method in HTTP_METHODS
    } - NOT_FOR_THE_SDK


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_every_route_has_a_method(openapi: dict[str, Any], flavour: str) -> None:
    covered = routes_of(SYNC_RESOURCES if flavour == "sync" else ASYNC_RESOURCES)
    missing = sorted(_api_routes(openapi) - covered)
    assert not missing, f"routes with no {flavour} SDK method: {missing}"
    stale = sorted(covered - _api_routes(openapi))
    assert not stale, f"SDK methods naming routes the API does not have: {stale}"


def _schema(openapi: dict[str, Any], name: str) -> dict[str, Any]:
    if ":" in name:  # a pydantic model of the API not among the OpenAPI components
        module, cls = name.split(":")
        schema: dict[str, Any] = getattr(import_module(module), cls).model_json_schema()
        return schema
    component: dict[str, Any] = openapi["components"]["schemas"][name]
    return component


@pytest.mark.parametrize("model", list(models.SCHEMAS), ids=lambda m: m.__name__)
def test_result_model_matches_the_response_schema(
    openapi: dict[str, Any], model: type[BaseModel]
) -> None:
    schema = _schema(openapi, models.SCHEMAS[model])
    fields = set(model.model_fields)
    properties = set(schema["properties"])
    assert fields == properties, (
        f"{model.__name__}: not in the API {sorted(fields - properties)}, "
        f"not in the SDK {sorted(properties - fields)}"
    )
    required_sdk = {n for n, f in model.model_fields.items() if f.is_required()}
    assert required_sdk == set(schema.get("required", [])), model.__name__


@pytest.mark.parametrize("name", list(PAGES))
def test_pages_match_the_list_schemas(openapi: dict[str, Any], name: str) -> None:
    schema = openapi["components"]["schemas"][name]
    assert set(schema["properties"]) == {"data", "next_cursor"}
    item_ref = schema["properties"]["data"]["items"]["$ref"].rsplit("/", 1)[1]
    assert models.SCHEMAS[PAGES[name]] == item_ref


def test_every_response_schema_has_a_model(openapi: dict[str, Any]) -> None:
    """A new response schema in the API needs an SDK model (or a Page)."""
    used: set[str] = set()
    for item in openapi["paths"].values():
        for method, operation in item.items():
            if method not in HTTP_METHODS:
                continue
            for code, response in operation.get("responses", {}).items():
                ref = response.get("content", {}).get("application/json", {}).get("schema", {})
                if code.startswith("2") and "$ref" in ref:
                    used.add(ref["$ref"].rsplit("/", 1)[1])
    known = set(models.SCHEMAS.values()) | set(PAGES)
    assert not sorted(used - known)


def test_the_format_names_are_the_servers(openapi: dict[str, Any]) -> None:
    """The SDK spells the context formats itself (it never imports `contextq`): the same
    names as the server's one `FormatName`, in the same order, as the API takes them."""
    from contextq.history.types import FORMAT_NAMES

    assert typing.get_args(models.ContextFormat) == FORMAT_NAMES
    assert typing.get_args(models.ToolFormat) == (*FORMAT_NAMES, "mcp")
    answer = _schema(openapi, "ContextAnswer")["properties"]["format"]
    assert tuple(answer["enum"]) == FORMAT_NAMES
    parameters = openapi["paths"]["/v1/conversations/{conversation_id}/context"]["get"]
    (fmt,) = [p for p in parameters["parameters"] if p["name"] == "format"]
    assert tuple(fmt["schema"]["enum"]) == FORMAT_NAMES
    tools = openapi["paths"]["/v1/tools"]["get"]["parameters"]
    (tool_fmt,) = [p for p in tools if p["name"] == "format"]
    assert tuple(tool_fmt["schema"]["enum"]) == (*FORMAT_NAMES, "mcp")


def test_async_methods_mirror_sync_methods() -> None:
    for sync_cls, async_cls in zip(SYNC_RESOURCES, ASYNC_RESOURCES, strict=True):
        public = {n for n in dir(sync_cls) if not n.startswith("_")}
        assert public == {n for n in dir(async_cls) if not n.startswith("_")}, sync_cls


def test_the_sdk_loads_no_server_library() -> None:
    code = (
        "import sys; import contextq_client, contextq_client.integrations.mirror; "
        "import contextq.testing, contextq.sdk; "
        "bad = [m for m in ('fastapi', 'celery', 'sqlalchemy', 'sqlmodel', 'api', 'service', "
        "'store') if m in sys.modules]; print(','.join(bad))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == ""


def test_client_is_exported_lazily() -> None:
    code = (
        "import sys, contextq; assert 'httpx' not in sys.modules; "
        "from contextq import Client, AsyncClient; print(Client.__module__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "contextq_client.client"
    assert typing.get_type_hints(models.File)["status"] is str
