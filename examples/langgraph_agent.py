"""A LangGraph ReAct agent whose model sees contextq's context (`pre_model_hook`).

Offline: LangChain's `GenericFakeChatModel` plays the model.
"""

from __future__ import annotations

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.prebuilt import create_react_agent

from contextq import Client
from contextq.integrations.langgraph import pre_model_hook


def main() -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("Friday."), AIMessage("Thursday.")]))
    with Client() as client:
        conv = client.conversations.create(model="gpt-4o", system_prompt="You plan releases.")
        hook = pre_model_hook(client, conversation_id=conv.id, model="gpt-4o")
        agent = create_react_agent(model, tools=[], pre_model_hook=hook)
        state = agent.invoke({"messages": [("user", "When do we ship?")]})
        state = agent.invoke({"messages": [*state["messages"], ("user", "And the freeze?")]})
        print(f"answers: {[m.content for m in state['messages'] if m.type == 'ai']}")
        print(f"stored: {client.conversations.get(conv.id).message_count} messages")


if __name__ == "__main__":
    main()
