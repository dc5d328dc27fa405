"""`chat_kwargs(format="openai")` into the OpenAI SDK.

Sends nothing: the OpenAI client gets an httpx transport that captures the request and
answers a canned completion (drop `http_client=…` and set OPENAI_API_KEY to call OpenAI).
"""

from __future__ import annotations

import json

import httpx
import openai

from contextq import Client

CANNED = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-4o",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Friday."},
        }
    ],
}


def main() -> None:
    sent: list[dict[str, object]] = []

    def capture(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=CANNED)

    llm = openai.OpenAI(
        api_key="sk-offline", http_client=httpx.Client(transport=httpx.MockTransport(capture))
    )
    with Client() as client:
        conv = client.conversations.create(model="gpt-4o")
        client.messages.create(conv.id, role="user", content="When do we ship?")
        kwargs = client.chat_kwargs(conv.id, model="gpt-4o", format="openai")
        answer = llm.chat.completions.create(**kwargs)
        client.messages.create(conv.id, role="assistant", content=answer.choices[0].message.content)
    print(f"sent {len(sent[0]['messages'])} messages to {sent[0]['model']}")  # type: ignore[arg-type]
    print(f"answer: {answer.choices[0].message.content}")


if __name__ == "__main__":
    main()
