"""Against a real `contextq up` (started by `contextq.testing`): the examples run as a
user runs them, and the PydanticAI and LangGraph integrations inside real agents."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contextq.testing import RunningStack, code_root
from contextq_client import Client

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def _run_example(stack: RunningStack, name: str) -> str:
    env = {**os.environ, "CONTEXTQ_API_URL": stack.base_url, "CONTEXTQ_API_KEY": stack.api_key}
    env["PYTHONPATH"] = code_root()  # this checkout's contextq
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart_example(contextq_stack: RunningStack) -> None:
    out = _run_example(contextq_stack, "quickstart.py")
    assert "file plan.md: ready" in out
    assert "messages stored: 1" in out
    assert "'files': " in out  # the file's tokens are in the breakdown


def test_openai_example(contextq_stack: RunningStack) -> None:
    out = _run_example(contextq_stack, "openai_kwargs.py")
    assert "sent 2 messages to gpt-4o" in out  # the system prompt and the question
    assert "answer: Friday." in out


def test_anthropic_example(contextq_stack: RunningStack) -> None:
    out = _run_example(contextq_stack, "anthropic_kwargs.py")
    assert "sent: ['max_tokens', 'messages', 'model', 'system', 'tools']" in out
    assert "tools: ['lookup_release']" in out
    assert "answer: Friday." in out


def test_record_tool_loops_example(contextq_stack: RunningStack) -> None:
    """Each vendor's loop recorded from its SDK's own objects: stored natively, the model
    given its reasoning back on each later call, every format without the others' state
    (needs the format registry and same-vendor rendering)."""
    out = _run_example(contextq_stack, "record_tool_loops.py").splitlines()
    for vendor in ("anthropic", "responses", "gemini"):
        at = out.index(next(line for line in out if line.startswith(f"{vendor}: ")))
        assert out[at] == f"{vendor}: 3 model calls, 6 messages stored, natively as ['{vendor}']"
        # the 2nd call sends back the 1st step's reasoning, the 3rd both steps'
        assert out[at + 1] == "  reasoning sent back to the model, by call: [0, 1, 2]"
        reads = out[at + 2 : at + 6]
        assert [r.split(":")[0] for r in reads] == [
            "  as openai",
            "  as anthropic",
            "  as responses",
            "  as gemini",
        ]
        for read in reads:
            assert "answer kept: True" in read
            assert read.endswith("other vendor's state: 0") or read.endswith(": -"), read


def test_pydantic_ai_example(contextq_stack: RunningStack) -> None:
    out = _run_example(contextq_stack, "pydantic_ai_agent.py")
    # contextq's system prompt replaces the agent's history head; one system part each time
    assert "first: saw 1 messages, 1 system" in out
    assert "second: saw 3 messages, 1 system" in out
    assert "stored: 3 messages" in out  # question, answer, question (the last answer is new)


def test_langgraph_example(contextq_stack: RunningStack) -> None:
    out = _run_example(contextq_stack, "langgraph_agent.py")
    assert "answers: ['Friday.', 'Thursday.']" in out
    assert "stored: 3 messages" in out


def test_pydantic_ai_model_gets_the_filtered_context(contextq_client: Client) -> None:
    """A long history under sliding_window: the model sees contextq's window, not the
    agent's whole history, and each message is stored once."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from contextq.integrations.pydantic_ai import history_processor

    seen: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        users = [p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart)]
        seen.append([str(u) for u in users])
        return ModelResponse(parts=[TextPart(f"answer {len(seen)}")])

    conv = contextq_client.conversations.create(
        model="gpt-4o", context_strategy="sliding_window", context_options={"window_size": 4}
    )
    processor = history_processor(
        contextq_client, conversation_id=conv.id, model="gpt-4o", force_filter=True
    )
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(processor)])

    async def conversation() -> None:  # asyncio.run closes its loop (run_sync leaves one)
        history: list[ModelMessage] = []
        for turn in range(6):
            result = await agent.run(f"question {turn}", message_history=history)
            history = result.all_messages()

    asyncio.run(conversation())
    assert seen[-1][-1] == "question 5"
    assert "question 0" not in seen[-1], "the window dropped the oldest turns"
    stored = [m.content for m in contextq_client.messages.iter(conv.id, page_size=3)]
    assert stored.count("question 0") == 1 and stored.count("question 5") == 1
    assert stored.count("answer 1") == 1


