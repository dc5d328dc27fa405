"""Provenance of summary items (docs/provenance.md): every structured item ends with the seqs of the
messages it came from, through summaries of summaries, for both summarisers; the seqs an
item cites name messages that hold its words; unknown sources are matched back or marked
`(#?)` and counted."""

from __future__ import annotations

import random
from typing import Any

from contextq.history import ExtractiveSummarizer, Message, compact
from contextq.history.memory import HierarchicalMemory
from contextq.history.provenance import (
    ELIDED,
    MAX_CITED,
    SourceIndex,
    cite,
    holds_terms,
    item_content,
    merge_seqs,
    split_cited,
    summary_items,
)
from contextq.history.summary_format import facts_from_memory
from contextq.settings import Settings
from service.summarizers import OpenAISummarizer
from tests.engine.history.builders import assistant, counted, sentence, user
from tests.engine.history.fake_llm import FakeChatServer
from tests.engine.history.test_compaction_retention import round_of_work
from tests.engine.history.test_structured_summaries import swe_session


def _texts(messages: list[Message]) -> dict[int, str]:
    out = {}
    for m in messages:
        functions = [c.get("function") or {} for c in m.tool_calls or ()]
        calls = " ".join(str(f.get("arguments")) for f in functions)
        out[m.seq] = f"{m.text()} {calls}".lower()
    return out


def _check_sources(summary: str, messages: list[Message]) -> None:
    """Every item cites seqs, and every cited original holds the item's words."""
    texts = _texts(messages)
    items = summary_items(summary)
    assert items
    for item in items:
        assert item.seqs, item.line
        for seq in item.seqs:
            assert holds_terms(texts[seq], item.content), (item.line, seq)


def test_markers_render_merge_and_parse() -> None:
    assert cite([40, 12, 12]) == " (#12, #40)"
    assert cite([]) == " (#?)"
    many = merge_seqs(range(1, 21))
    assert len([s for s in many if s >= 0]) == MAX_CITED and ELIDED in many
    assert cite(many) == " (#1, …, #14, #15, #16, #17, #18, #19, #20)"
    line = f"- Use X — why: y (impact: low){cite(many)}"
    body, seqs, marked = split_cited(line)
    assert (body, marked) == ("- Use X — why: y (impact: low)", True)
    assert cite(seqs) == cite(many)  # the "…" survives a parse
    assert split_cited("- plain") == ("- plain", (), False)
    assert split_cited("- x (#?)") == ("- x", (), True)
    assert item_content("- Use X — why: y (impact: low)") == "Use X"
    assert item_content("- [ ] fix the parser") == "fix the parser"
    assert item_content("- recurring (x4) ALERT: timeout after N ms") == "timeout after N ms"
    assert item_content("- KeyError: 'a' (x3) (earlier: KeyError: 'b')") == "KeyError: 'a'"


def test_extractive_items_all_cite_messages_that_hold_them() -> None:
    messages = swe_session()
    memory = HierarchicalMemory.from_messages(messages)
    # set through the API, naming the message that states it
    memory.set_goal("Fix the invoice total crash", ["fix it in the billing app"], seqs=[1])
    out = compact(messages, ExtractiveSummarizer(), Settings(), memory=memory, target_tokens=4_000)
    assert out is not None and out.method == "summary"
    assert out.structured_items > 20 and out.unsourced_items == 0
    covered = [m for m in messages if m.seq <= out.through_seq]
    sections = {item.section for item in summary_items(out.summary)}
    assert {"goal", "errors", "files", "state"} <= sections
    _check_sources(out.summary, covered)


def test_seqs_survive_summaries_of_summaries() -> None:
    rng = random.Random(7)
    memory = HierarchicalMemory()
    first = counted([user(1, "Our goal is to cut the p99 latency of the search API below 200 ms.")])
    pending = first + round_of_work(2, rng, memory, 40)
    everything = list(pending)
    previous: str | None = None
    seq = pending[-1].seq + 1
    cited_by_first: set[int] = set()
    for run in range(4):
        out = compact(
            pending,
            ExtractiveSummarizer(),
            Settings(),
            previous_summary=previous,
            target_tokens=2_500,
        )
        assert out is not None
        if run == 0:
            cited_by_first = {s for i in summary_items(out.summary) for s in i.seqs}
        previous = out.summary
        pending = [m for m in pending if m.seq > out.through_seq]
        new = round_of_work(seq, rng, memory, 30)
        everything += new
        seq = new[-1].seq + 1
        pending += new
    assert previous is not None
    last = summary_items(previous)
    # items the 4th summary folded from the earlier ones still cite the first run's messages
    assert {s for i in last for s in i.seqs} & cited_by_first
    assert next(i for i in last if i.section == "goal").seqs == (1,)
    _check_sources(previous, everything)


def test_memory_facts_from_messages_carry_their_seqs() -> None:
    memory = HierarchicalMemory()
    messages = counted(
        [
            user(1, "Please make the importer retry on timeouts."),
            assistant(2, "Retry three times with backoff, as the API is flaky.", kind="decision"),
            *[
                Message(role="tool", content=f"Error: timeout after {n} ms", seq=s, kind="error")
                for s, n in ((3, 30), (4, 45), (5, 60))
            ],
        ]
    )
    for message in messages:
        memory.observe(message)
    facts = facts_from_memory(memory)
    assert facts.decisions[0].seqs == (2,)
    assert facts.seqs_of("pattern:error: timeout after N ms") == (3, 4, 5)
    exported = HierarchicalMemory.import_state(memory.export())
    assert exported == memory and exported.decisions[0]["seqs"] == [2]
    # GET /memory's snapshot keeps its documented fields
    documented = {"decision", "rationale", "impact", "created_at"}
    assert set(memory.snapshot()["decisions"][0]) == documented


