"""contextq's built-in tools for agent frameworks, framework-free: their definitions
(`GET /v1/tools`) and a run that answers the model with text whatever happens.

A tool call the API refuses (a bad argument, a path outside the workspace, a file not
processed yet) comes back to the model as the error's text, so it can correct itself;
only an unreachable API raises.
"""

from __future__ import annotations

from typing import Any

from contextq_client import AsyncClient, Client
from contextq_client.errors import APIError, detail_text

Definition = dict[str, Any]  # OpenAI's {"type": "function", "function": {...}}


def error_text(exc: APIError) -> str:
    return f"Error ({exc.status_code}): {detail_text(exc.detail)}"


def run(client: Client, conversation_id: str, name: str, arguments: Any) -> str:
    """The tool's result, or the API's refusal, as text for the model."""
    try:
        return client.tools.execute(conversation_id, name, arguments).content
    except APIError as exc:
        return error_text(exc)


async def async_run(client: AsyncClient, conversation_id: str, name: str, arguments: Any) -> str:
    """As `run`, awaited."""
    try:
        return (await client.tools.execute(conversation_id, name, arguments)).content
    except APIError as exc:
        return error_text(exc)


def functions(definitions: list[Definition]) -> list[dict[str, Any]]:
    """The `function` part (name, description, parameters) of each definition."""
    return [d["function"] for d in definitions]
