"""What a target model does with reasoning from earlier turns (docs/context.md#reasoning-state;
design 26 §5): the catalogue's rule, by model name.

`rule_for(name)` answers two questions about the model a context is for:
- `keeps_earlier`: the model reads back reasoning of turns before the current tool loop
  (so contextq sends it, counted under `token_breakdown.reasoning`); when False the
  vendor strips it anyway, and contextq leaves it out (`reasoning_dropped.earlier_turns`);
- `binds`: each reasoning block is bound to the exact prefix it was written after
  (docs/context.md#bound-reasoning: used by the binding rule, not here).

The installed model data (models.dev) has no field for either, and stops at Claude Opus
4.7 / Sonnet 4.6 and GPT-5.5: the rules are name patterns over model generations, each
from the vendor's own documentation (cited at each rule). A name no rule knows is
treated as keeping and binding its reasoning: the strict side (docs/context.md#bound-reasoning).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class ReasoningRule:
    keeps_earlier: bool
    binds: bool
    source: str  # where the rule comes from (a vendor's documentation page)


# Anthropic, extended thinking, "Thinking blocks from previous turns"
# (https://platform.claude.com/docs/en/build-with-claude/thinking): prior turns' thinking
# is kept in context on "Claude Opus 4.5 and later Opus models, Claude Sonnet 4.6 and
# later Sonnet models, Claude Fable 5, Claude Mythos 5, and Claude Mythos Preview"; on
# "earlier Opus and Sonnet models, and all Haiku models through Claude Haiku 4.5 … the
# API strips them automatically".
# Preserved thinking (https://platform.claude.com/docs/en/build-with-claude/preserved-thinking,
# and the Fable 5.1 / Opus 5.5 "what's new" pages): Claude Fable 5.1 and later, Opus 5.5,
# Sonnet 5.5 and Haiku 5.5 keep every turn's thinking and bind each block to its prefix.
# The docs disagree on whether Mythos 5.1 checks the binding: it is taken as binding.
ANTHROPIC_THINKING = "platform.claude.com/docs/en/build-with-claude/thinking"
ANTHROPIC_PRESERVED = "platform.claude.com/docs/en/build-with-claude/preserved-thinking"
# OpenAI, `reasoning.context` (openai-python `types/shared_params/reasoning.py`, the
# Reasoning guide https://developers.openai.com/api/docs/guides/reasoning): "The
# `gpt-5.6` model family defaults to `all_turns`; earlier models default to
# `current_turn`" (reasoning items of earlier turns are ignored and stripped). Newer
# frontier models check the prefix before each reasoning item and drop what follows a
# change (https://developers.openai.com/api/docs/guides/preserved-reasoning): gpt-5.6
# and later are taken as binding.
OPENAI_REASONING = "developers.openai.com/api/docs/guides/reasoning"
OPENAI_PRESERVED = "developers.openai.com/api/docs/guides/preserved-reasoning"
# Google, thought signatures (https://ai.google.dev/gemini-api/docs/thought-signatures):
# "Only current turn is required; we don't validate on previous turns": earlier turns'
# signatures and thoughts are harmless to send, and kept (a later request may need
# them); nothing is bound to a prefix.
GOOGLE_SIGNATURES = "ai.google.dev/gemini-api/docs/thought-signatures"

UNKNOWN = ReasoningRule(True, True, "unknown model: kept and bound (the strict side)")

_CLAUDE = re.compile(r"claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:[-.](\d{1,2}))?(?!\d)")
_CLAUDE_OLD = re.compile(r"claude-(?:\d(?:[-.]\d)?-(?:opus|sonnet|haiku)|2|instant)(?![a-z])")
_CLAUDE_PREVIEW = re.compile(r"claude-mythos-preview")
_GPT = re.compile(r"(?:^|[/:.])gpt-(\d+)(?:[.-](\d{1,2}))?(?!\d)")
_O_SERIES = re.compile(r"(?:^|[/:.])o\d+(?![\d.])")
_GEMINI = re.compile(r"(?:^|[/:.@])(gemini|gemma)-")

# (family, from version) → rule, newest first; a version below every entry strips
_CLAUDE_RULES: dict[str, tuple[tuple[tuple[int, int], ReasoningRule], ...]] = {
    "opus": (
        ((5, 5), ReasoningRule(True, True, ANTHROPIC_PRESERVED)),
        ((4, 5), ReasoningRule(True, False, ANTHROPIC_THINKING)),
    ),
    "sonnet": (
        ((5, 5), ReasoningRule(True, True, ANTHROPIC_PRESERVED)),
        ((4, 6), ReasoningRule(True, False, ANTHROPIC_THINKING)),
    ),
    "haiku": (
        ((5, 5), ReasoningRule(True, True, ANTHROPIC_PRESERVED)),
        ((4, 6), UNKNOWN),  # after Haiku 4.5, before 5.5: no documented rule
    ),
    "fable": (
        ((5, 1), ReasoningRule(True, True, ANTHROPIC_PRESERVED)),
        ((5, 0), ReasoningRule(True, False, ANTHROPIC_THINKING)),
    ),
    "mythos": (
        ((5, 1), ReasoningRule(True, True, ANTHROPIC_PRESERVED)),
        ((5, 0), ReasoningRule(True, False, ANTHROPIC_THINKING)),
    ),
}
_STRIPS = ReasoningRule(False, False, ANTHROPIC_THINKING)


@lru_cache(maxsize=1024)
def rule_for(model: str | None) -> ReasoningRule:
    """The rule of the model named `model` (any spelling the catalogue takes:
    `anthropic/claude-opus-4-5-20251101`, `claude-sonnet-4-6`, `gpt-5.6-mini`, …)."""
    name = (model or "").strip().lower()
    if not name:
        return UNKNOWN
    return _claude(name) or _openai(name) or _google(name) or UNKNOWN


def _claude(name: str) -> ReasoningRule | None:
    found = _CLAUDE.search(name)
    if found is None:
        if _CLAUDE_PREVIEW.search(name):
            return ReasoningRule(True, False, ANTHROPIC_THINKING)
        return _STRIPS if _CLAUDE_OLD.search(name) else None  # Claude 3.x, 2, Instant
    family, major, minor = found.group(1), int(found.group(2)), int(found.group(3) or 0)
    for since, rule in _CLAUDE_RULES[family]:
        if (major, minor) >= since:
            return rule
    return _STRIPS if family in ("opus", "sonnet", "haiku") else UNKNOWN


def _openai(name: str) -> ReasoningRule | None:
    found = _GPT.search(name)
    if found is not None:
        version = (int(found.group(1)), int(found.group(2) or 0))
        if version >= (5, 6):
            return ReasoningRule(True, True, OPENAI_PRESERVED)
        return ReasoningRule(False, False, OPENAI_REASONING)  # current_turn (or no reasoning)
    if _O_SERIES.search(name):
        return ReasoningRule(False, False, OPENAI_REASONING)
    return None


def _google(name: str) -> ReasoningRule | None:
    if _GEMINI.search(name):
        return ReasoningRule(True, False, GOOGLE_SIGNATURES)
    return None