def test_resolve_drops_wrong_seqs_matches_back_and_marks_the_rest() -> None:
    messages = counted(
        [
            user(10, "Move the export job from cron to the Celery beat schedule."),
            assistant(11, "The export writes /workspace/out/report.csv every night."),
            assistant(12, "Routine chatter about nothing in particular at all."),
        ]
    )
    index = SourceIndex(messages)
    summary = "\n".join(
        [
            "## Decisions",
            "- Move the export job from cron to Celery beat (#999)",  # no such message
            "- Move the export job to Celery beat (#12)",  # a message that says nothing of it
            "- Deploy on Fridays only",  # said nowhere
            "## Files and paths touched",
            "- /workspace/out/report.csv (#11)",
            "## Narrative",
            "- (#11) The export runs nightly.",
        ]
    )
    text, unsourced = index.resolve(summary)
    lines = text.splitlines()
    assert lines[1] == "- Move the export job from cron to Celery beat (#10)"
    assert lines[2] == "- Move the export job to Celery beat (#10)"
    assert lines[3] == "- Deploy on Fridays only (#?)"
    assert lines[5] == "- /workspace/out/report.csv (#11)"
    assert lines[7] == "- (#11) The export runs nightly."  # the narrative is not an item
    assert unsourced == 1


def _model_without_seqs(body: dict[str, Any]) -> str:
    """A model that writes the sections but cites nothing, invents one seq, and adds a
    decision nobody made."""
    return "\n".join(
        [
            "## Goal and subtasks",
            "Goal: Cut the p99 latency of the search API below 200 ms",
            "## Decisions",
            "- Decision 18: cache module 18 results (#4000)",
            "- Rewrite everything in Rust",
            "## Errors and recurring patterns",
            "- Timeout connecting to db",
            "## Narrative",
            "- The agent cached results and hit database timeouts.",
        ]
    )


def test_openai_lines_without_valid_seqs_are_matched_or_counted() -> None:
    rng = random.Random(2)
    memory = HierarchicalMemory()
    goal = [user(1, "Our goal is to cut the p99 latency of the search API below 200 ms.")]
    messages = counted(goal) + round_of_work(2, rng, memory, 30)
    with FakeChatServer(["ok"], reply=_model_without_seqs) as server:
        summarizer = OpenAISummarizer(base_url=server.url, model="tiny", timeout_s=5)
        out = compact(messages, summarizer, Settings(), target_tokens=1_500)
    assert out is not None and out.summarizer == "openai"
    [body] = server.requests
    assert "ends with the seqs of the transcript messages" in body["messages"][0]["content"]
    items = {i.content: i for i in summary_items(out.summary)}
    assert items["Cut the p99 latency of the search API below 200 ms"].seqs == (1,)
    assert items["Decision 18: cache module 18 results"].seqs == (21,)  # #4000 named nothing
    assert 9 in items["Timeout connecting to db"].seqs or items["Timeout connecting to db"].seqs
    assert items["Rewrite everything in Rust"].seqs == ()
    assert out.unsourced_items == 1
    assert "- Rewrite everything in Rust (#?)" in out.summary


def test_truncation_has_no_items_to_cite() -> None:
    messages = counted([user(i, sentence(random.Random(i), 40)) for i in range(1, 80)])
    out = compact(messages, None, Settings(), target_tokens=1_000)
    assert out is not None and out.method == "truncation"
    assert (out.structured_items, out.unsourced_items) == (0, 0)


def test_structured_tool_results_are_read_by_their_fields() -> None:
    """A function-calling tool's JSON result: its fields are sentences the summary can
    keep (citing the result), its `error` an error; file-tool arguments name paths."""
    from contextq.history.harvest import harvest
    from contextq.history.memory_actions import files_in

    call = {"id": "c1", "type": "function", "function": {"name": "cp", "arguments": "{}"}}
    call["function"]["arguments"] = '{"source": "report.pdf", "destination": "backup"}'
    messages = counted(
        [
            user(1, "Copy the report and check my balance."),
            Message(role="assistant", seq=2, tool_calls=[call]),
            Message(
                role="tool",
                seq=3,
                tool_call_id="c1",
                name="get_account_info",
                content='{"account_id": 98765, "balance": 105000.0, "cards": [1, 2, 3, 4, 5, 6]}',
            ),
            Message(role="tool", seq=4, tool_call_id="c2", content='{"card_id": "262919693687"}'),
            Message(role="tool", seq=5, tool_call_id="c3", content='{"error": "No such file: x"}'),
        ]
    )
    found = harvest(messages)
    lines = {c.seq: c.text for c in found.sentences}
    assert lines[3] == "account_id 98765; balance 105000.0; cards 1, 2, 3, 4 (+2 more)"
    assert lines[4] == "card_id 262919693687"
    assert [e.text for e in found.errors.values()] == ["No such file: x"]
    assert "report.pdf" in found.paths and "backup" not in found.paths
    assert files_in({"source": "San Francisco", "destination": "https://x/y.html"}) == []
    out = ExtractiveSummarizer().summarize(messages, max_tokens=400)
    assert "- (#3 tool get_account_info) account_id 98765; balance 105000.0" in out
    assert "- report.pdf (#2)" in out and "- No such file: x (#5)" in out
