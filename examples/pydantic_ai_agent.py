"""A PydanticAI agent whose model sees contextq's context (history processor).

Offline: PydanticAI's own `FunctionModel` plays the model and reports what it was sent.
"""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelResponse, SystemPromptPart, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from contextq import Client
from contextq.integrations.pydantic_ai import history_processor


def fake_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    parts = [p for m in messages for p in m.parts]
    system = sum(isinstance(p, SystemPromptPart) for p in parts)
    return ModelResponse(parts=[TextPart(f"saw {len(messages)} messages, {system} system")])


def main() -> None:
    with Client() as client:
        conv = client.conversations.create(model="gpt-4o", system_prompt="You plan releases.")
        processor = history_processor(client, conversation_id=conv.id, model="gpt-4o")
        agent = Agent(FunctionModel(fake_model), capabilities=[ProcessHistory(processor)])
        first = agent.run_sync("When do we ship?")
        second = agent.run_sync("And the freeze?", message_history=first.all_messages())
        print(f"first: {first.output}")
        print(f"second: {second.output}")
        print(f"stored: {client.conversations.get(conv.id).message_count} messages")


if __name__ == "__main__":
    main()