def test_readme_quick_start_runs(contextq_stack: RunningStack) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- sdk-quickstart:start -->", 1)[1].split(
        "<!-- sdk-quickstart:end -->"
    )[0]
    code = block.split("```python\n", 1)[1].rsplit("```", 1)[0]
    env = {**os.environ, "CONTEXTQ_API_URL": contextq_stack.base_url}
    env |= {"CONTEXTQ_API_KEY": contextq_stack.api_key, "PYTHONPATH": code_root()}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ready ")
    assert lines[1] == (
        "{'openai': ['messages', 'model'], 'anthropic': ['max_tokens', 'messages', 'model', "
        "'system'], 'responses': ['input', 'instructions', 'model'], 'gemini': ['config', "
        "'contents', 'model']}"
    )
    assert lines[2] == "On Friday. anthropic"  # the recorded turn: its visible text, natively
    assert lines[3] == "plan.md ready"


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_langgraph_model_gets_contextq_messages(contextq_client: Client) -> None:
    """In a real LangGraph graph the model's input is contextq's context (its system
    prompt, the window) while the graph's state keeps every message."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langgraph.prebuilt import create_react_agent

    from contextq.integrations.langgraph import pre_model_hook

    inputs: list[list[BaseMessage]] = []

    class Record(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
            inputs.append(list(messages[0]))

    answers = iter([AIMessage(f"answer {i}") for i in range(8)])
    model = GenericFakeChatModel(messages=answers)
    conv = contextq_client.conversations.create(
        model="gpt-4o",
        system_prompt="You are the release bot.",
        context_strategy="sliding_window",
        context_options={"window_size": 4},
    )
    hook = pre_model_hook(contextq_client, conversation_id=conv.id, force_filter=True)
    graph = create_react_agent(model, tools=[], pre_model_hook=hook)
    state: dict[str, Any] = {"messages": []}
    for turn in range(7):  # 13 messages: past MIN_MESSAGES_TO_KEEP (10)
        state = graph.invoke(
            {"messages": [*state["messages"], ("user", f"question {turn}")]},
            config={"callbacks": [Record()]},
        )
    assert len(state["messages"]) == 14, "the graph's own state keeps everything"
    last = inputs[-1]
    assert last[0].type == "system" and "You are the release bot." in str(last[0].content)
    texts = [str(m.content) for m in last]
    assert "question 6" in texts and "question 0" not in texts
    stored = [m.content for m in contextq_client.messages.iter(conv.id)]
    assert stored.count("question 0") == 1 and stored.count("answer 3") == 1


def test_pydantic_ai_with_the_async_client(contextq_stack: RunningStack) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.models.test import TestModel

    from contextq.integrations.pydantic_ai import history_processor
    from contextq_client import AsyncClient

    async def scenario() -> tuple[str, int]:
        async with AsyncClient(contextq_stack.base_url, api_key=contextq_stack.api_key) as c:
            conv = await c.conversations.create(model="gpt-4o")
            processor = history_processor(c, conversation_id=conv.id)
            agent = Agent(
                TestModel(custom_output_text="done"), capabilities=[ProcessHistory(processor)]
            )
            first = await agent.run("hello")
            await agent.run("again", message_history=first.all_messages())
            return first.output, (await c.conversations.get(conv.id)).message_count

    output, stored = asyncio.run(scenario())
    assert output == "done" and stored == 3  # hello, done, again
