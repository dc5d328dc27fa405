"""Random cases for the invariant harness: one case is one conversation read several times.

`generate_case(seed)` draws, from `random.Random(seed)` alone (so a seed reproduces its
case anywhere): a model and a window (a MAX_CONTEXT_TOKENS cap from 4K to 1M), a format
(each of `FORMAT_NAMES`),
a strategy with options, prompts (system, custom agent, reminders, tools), a history
(chat, tool-heavy or mixed; system messages; pinned messages anywhere, the newest user
message included; oversized tool results; huge first tasks), files on user messages
(documents, images, audio; pending, failed, deleted), a project (whole or chunked), a
compaction summary made for another model, and the turns appended between reads.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from contextq.assembly import FileView, Prompts
from contextq.history import Message
from contextq.history.chains import unit_at
from contextq.history.plan import CompactionView
from contextq.history.types import FORMAT_NAMES
from tests.engine.assembly.harness.binding import BoundSpec, draw_bound
from tests.engine.assembly.harness.histories import (
    MAX_PINNED,
    build_history,
    effective_window,
    next_turn,
)
from tests.engine.assembly.harness.native_turns import Drawn, nativise
from tests.engine.assembly.harness.text import sized_tokens, text_of

# (model, weight): native windows from 8K to 1M, all three providers' image formulas,
# counted exactly (OpenAI) and calibrated (docs/token-counting.md: every tokenizer family of
# contextq.calibration: Claude before and since Opus 4.7, Gemini, the others), a Claude
# hosted elsewhere (Bedrock: calibrated by its name)
MODELS = (
    ("gpt-4o", 5),
    ("gpt-4", 3),
    ("gpt-4o-mini", 2),
    ("claude-sonnet-4-5", 3),
    ("claude-opus-4-7", 2),
    ("claude-3-5-haiku-20241022", 1),
    ("anthropic.claude-sonnet-4-5-20250929-v1:0", 1),
    ("gemini-2.5-flash", 2),
    ("gemini-2.5-pro", 1),
    ("gemini-2.0-flash", 1),
    ("gpt-4.1", 1),
    ("gpt-5", 1),
    ("gpt-4o-audio-preview", 1),
    ("mistral-large-latest", 1),
)
WINDOWS = (
    (4096, 5),
    (8192, 5),
    (16384, 3),
    (32768, 2),
    (65536, 1),
    (128000, 1),
    (200000, 0.5),
    (400000, 0.5),
    (1048576, 1),
)
STRATEGIES = (
    (None, 8),
    ("token_budget", 4),
    ("sliding_window", 2),
    ("hierarchical", 1),
    ("noop", 1),
    ("no_such_strategy", 0.2),
)
LARGE_WINDOW_HISTORY_TOKENS = 4_000
MAX_HISTORY_TOKENS = 8_000  # a case's history: pressure for small windows, speed for large


@dataclass(slots=True)
class ProjectSpec:
    """A project as the service would find it: instructions, ready files (each with
    best-first chunks) and files still processing or failed."""

    instructions: str | None
    files: list[tuple[str, str, str]]  # (file id, title, contents)
    chunk_tokens: int = 400
    pending: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Case:
    seed: int
    model: str
    window: int  # MAX_CONTEXT_TOKENS
    format: str
    strategy: str | None
    options: dict[str, Any]
    prompts: Prompts
    reads: list[list[Message]]  # messages appended before each read (reads[0]: the history)
    files: dict[str, FileView] = field(default_factory=dict)
    tools: list[dict[str, Any]] | None = None
    threshold: float | None = None
    force_filter: bool = False
    skip_filter: bool = False
    auto: bool = True  # ENABLE_AUTO_COMPRESSION
    project: ProjectSpec | None = None
    compaction: CompactionView | None = None
    native: Drawn | None = None  # what the reasoning dimension made of the case
    bound: BoundSpec | None = None  # a bound trajectory after the last read (binding)

    def copy(self, **changes: Any) -> Case:
        reads = [[replace(m) for m in read] for read in self.reads]
        return replace(self, **{"reads": reads, **changes})

    def messages_until(self, read: int) -> list[Message]:
        return [m for batch in self.reads[: read + 1] for m in batch]

    def describe(self) -> str:
        """The case as text: settings first, then every message in one line each."""
        head = {
            "seed": self.seed,
            "model": self.model,
            "MAX_CONTEXT_TOKENS": self.window,
            "format": self.format,
            "strategy": self.strategy,
            "options": self.options,
            "threshold": self.threshold,
            "force_filter": self.force_filter,
            "skip_filter": self.skip_filter,
            "auto": self.auto,
            "system_prompt": _short(self.prompts.system_prompt),
            "custom_agent_prompt": _short(self.prompts.custom_agent_prompt),
            "replace_system_prompt": self.prompts.replace_system_prompt,
            "reminders": len(self.prompts.reminders),
            "tools": len(self.tools or []),
            "project": None
            if self.project is None
            else {
                "files": len(self.project.files),
                "pending": self.project.pending,
                "failed": self.project.failed,
            },
            "compaction": None
            if self.compaction is None
            else {
                "through_seq": self.compaction.through_seq,
                "summary_chars": len(self.compaction.summary),
            },
            "native": None
            if self.native is None
            else {"vendors": _runs(self.native.vendors), "model": self.native.model},
            "bound": None
            if self.bound is None
            else {"model": self.bound.model, "steps": self.bound.steps, "seed": self.bound.seed},
        }
        lines = [json.dumps(head, ensure_ascii=False, default=str)]
        for r, batch in enumerate(self.reads):
            lines.append(f"-- read {r} appends {len(batch)} messages:")
            lines += ["  " + describe_message(m, self.files) for m in batch]
        return "\n".join(lines)


def _short(text: str | None, n: int = 60) -> str | None:
    if text is None:
        return None
    return text if len(text) <= n else f"{text[:n]}… ({len(text)} chars)"


def _runs(vendors: list[str]) -> str:
    """Per-turn vendors in runs: `anthropic x3 > default > responses x2`."""
    runs: list[list[Any]] = []
    for v in vendors:
        if runs and runs[-1][0] == v:
            runs[-1][1] += 1
        else:
            runs.append([v, 1])
    return " > ".join(v if n == 1 else f"{v} x{n}" for v, n in runs)


def describe_message(m: Message, files: Mapping[str, FileView]) -> str:
    bits = [f"seq={m.seq}", m.role]
    if m.native is not None:
        bits.append(f"{m.native.format}:{json.dumps(m.native.payload, ensure_ascii=False)[:160]}")
    if m.pinned:
        bits.append("PINNED")
    if m.tool_calls:
        bits.append("calls=" + ",".join(m.call_ids))
    if m.tool_call_id:
        bits.append(f"answers={m.tool_call_id}")
    text = m.text()
    bits.append(f"chars={len(text)}")
    if m.file_ids:
        kinds = [f"{f}:{files[f].status}/{files[f].category}" for f in m.file_ids if f in files]
        bits.append("files=[" + " ".join(kinds) + "]")
    bits.append(repr(_short(text, 50)))
    return " ".join(bits)


def _pick(rng: random.Random, weighted: tuple[tuple[Any, float], ...]) -> Any:
    values = [v for v, _ in weighted]
    return rng.choices(values, weights=[w for _, w in weighted])[0]


# ---------------------------------------------------------------- the rest of a case


def _options(rng: random.Random, strategy: str | None, window: int) -> dict[str, Any]:
    """Valid options for the strategy, each drawn with a probability of a quarter; the
    budget figures stay within what leaves a usable room (a quarter of the window for
    the answer and the tools at most, so the hard room holds a turn)."""
    name = strategy or "token_budget"
    if name not in ("token_budget", "sliding_window", "hierarchical", "noop"):
        return {}
    drawn: dict[str, Any] = {}
    common = {
        "keep_tool_results": lambda: rng.randrange(0, 9),
        "min_messages_to_keep": lambda: rng.choice((0, 2, 10, 30)),
        "project_share": lambda: round(rng.uniform(0.1, 0.9), 2),
    }
    budget = {
        "budget_percentage": lambda: round(rng.uniform(0.5, 1.0), 2),
        "reserve_tokens": lambda: rng.choice((0, 200, 1000, window // 8)),
        "max_output_tokens": lambda: rng.choice((None, 256, window // 5)),
        "tool_definition_tokens": lambda: rng.choice((0, 100, window // 20)),
    }
    allowed: dict[str, Any] = {
        "token_budget": {**common, **budget, "trim_to": lambda: round(rng.uniform(0.3, 1.0), 2)},
        "sliding_window": {**common, "window_size": lambda: rng.randrange(1, 40)},
        # recent_actions stays below compression_threshold x max_working_memory (10)
        "hierarchical": {
            **common,
            **budget,
            "recent_actions": lambda: rng.randrange(0, 5),
            "compression_threshold": lambda: round(rng.uniform(0.5, 1.0), 2),
        },
        "noop": {"project_share": common["project_share"]},
    }[name]
    for key, draw in allowed.items():
        if rng.random() < 0.25:
            drawn[key] = draw()
    return drawn


def _prompts(rng: random.Random, window: int) -> Prompts:
    room = max(40, window // 40)  # prompt parts stay a small share of the window
    system = (
        None
        if rng.random() < 0.4
        else "You are a careful agent. " + text_of(rng, sized_tokens(rng, room))
    )
    agent = None if rng.random() < 0.7 else "Custom agent: " + text_of(rng, sized_tokens(rng, room))
    reminders = tuple(
        "Remember: " + text_of(rng, sized_tokens(rng, 40))
        for _ in range(rng.choice((0, 0, 0, 1, 2)))
    )
    return Prompts(
        system_prompt=system,
        owner_system_prompt="Owner prompt. " + text_of(rng, 30) if rng.random() < 0.1 else None,
        custom_agent_prompt=agent,
        replace_system_prompt=agent is not None and rng.random() < 0.15,
        reminders=reminders,
        timezone=rng.choice((None, None, "Europe/Paris", "Asia/Tokyo")),
        datetime_granularity="minute" if rng.random() < 0.05 else "day",
    )


def _tools(rng: random.Random) -> list[dict[str, Any]] | None:
    if rng.random() < 0.7:
        return None
    names = rng.sample(
        ["search", "bash", "read_file", "web_search", "write_file"], rng.randrange(1, 4)
    )
    return [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": f"{n}: " + text_of(rng, 20),
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            },
        }
        for n in names
    ]


def _project(rng: random.Random) -> ProjectSpec | None:
    if rng.random() < 0.85:
        return None
    files = [
        (f"p{i}", f"handbook-{i}.md", text_of(rng, sized_tokens(rng, 6_000)))
        for i in range(rng.randrange(1, 7))
    ]
    return ProjectSpec(
        instructions="Project instructions: " + text_of(rng, 30) if rng.random() < 0.7 else None,
        files=files,
        pending=["p-pending"] if rng.random() < 0.2 else [],
        failed=["p-failed"] if rng.random() < 0.1 else [],
    )


def _compaction(rng: random.Random, history: list[Message], window: int) -> CompactionView | None:
    if rng.random() < 0.9 or len(history) < 6:
        return None
    # the compaction cuts between units: a tool call and its results are never split
    end = unit_at(history, rng.randrange(1, len(history) - 2)).end
    if end >= len(history) - 2:
        return None
    through = history[end].seq
    # made for another model: anything from a tenth to three times this window
    tokens = int(window * rng.uniform(0.1, 3.0))
    parts = [
        "## Goal",
        "Ship the fix.",
        "## Decisions",
        "- use the cache",
        "## Narrative",
        text_of(rng, min(tokens, 40_000)),
    ]
    return CompactionView(summary="\n".join(parts), through_seq=through, id="c1")


def _limit_pins(reads: list[list[Message]]) -> None:
    pinned = [m for batch in reads for m in batch if m.pinned]
    for m in pinned[MAX_PINNED:]:
        m.pinned = False


def _format(seed: int, drawn: str, all_formats: bool) -> str:
    """The case's format: one of every format, from its own generator, so that the rest
    of the case is what the seed drew before there were more than two (`drawn`, kept
    with `all_formats=False`: the shrunk regression cases were found in that format)."""
    if not all_formats:
        return drawn
    return random.Random(seed * 4 + 1).choice(FORMAT_NAMES)


def generate_case(
    seed: int,
    *,
    all_formats: bool = True,
    reasoning: bool | None = None,
    binding: bool | None = None,
) -> Case:
    """The case of `seed`. `all_formats=False`: the format it drew before there were
    four, and no native turns (the shrunk regressions were found so); `reasoning`: with
    the reasoning dimension (native turns, `native_turns`; default: `all_formats`);
    `binding`: with a bound trajectory when it draws one (`binding`; default: as
    `reasoning`)."""
    rng = random.Random(seed)
    model = _pick(rng, MODELS)
    window = _pick(rng, WINDOWS)
    strategy = _pick(rng, STRATEGIES)
    forced = rng.random() < 0.15
    case = Case(
        seed=seed,
        model=model,
        window=window,
        format=_format(seed, rng.choice(("openai", "anthropic")), all_formats),
        strategy=strategy,
        options=_options(rng, strategy, effective_window(model, window)),
        prompts=_prompts(rng, effective_window(model, window)),
        reads=[],
        tools=_tools(rng),
        threshold=rng.choice((None, None, round(rng.uniform(0.3, 0.95), 2))),
        force_filter=forced,
        skip_filter=not forced and rng.random() < 0.05,
        auto=rng.random() < 0.95,
    )
    # from a sixteenth of the window to three times it; windows past 32K are never filled
    # (a case must cost milliseconds): they check the unfiltered path and the large limits
    pressure = 2 ** rng.uniform(-4, 1.6)
    usable = effective_window(model, window)
    most = MAX_HISTORY_TOKENS if usable <= 32_768 else LARGE_WINDOW_HISTORY_TOKENS
    target = max(200, min(most, int(usable * pressure)))
    history = build_history(rng, case, target)
    case.reads.append(history)
    for _ in range(rng.choice((0, 1, 1, 1, 2))):
        case.reads.append(next_turn(rng, case, case.reads[-1]))
    _limit_pins(case.reads)
    case.project = _project(rng)
    case.compaction = _compaction(rng, history, effective_window(model, window))
    reasoning = all_formats if reasoning is None else reasoning
    if reasoning:
        case.native = nativise(case, _pick)
    if reasoning if binding is None else binding:
        case.bound = draw_bound(case)
        if case.bound is not None:
            case.model = case.bound.model
    return case
