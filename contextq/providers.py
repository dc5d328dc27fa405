"""LLM provider names and their defaults for models the catalogue does not know
(docs/history.md#history-strategies).

`LLM_PROVIDER` takes seed 004's names or the catalogue's own provider ids. Each name maps
to a canonical provider (the catalogue's id, which decides the tokenizer family and
image-token formula) and a context window used for models the catalogue does not know.
Known models keep their catalogue window. Kept apart from `catalog.py` so that
`settings.py` can validate `LLM_PROVIDER` without importing the catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProviderDefault:
    provider: str  # canonical provider id (the catalogue's)
    context_window: int  # tokens, for a model the catalogue does not know
    max_output_tokens: int
    # what an unknown model of this provider is assumed to take as input
    # (docs/history.md#how-files-are-given-to-the-model: the catalogue's modalities decide; for a
    # model it does not know, the provider's usual)
    input_modalities: tuple[str, ...] = ("text", "image")


DEFAULT_LLM_PROVIDER = "azure-openai"
_TEXT = ("text",)
_WITH_AUDIO = ("text", "image", "audio")

# The catalogue's own providers: a typical current model of each.
CANONICAL_DEFAULTS: dict[str, ProviderDefault] = {
    # openai and anthropic are also seed 004 names: the seed's windows apply
    "openai": ProviderDefault("openai", 100_000, 16_384),
    "anthropic": ProviderDefault("anthropic", 150_000, 8_192),
    "google": ProviderDefault("google", 1_048_576, 8_192, _WITH_AUDIO),  # Gemini 1.5/2.x
    "mistral": ProviderDefault("mistral", 128_000, 8_192, _TEXT),
    "meta": ProviderDefault("meta", 128_000, 4_096, _TEXT),  # Llama 3.1+
    "qwen": ProviderDefault("qwen", 131_072, 8_192, _TEXT),  # Qwen 2.5+
    "deepseek": ProviderDefault("deepseek", 128_000, 8_192, _TEXT),
    "xai": ProviderDefault("xai", 131_072, 8_192),
}

# Seed 004's provider names and default limits (100K / 150K / 800K / 150K). Bedrock's
# default model in the seed is Claude, hence the anthropic family; Vertex AI is Google's.
SEED_DEFAULTS: dict[str, ProviderDefault] = {
    "azure-openai": ProviderDefault("openai", 100_000, 16_384),
    "openai": CANONICAL_DEFAULTS["openai"],
    "aws-bedrock": ProviderDefault("anthropic", 150_000, 8_192),
    "anthropic-claude": ProviderDefault("anthropic", 150_000, 8_192),
    "anthropic": CANONICAL_DEFAULTS["anthropic"],
    "google-gemini": ProviderDefault("google", 800_000, 8_192, _WITH_AUDIO),
    "gcp-vertexai": ProviderDefault("google", 150_000, 8_192, _WITH_AUDIO),
}

PROVIDER_DEFAULTS: dict[str, ProviderDefault] = {**SEED_DEFAULTS, **CANONICAL_DEFAULTS}
PROVIDER_NAMES: tuple[str, ...] = tuple(PROVIDER_DEFAULTS)


def check_provider_name(name: str) -> str:
    """`LLM_PROVIDER` as written (case and spaces ignored); unknown → ValueError listing names."""
    clean = name.strip().lower()
    if clean not in PROVIDER_DEFAULTS:
        raise ValueError(
            f"LLM_PROVIDER {name!r} is not a known provider; use one of {', '.join(PROVIDER_NAMES)}"
        )
    return clean
