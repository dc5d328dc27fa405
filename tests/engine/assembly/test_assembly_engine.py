"""The assembly engine without I/O: the project slot, files as parts, counting by each
provider's formula, cache breakpoints, tools in both formats, citations, memory options."""

from __future__ import annotations

import base64
import io
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from PIL import Image

from contextq.assembly import (
    CitationMap,
    FileView,
    ProjectContext,
    ProjectDocument,
    Prompts,
    assemble_context,
    parse_tools,
    plan_context,
    tools_for,
)
from contextq.errors import ValidationFailed
from contextq.history import HierarchicalMemory, Message
from contextq.settings import Settings
from tests.engine.history.builders import agent_history
from tests.support.recount import recount

NOW = datetime(2026, 11, 23, 9, 30, tzinfo=UTC)
SETTINGS = Settings()


def plan(**kw: Any) -> Any:
    prompts = kw.pop("prompts", Prompts(system_prompt="SYS", custom_agent_prompt="CA"))
    return plan_context(
        settings=SETTINGS, now=NOW, prompts=prompts, model=kw.pop("model", "gpt-4o"), **kw
    )


def msg(seq: int, role: str, text: str | None, **kw: Any) -> Message:
    return Message(role=role, content=text, seq=seq, id=f"m{seq}", **kw)  # type: ignore[arg-type]


