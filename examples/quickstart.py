"""SDK quick start: upload a file and wait for it, a conversation, messages, the context.

Run against a stack (`contextq up` saves a development key in DATA_DIR/dev-api-key):
    CONTEXTQ_API_URL=http://127.0.0.1:8000 CONTEXTQ_API_KEY=cq_… python examples/quickstart.py
"""

from __future__ import annotations

from contextq import Client


def main() -> None:
    with Client() as client:  # CONTEXTQ_API_URL and CONTEXTQ_API_KEY
        notes = b"Release plan\n\n- ship the SDK on Friday\n- freeze the API on Thursday\n"
        file = client.files.upload(notes, filename="plan.md", wait=True)
        print(f"file {file.filename}: {file.status}, {file.processed_token_count} tokens")

        conv = client.conversations.create(model="gpt-4o", title="release")
        client.messages.create(conv.id, role="user", content="When do we ship?", file_ids=[file.id])
        context = client.context.get(conv.id, model="gpt-4o")
        print(f"context: {len(context.turns)} messages, {context.token_count} tokens")
        print(f"breakdown: {context.token_breakdown.model_dump()}")
        print(f"messages stored: {sum(1 for _ in client.messages.iter(conv.id))}")


if __name__ == "__main__":
    main()
