"""`client.messages.record`: what a vendor SDK returned, or a turn the agent built, as
the body of `POST …/messages` (docs/api.md#native-turns, docs/sdk.md).

The vendor SDKs are never imported: their objects are read duck-typed and dumped to
JSON as the vendor's API sent them —

- Anthropic's and OpenAI's SDK models by `to_dict(mode="json")`: the API's own field
  names, only the fields the API sent (no `None` the SDK filled in), `"thinking": ""`
  and every other empty string kept;
- google-genai's models (pydantic) by alias, as the REST API spells them
  (`thoughtSignature`, `functionCall`), bytes in standard base64 as the API sends them,
  without the `None`s of fields the API never sent;
- plain dicts and lists as they are.

A response is recognised by its shape: an Anthropic `Message` (`"type": "message"`,
`"role": "assistant"`, a `model`), an OpenAI `Response` (`"object": "response"`), a
google-genai `GenerateContentResponse` (`candidates`), an OpenAI `ChatCompletion`
(`"object": "chat.completion"`). A turn the agent built (tool results, a user turn) is
not a response: it needs `format=`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum
from typing import Any, Literal, get_args

RecordFormat = Literal["openai", "anthropic", "responses", "gemini"]
RECORD_FORMATS: tuple[str, ...] = get_args(RecordFormat)
# where each native format's turns go in the body (the default form's are `messages`)
BODY_KEYS: dict[str, str] = {
    "openai": "messages",
    "anthropic": "messages",
    "responses": "items",
    "gemini": "contents",
}
CHAT_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "name")
WHAT_RECORD_TAKES = (
    "record takes what a vendor SDK returned — an Anthropic Message, an OpenAI Response "
    "or ChatCompletion, a google-genai GenerateContentResponse (or their dicts) — or, with "
    "format='anthropic'|'responses'|'gemini'|'openai', the turns an agent built in that "
    "format (tool results, a user turn)"
)


def as_json(value: Any) -> Any:
    """`value` as the JSON its vendor's API uses (module docstring); lists and dicts
    may hold SDK objects."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):  # Anthropic's and OpenAI's SDK models (Stainless)
        return as_json(to_dict(mode="json"))
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # google-genai, or any pydantic model: the wire names
        return _rest_json(dump(mode="python", by_alias=True, exclude_none=True))
    raise TypeError(f"{WHAT_RECORD_TAKES}; not {type(value).__name__}")


def _rest_json(value: Any) -> Any:
    """A pydantic dump (python mode) as REST JSON: bytes in standard base64 as the API
    sends them (pydantic's JSON mode writes the URL-safe alphabet), enums by value,
    datetimes in ISO 8601."""
    if isinstance(value, dict):
        return {str(k): _rest_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rest_json(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Enum):
        return _rest_json(value.value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def response_format(data: Any) -> RecordFormat | None:
    """The format of a vendor response's JSON, or None when it is not a response."""
    if not isinstance(data, dict):
        return None
    if data.get("object") == "response" and isinstance(data.get("output"), list):
        return "responses"
    if data.get("object") == "chat.completion" and isinstance(data.get("choices"), list):
        return "openai"
    if isinstance(data.get("candidates"), list):
        return "gemini"
    is_message = data.get("type") == "message" and data.get("role") == "assistant"
    if is_message and "model" in data and isinstance(data.get("content"), list):
        return "anthropic"
    return None


def _gemini_content(data: dict[str, Any]) -> dict[str, Any]:
    candidates = data["candidates"]
    first = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
    content = first.get("content")
    if not isinstance(content, dict) or not content.get("parts"):
        reason = first.get("finishReason", first.get("finish_reason"))
        why = f" (finish reason {reason})" if reason else ""
        raise ValueError(f"the Gemini response has no content to record{why}")
    return content


def _chat_message(message: dict[str, Any]) -> dict[str, Any]:
    """A chat completion's message as the default form takes it."""
    out = {k: message[k] for k in CHAT_FIELDS if message.get(k) is not None}
    if "tool_calls" in out:
        out["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": c["function"]}
            for c in out["tool_calls"]
        ]
    out.setdefault("content", "")
    return out


def _from_response(data: dict[str, Any], fmt: RecordFormat) -> tuple[list[Any], str | None]:
    """The turns of a recognised response, and the model that produced them."""
    if fmt == "anthropic":
        return [{"role": "assistant", "content": data["content"]}], data.get("model")
    if fmt == "responses":
        return list(data["output"]), data.get("model")
    if fmt == "gemini":
        model = data.get("modelVersion", data.get("model_version"))
        return [_gemini_content(data)], model
    choices = data["choices"]
    if not choices:
        raise ValueError("the chat completion has no choice to record")
    return [_chat_message(choices[0]["message"])], data.get("model")


def record_body(
    response: Any, *, format: RecordFormat | None = None, model: str | None = None
) -> dict[str, Any]:
    """The body of `POST …/messages` that stores `response` (a vendor's response, or with
    `format=` the turns given: one or a list) in its own format, with its model."""
    if format is not None and format not in RECORD_FORMATS:
        raise ValueError(f"format must be one of {', '.join(RECORD_FORMATS)}, not {format!r}")
    data = as_json(response)
    detected = response_format(data)
    if detected is not None:
        if format is not None and format != detected:
            raise ValueError(f"this is a {detected} response, not format={format!r}")
        turns, produced_by = _from_response(data, detected)
        fmt: RecordFormat = detected
    elif format is None:
        raise ValueError(WHAT_RECORD_TAKES)
    else:
        turns, produced_by, fmt = data if isinstance(data, list) else [data], None, format
    if fmt == "openai":  # the default form: no `format`, no `model`
        return {"messages": turns}
    body: dict[str, Any] = {"format": fmt, BODY_KEYS[fmt]: turns}
    if model or produced_by:
        body["model"] = model or produced_by
    return body