def png(size: tuple[int, int]) -> str:
    out = io.BytesIO()
    Image.new("RGB", size, (10, 200, 30)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


def doc(file_id: str, text: str) -> FileView:
    return FileView(
        file_id, "ready", filename=f"{file_id}.md", category="text", file_type="markdown", text=text
    )


def image(file_id: str, size: tuple[int, int]) -> FileView:
    meta = {"width": size[0], "height": size[1]}
    return FileView(
        file_id, "ready", filename=f"{file_id}.png", category="image", text="Image: PNG.",
        metadata=meta, data_b64=png(size), media_type="image/png",
    )  # fmt: skip


def label(answer: dict[str, Any]) -> list[str]:
    out = []
    for m in answer["messages"]:
        text = m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        if m["role"] == "system":
            out.append("S")
        elif text.startswith('{"documents"'):
            out.append("F")
        elif text.startswith("PROJECT"):
            out.append("P")
        else:
            out.append(text.split()[0])
    return out


def test_seed_003_flow_2_with_the_project_slot() -> None:
    project = ProjectContext(
        instructions="PROJECT instructions: use the handbook.",
        documents=(
            ProjectDocument("chunk:7", "f9", "handbook.pdf", "Chapter 1 …", "pdf, chunk 3, page 2"),
        ),
    )
    files = {"f1": doc("f1", "notes")}
    history = [msg(1, "user", "U1 read", file_ids=["f1"]), msg(2, "assistant", "A1 done")]
    first = assemble_context(history[:1], plan(project=project), files=files).answer
    assert label(first) == ["S", "CA", "P", "F", "U1"]
    second = assemble_context(
        [*history, msg(3, "user", "U2 thanks")], plan(project=project), files=files
    ).answer
    assert label(second) == ["S", "F", "U1", "A1", "CA", "P", "U2"]
    cited = {c["source"]: c for c in second["citations"]}
    assert cited["file"]["citation_id"] == 1 and cited["project"]["citation_id"] == 2
    assert cited["project"]["file_id"] == "f9"
    assert second["token_breakdown"]["project"] > 0
    assert recount(second) == second["token_count"]


def test_the_project_takes_at_most_its_share_of_what_is_left() -> None:
    big = "lorem ipsum dolor " * 400
    project = ProjectContext(
        documents=tuple(ProjectDocument(f"chunk:{i}", "f", f"d{i}", big, "m") for i in range(20))
    )
    small = Settings(MAX_CONTEXT_TOKENS=16_000)
    p = plan_context(settings=small, now=NOW, prompts=Prompts(), model="gpt-4o", project=project)
    answer = assemble_context([msg(1, "user", "U1 go")], p).answer
    budget = answer["budget_tokens"]
    assert answer["filtered"] and 0 < answer["token_breakdown"]["project"] <= budget // 2
    assert len(answer["citations"]) < 20


@pytest.mark.parametrize(
    ("model", "fmt"),
    [("gpt-4o", "openai"), ("claude-sonnet-4-5", "anthropic"), ("gemini-2.5-flash", "openai")],
)
def test_images_are_parts_counted_by_the_providers_formula(model: str, fmt: str) -> None:
    files = {"i1": image("i1", (1200, 900)), "d1": doc("d1", "text")}
    history = [msg(1, "user", "U1 look", file_ids=["i1", "d1"])]
    answer = assemble_context(history, plan(model=model, format=fmt), files=files).answer
    assert recount(answer) == answer["token_count"]
    user = answer["messages"][-1]["content"]
    kinds = [b["type"] for b in user]
    assert ("image_url" if fmt == "openai" else "image") in kinds
    assert answer["token_breakdown"]["files"] > 0 and not answer["file_notes"]


def test_anthropic_breakpoints_and_stable_prefix() -> None:
    history = agent_history(20, seed=3)
    for seq, m in enumerate(history, start=1):
        m.seq = seq
    history.append(msg(len(history) + 1, "user", "newest question"))
    answer = assemble_context(history, plan(model="claude-sonnet-4-5", format="anthropic")).answer
    marks = [b for b in answer["system"] if "cache_control" in b]
    marks += [b for m in answer["messages"] for b in m["content"] if "cache_control" in b]
    assert len(marks) == 2 and answer["system"][-1] is marks[0]
    last = answer["messages"][-1]["content"]
    assert [b["text"].split()[0] for b in last if b["type"] == "text"][-2:] == ["CA", "newest"]
    # the prefix up to the second breakpoint, recounted by hand
    prefix = {**answer, "messages": answer["messages"][:-1]}
    assert answer["stable_prefix_tokens"] == recount(prefix)
    assert 0 < answer["stable_prefix_tokens"] < answer["token_count"]


def test_tools_both_ways_and_refusals() -> None:
    function = {"name": "a", "description": "Does A. More.", "parameters": {"type": "object"}}
    tools = parse_tools(
        [
            {"type": "function", "function": function},
            {"name": "b", "description": "Does B.", "input_schema": {"type": "object"}},
            {"type": "web_search_20250305", "name": "web_search"},
        ]
    )  # fmt: skip
    assert tools_for(tools[:2], "anthropic") == [
        {"name": "a", "input_schema": {"type": "object"}, "description": "Does A. More."},
        {"name": "b", "input_schema": {"type": "object"}, "description": "Does B."},
    ]
    assert tools_for(tools[1:2], "openai")[0]["function"]["parameters"] == {"type": "object"}
    assert tools_for(tools[2:], "anthropic") == [
        {"type": "web_search_20250305", "name": "web_search"}
    ]
    with pytest.raises(ValidationFailed) as err:
        tools_for(tools[2:], "openai")
    assert "web_search" in str(err.value)
    with pytest.raises(ValidationFailed) as err:
        parse_tools([{"name": "a", "input_schema": {}}, {"name": "a", "input_schema": {}}])
    assert "unique" in str(err.value)


def test_citation_map_numbers_new_documents_in_order() -> None:
    citations = CitationMap({"file:a": 1, "file:b": 2})
    assert citations.provisional("file:c") == 3 and citations.provisional("file:a") == 1
    assert citations.assign(["file:b", "file:d", "file:c"]) == {
        "file:b": 2,
        "file:d": 3,
        "file:c": 4,
    }
    assert citations.assigned == {"file:d": 3, "file:c": 4}


def test_memory_options_reach_the_hierarchical_strategy() -> None:
    history = agent_history(200, seed=8)
    for seq, m in enumerate(history, start=1):
        m.seq = seq
    memory = HierarchicalMemory.from_messages(history)

    def recent(memory_options: dict[str, Any] | None) -> int:
        p = plan(strategy="hierarchical", force_filter=True, memory_options=memory_options)
        state = HierarchicalMemory.from_dict(memory.to_dict())
        answer = assemble_context(history, p, memory=state).answer
        block = next(
            m["content"] for m in answer["messages"] if "RECENT ACTIONS" in str(m["content"])
        )
        return sum(
            1 for line in block.split("RECENT ACTIONS", 1)[1].splitlines() if line.startswith("- ")
        )

    assert recent({"max_working_memory": 4, "compression_threshold": 0.5}) < recent(None)
    with pytest.raises(ValidationFailed) as err:
        plan(strategy="hierarchical", memory_options={"compression_threshold": 3})
    assert err.value.field == "memory_options.compression_threshold"


def test_documents_json_says_what_was_left_out() -> None:
    view = FileView(
        "f1", "ready", filename="r.pdf", category="document", file_type="pdf", text="body",
        truncation_summary="lines: 200 of 365", metadata={"pages": 12},
    )  # fmt: skip
    answer = assemble_context(
        [msg(1, "user", "U1", file_ids=["f1"])], plan(), files={"f1": view}
    ).answer
    [document] = json.loads(answer["messages"][-2]["content"])["documents"]
    assert document == {
        "citation_id": 1,
        "title": "r.pdf",
        "contents": "body",
        "metadata": "document (pdf), 12 pages; truncated: lines: 200 of 365",
    }
