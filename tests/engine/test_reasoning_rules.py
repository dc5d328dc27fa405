"""The catalogue's reasoning rule by model name (docs/context.md#reasoning-state, design 26 §5):
which models keep earlier turns' reasoning and which bind it, each generation as its vendor's
documentation says, the newer ones past the installed model data by name pattern; an
unknown name on the strict side."""

from __future__ import annotations

import pytest

from contextq.reasoning_rules import UNKNOWN, rule_for

# name → (keeps earlier turns' reasoning, binds it to its prefix)
RULES = {
    # Anthropic: Opus 4.5+ and Sonnet 4.6+ keep; earlier Opus/Sonnet and Haiku <= 4.5 strip
    "claude-opus-4-5-20251101": (True, False),
    "claude-opus-4-7": (True, False),
    "anthropic/claude-sonnet-4-6": (True, False),
    "claude-opus-4-1-20250805": (False, False),
    "claude-opus-4-20250514": (False, False),  # Opus 4 (the date is not a minor version)
    "claude-sonnet-4-5": (False, False),
    "claude-haiku-4-5-20251001": (False, False),
    "claude-3-7-sonnet-20250219": (False, False),
    "claude-3-5-haiku-latest": (False, False),
    "claude-2.1": (False, False),
    "claude-fable-5": (True, False),
    "claude-mythos-5": (True, False),
    "claude-mythos-preview": (True, False),
    # preserved thinking: Fable 5.1+, Opus/Sonnet/Haiku 5.5+ keep and bind
    "claude-fable-5-1": (True, True),
    "claude-fable-5.2": (True, True),
    "claude-opus-5-5": (True, True),
    "anthropic.claude-sonnet-5-5-v1:0": (True, True),
    "claude-haiku-5-5@20261101": (True, True),
    "claude-haiku-5": (True, True),  # between 4.5 and 5.5: no documented rule
    # OpenAI: gpt-5.6 and later all_turns (and binding), earlier current_turn
    "gpt-5.6": (True, True),
    "openai/gpt-5.6-mini": (True, True),
    "gpt-6": (True, True),
    "gpt-5.5": (False, False),
    "gpt-5.3-codex": (False, False),
    "o3": (False, False),
    "o4-mini": (False, False),
    "gpt-4o": (False, False),
    # Google: earlier turns not validated: kept, not bound
    "gemini-3-pro-preview": (True, False),
    "google/gemini-2.5-flash": (True, False),
    # unknown: the strict side
    "my-own-model": (True, True),
    "": (True, True),
}


@pytest.mark.parametrize("name", list(RULES))
def test_each_generation_has_its_vendors_rule(name: str) -> None:
    rule = rule_for(name)
    assert (rule.keeps_earlier, rule.binds) == RULES[name]
    assert rule.source  # every rule names where it comes from


def test_an_unknown_model_keeps_and_binds() -> None:
    assert rule_for(None) is UNKNOWN and rule_for("mistral-large-2411") is UNKNOWN
