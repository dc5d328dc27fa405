"""Compaction: the cut never splits a tool pair, pins stay verbatim, the summariser input
is capped (chunks, then a summary of summaries), and failures fall back to truncation."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextq.errors import SummarizerError
from contextq.history import ExtractiveSummarizer, Message, compact, plan_compaction
from contextq.history.chains import unit_at
from contextq.history.summary_format import MemoryFacts
from contextq.settings import Settings
from contextq.tokens import count_tokens
from service.summarizers import OpenAISummarizer
from tests.engine.history.builders import agent_history, assistant, call, counted, result, user
from tests.engine.history.fake_llm import FakeChatServer
from tests.engine.history.test_strategy_properties import histories


def summarizer(url: str) -> OpenAISummarizer:
    return OpenAISummarizer(base_url=url, model="tiny", timeout_s=5, max_retries=2, backoff_s=0.01)


class Recording:
    """A summariser that records its inputs (to check the input cap) and echoes a size."""

    name = "recording"

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[int] = []
        self.fail = fail

    def summarize(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        encoding: str = "cl100k_base",
        facts: MemoryFacts | None = None,
    ) -> str:
        if self.fail:
            raise SummarizerError("model unavailable")
        self.calls.append(sum(m.token_count or 0 for m in messages))
        return f"summary of {len(messages)} messages"


def test_plan_never_splits_a_tool_pair() -> None:
    msgs = agent_history(80, seed=4)
    for keep in (50, 300, 1_000, 2_500):
        plan = plan_compaction(msgs, target_tokens=2 * keep, keep_recent_tokens=keep)
        assert plan is not None
        first_tail = len(msgs) - len(plan.tail)
        assert unit_at(msgs, first_tail).start == first_tail  # the cut is at a unit start
        assert plan.tail[0].role != "tool"
        assert all(m.seq > plan.through_seq for m in plan.tail)
        assert sum(m.token_count or 0 for m in plan.tail) <= keep or len(plan.tail) <= 4


def test_plan_keeps_pins_and_system_verbatim() -> None:
    msgs = counted(
        [
            Message(role="system", content="sys", seq=0, id="m0"),
            user(1, "pinned fact", pinned=True),
            call(2, "c1"),
            result(3, "c1", "r", pinned=True),
            *[assistant(i, "chatter " * 30) for i in range(4, 30)],
        ]
    )
    plan = plan_compaction(msgs, target_tokens=400, keep_recent_tokens=200)
    assert plan is not None
    assert [m.id for m in plan.verbatim] == ["m0", "m1", "m2", "m3"]
    assert not {m.id for m in plan.to_summarize} & {"m0", "m1", "m2", "m3"}
    assert plan_compaction(msgs[:2], target_tokens=10_000) is None  # nothing to compact


def test_compact_with_extractive_fits_target() -> None:
    msgs = agent_history(200, seed=6)
    total = sum(m.token_count or 0 for m in msgs)
    out = compact(msgs, ExtractiveSummarizer(), Settings(), target_tokens=3_000)
    assert out is not None
    assert out.method == "summary" and out.summarizer == "extractive"
    assert out.fallback_reason is None
    assert out.summary_tokens == count_tokens(out.summary) <= 3_000
    tail_tokens = sum(m.token_count or 0 for m in msgs if m.seq > out.through_seq)
    assert out.compacted_tokens + tail_tokens <= 3_000 + 50
    assert out.original_tokens + tail_tokens == total
    assert out.original_message_count == sum(1 for m in msgs if m.seq <= out.through_seq)
    assert out.compacted_message_count == 1 + len(out.verbatim_ids)


def test_input_cap_chunks_then_summarises_the_summaries() -> None:
    msgs = agent_history(150, seed=7)
    rec = Recording()
    settings = Settings(SUMMARIZER_INPUT_MAX_TOKENS=2_000)
    out = compact(msgs, rec, settings, target_tokens=2_000, keep_recent_tokens=500)
    assert out is not None and out.method == "summary"
    assert out.chunks > 1
    assert len(rec.calls) == out.chunks + 1  # the chunks, then the summary of summaries
    assert max(rec.calls) <= 2_000
    assert out.summary.startswith(f"summary of {out.chunks} messages")


def test_previous_summary_is_folded_in() -> None:
    msgs = agent_history(30, seed=8)
    rec = Recording()
    out = compact(msgs, rec, Settings(), previous_summary="OLD SUMMARY", target_tokens=800)
    assert out is not None
    plan = plan_compaction(msgs, target_tokens=800)
    assert plan is not None
    assert out.summary == f"summary of {len(plan.to_summarize) + 1} messages"


def test_failing_summariser_falls_back_to_truncation() -> None:
    msgs = agent_history(120, seed=9)
    out = compact(msgs, Recording(fail=True), Settings(), target_tokens=2_000)
    assert out is not None
    assert out.method == "truncation" and out.summarizer == "truncation"
    assert out.fallback_reason == "recording summariser failed: model unavailable"
    assert "tokens omitted ...]" in out.summary
    assert count_tokens(out.summary) <= 2_000


def test_openai_permanent_failure_falls_back_to_truncation() -> None:
    msgs = agent_history(60, seed=10)
    with FakeChatServer([500, 500, 500]) as server:
        out = compact(msgs, summarizer(server.url), Settings(), target_tokens=1_500)
    assert out is not None and out.method == "truncation"
    assert out.fallback_reason is not None and "openai summariser failed" in out.fallback_reason
    assert "HTTP 500" in out.fallback_reason
    assert len(server.requests) == 3
    assert "SUMMARY" not in out.summary  # a failed summary is never stored as one


def test_openai_summary_after_a_retry() -> None:
    msgs = agent_history(60, seed=10)
    with FakeChatServer([502, "ok"]) as server:
        out = compact(msgs, summarizer(server.url), Settings(), target_tokens=1_500)
    assert out is not None and out.method == "summary" and out.summarizer == "openai"
    assert out.summary.startswith("SUMMARY of ")


def test_no_summariser_means_truncation() -> None:
    out = compact(agent_history(60, seed=1), None, Settings(), target_tokens=1_000)
    assert out is not None and out.method == "truncation"
    assert out.fallback_reason == "no summariser configured (SUMMARIZER=truncation)"


def test_bad_target() -> None:
    with pytest.raises(ValueError, match="target_tokens"):
        plan_compaction(agent_history(3), target_tokens=0)


@settings(max_examples=60, deadline=None)
@given(histories, st.integers(10, 600))
def test_plan_properties(messages: list[Message], keep: int) -> None:
    plan = plan_compaction(messages, target_tokens=2 * keep, keep_recent_tokens=keep)
    if plan is None:
        return
    covered = plan.to_summarize + plan.verbatim
    assert sorted(m.seq for m in covered) == [m.seq for m in messages if m.seq <= plan.through_seq]
    assert [m.seq for m in plan.tail] == [m.seq for m in messages if m.seq > plan.through_seq]
    summarized_calls = {c for m in plan.to_summarize for c in m.call_ids}
    summarized_results = {m.tool_call_id for m in plan.to_summarize if m.role == "tool"}
    for m in plan.tail + plan.verbatim:  # a chain is never split between summary and verbatim
        assert m.tool_call_id not in summarized_calls
        assert not set(m.call_ids) & summarized_results
    assert all(
        m.pinned or m.role == "system" or m.role == "tool" or m.call_ids for m in plan.verbatim
    )
    assert plan.summary_max_tokens >= 1


def test_a_chunked_compaction_with_a_large_memory_still_summarises() -> None:
    """When the memory's sections fill each chunk's summary, the summary of those summaries
    is made from their facts, not refused as "no text" (which fell back to truncation)."""
    import json as _json

    from contextq.history import HierarchicalMemory, compact
    from contextq.history.message_tokens import token_count
    from contextq.settings import Settings
    from service.summarizers import get_summarizer

    settings = Settings(SUMMARIZER_INPUT_MAX_TOKENS=20_000, HISTORY_COMPACTION_TARGET_TOKENS=4000)
    messages = []
    for i in range(1, 1200):
        kind = "decision" if i % 4 == 0 else "user_prompt"
        text = f"step {i}: " + " ".join(f"word{(i * 7 + j) % 97}" for j in range(40))
        messages.append(Message(role="user", content=text, seq=i, kind=kind))  # type: ignore[arg-type]
    for m in messages:
        token_count(m, "gpt-4o")
    memory = HierarchicalMemory.from_messages(messages)
    outcome = compact(messages, get_summarizer(settings), settings, memory=memory)
    assert outcome is not None
    assert outcome.chunks > 1, "the input must be over the summariser's cap"
    assert outcome.method == "summary", outcome.fallback_reason
    assert _json.dumps(outcome.summary)  # a real text
