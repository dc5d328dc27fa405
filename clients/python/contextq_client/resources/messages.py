"""`client.messages`: append to a conversation's history (one, a batch, or a vendor
SDK's response natively), read it back, pin."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from contextq_client import models as m
from contextq_client.record import RecordFormat, record_body
from contextq_client.routing import body, params, route, seg
from contextq_client.transport import Resource, SyncTransport


class Messages(Resource[SyncTransport]):
    @route("POST", "/v1/conversations/{conversation_id}/messages")
    def create(self, conversation_id: str, **message: Any) -> m.Message:
        """Append one message (`role`, `content`, `tool_calls`, `tool_call_id`, `pinned`,
        `file_ids`, …)."""
        path = f"/v1/conversations/{seg(conversation_id)}/messages"
        response = self._t.request("POST", path, json=body(**message))
        return m.Message.model_validate(response.json())

    def append(self, conversation_id: str, messages: list[dict[str, Any]]) -> m.MessageBatchResult:
        """Append a batch in one transaction (up to 10 000 messages)."""
        path = f"/v1/conversations/{seg(conversation_id)}/messages"
        response = self._t.request("POST", path, json={"messages": messages})
        return m.MessageBatchResult.model_validate(response.json())

    @route("POST", "/v1/conversations/{conversation_id}/messages")
    def record(
        self,
        conversation_id: str,
        response: Any,
        *,
        format: RecordFormat | None = None,
        model: str | None = None,
    ) -> m.MessageBatchResult:
        """Store what a vendor SDK returned, natively and with its model: an Anthropic
        `Message`, an OpenAI `Response` (or `ChatCompletion`), a google-genai
        `GenerateContentResponse`, or their dicts. With `format=` ("anthropic",
        "responses", "gemini", "openai"), the turns an agent built in that format instead
        (one or a list): Anthropic `{"role": "user", "content": [tool_result…]}`, Responses
        `function_call_output` items, Gemini `Content`s with `functionResponse` parts.
        `model`: the model that produced the turn (default: the response's own)."""
        payload = record_body(response, format=format, model=model)
        path = f"/v1/conversations/{seg(conversation_id)}/messages"
        answer = self._t.request("POST", path, json=payload)
        return m.MessageBatchResult.model_validate(answer.json())

    @route("GET", "/v1/conversations/{conversation_id}/messages")
    def list(
        self,
        conversation_id: str,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        seqs: Sequence[int] | None = None,
    ) -> m.Page[m.Message]:
        """A page of the original history; with `seqs`, exactly those messages (the
        `(#12, #40)` a summary line cites), in seq order."""
        path = f"/v1/conversations/{seg(conversation_id)}/messages"
        wanted = ",".join(str(seq) for seq in seqs) if seqs is not None else None
        query = params(limit=limit, cursor=cursor, seqs=wanted)
        response = self._t.request("GET", path, params=query)
        return m.Page[m.Message].model_validate(response.json())

    def iter(self, conversation_id: str, *, page_size: int = 200) -> Iterator[m.Message]:
        """Every message, page after page."""
        cursor: str | None = None
        while True:
            page = self.list(conversation_id, limit=page_size, cursor=cursor)
            yield from page.data
            cursor = page.next_cursor
            if cursor is None:
                return

    @route("PATCH", "/v1/conversations/{conversation_id}/messages/{message_id}")
    def pin(self, conversation_id: str, message_id: str, *, pinned: bool = True) -> m.Message:
        path = f"/v1/conversations/{seg(conversation_id)}/messages/{seg(message_id)}"
        response = self._t.request("PATCH", path, json={"pinned": pinned})
        return m.Message.model_validate(response.json())
