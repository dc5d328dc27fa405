"""Following a stub from inside real agents (docs/workspaces.md#following-a-stub, docs/sdk.md),
against a real `contextq up`: a tool-heavy gpt-4 conversation whose context shows cleared stubs; the
fake model each framework ships calls `workspace_read` on a stub's path; the integration runs it
through the API and the model's next input holds the exact original text."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from contextq.testing import RunningStack
from contextq_client import AsyncClient, Client, ValidationError
from tests.sdk.tool_heavy import STUB, STUB_PATH, original_of, tool_heavy

pytestmark = pytest.mark.integration


def test_the_sdk_executes_a_tool_and_reports_refusals(contextq_client: Client) -> None:
    heavy = tool_heavy(contextq_client)
    path = heavy.stub_paths[0]
    result = contextq_client.tools.execute(heavy.conversation_id, "workspace_read", {"path": path})
    assert result.content.startswith(original_of(heavy, path) + "\n\n[")
    # OpenAI's tool calls carry the arguments as JSON text: sent as they are
    as_text = contextq_client.tools.execute(
        heavy.conversation_id, "workspace_read", f'{{"path": "{path}"}}'
    )
    assert as_text.content == result.content
    with pytest.raises(ValidationError) as refused:
        contextq_client.tools.execute(heavy.conversation_id, "workspace_read", {"path": "../x"})
    assert refused.value.status_code == 422 and "path" in str(refused.value)
    with pytest.raises(ValidationError):
        contextq_client.tools.execute(heavy.conversation_id, "workspace_read", "{not json")
    context = contextq_client.context.get(heavy.conversation_id, builtin_tools=True)
    assert [t["function"]["name"] for t in context.tools] == [
        "workspace_read",
        "workspace_list",
        "project_search",
    ]


def test_a_pydantic_ai_agent_follows_a_cleared_stub(contextq_client: Client) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from contextq_client.integrations.pydantic_ai import builtin_tools, history_processor

    heavy = tool_heavy(contextq_client)
    seen: dict[str, Any] = {}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["tools"] = [t.name for t in info.function_tools]
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        read = [p for p in returns if p.tool_name == "workspace_read"]
        if read:
            seen["result"] = read[-1].content
            return ModelResponse(parts=[TextPart("the first report was fine")])
        stubs = [str(p.content) for p in returns if str(p.content).startswith(STUB)]
        found = STUB_PATH.search(stubs[0])
        assert found is not None
        seen["path"] = found.group(0)
        return ModelResponse(parts=[ToolCallPart("workspace_read", {"path": seen["path"]}, "r1")])

    agent = Agent(
        FunctionModel(model),
        tools=builtin_tools(contextq_client, conversation_id=heavy.conversation_id),
        capabilities=[
            ProcessHistory(
                history_processor(contextq_client, conversation_id=heavy.conversation_id)
            )
        ],
    )
    result = asyncio.run(agent.run("What did the oldest health check report?"))
    assert result.output == "the first report was fine"
    assert seen["tools"] == [
        "workspace_read",
        "workspace_list",
        "project_search",
        "memory_get",
        "memory_add_decision",
        "memory_record_error",
    ]
    assert str(seen["result"]).startswith(original_of(heavy, seen["path"]) + "\n\n[")
    # the call and its result joined the conversation (the final answer is appended by the
    # next request's history processor, as any new message)
    stored = list(contextq_client.messages.iter(heavy.conversation_id))
    assert (
        stored[-2].tool_calls and stored[-2].tool_calls[0]["function"]["name"] == "workspace_read"
    )
    assert stored[-1].role == "tool" and stored[-1].content == seen["result"]


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_a_langgraph_agent_follows_a_cleared_stub_with_the_async_client(
    contextq_stack: RunningStack,
) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.prebuilt import create_react_agent

    from contextq_client.integrations.langgraph import async_builtin_tools, pre_model_hook

    class ToolCallingFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self  # the scripted answers name the tools themselves

    with contextq_stack.new_client() as client:
        heavy = tool_heavy(client)
    path = heavy.stub_paths[-1]
    call = {"name": "workspace_read", "args": {"path": path, "limit": 1}, "id": "r1"}
    answers = iter([AIMessage("", tool_calls=[call]), AIMessage("done")])

    async def scenario() -> list[Any]:
        async with AsyncClient(contextq_stack.base_url, api_key=contextq_stack.api_key) as c:
            tools = await async_builtin_tools(
                c, conversation_id=heavy.conversation_id, names=["workspace_read"]
            )
            hook = pre_model_hook(c, conversation_id=heavy.conversation_id)
            graph = create_react_agent(
                ToolCallingFake(messages=answers), tools=tools, pre_model_hook=hook
            )
            state = await graph.ainvoke({"messages": [("user", "read the newest cleared one")]})
            return list(state["messages"])

    messages = asyncio.run(scenario())
    (tool_message,) = [m for m in messages if isinstance(m, ToolMessage)]
    assert str(tool_message.content).startswith(original_of(heavy, path) + "\n\n[")
    assert messages[-1].content == "done"
