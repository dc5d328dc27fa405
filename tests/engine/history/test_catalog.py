"""Model catalogue: models.dev data, our own table, provider defaults, settings overrides."""

from __future__ import annotations

import socket
import time

import pytest

from contextq.catalog import PROVIDER_DEFAULTS, resolve_model
from contextq.settings import Settings


@pytest.fixture
def settings() -> Settings:
    return Settings()


@pytest.mark.parametrize(
    ("model", "provider", "window", "output"),
    [
        ("gpt-4o", "openai", 128_000, 16_384),
        ("openai/gpt-4o", "openai", 128_000, 16_384),
        ("gpt-4o-2024-08-06", "openai", 128_000, 16_384),
        ("gpt-4o-mini-2024-07-18", "openai", 128_000, 16_384),  # date suffix not listed
        ("ft:gpt-4o-mini:acme::abc123", "openai", 128_000, 16_384),  # fine-tuned
        ("gpt-4.1", "openai", 1_047_576, 32_768),
        ("claude-sonnet-4-5", "anthropic", 200_000, 64_000),
        ("anthropic/claude-sonnet-4-5", "anthropic", 200_000, 64_000),
        ("claude-sonnet-4.5", "anthropic", 200_000, 64_000),  # dots as OpenRouter writes them
        ("claude-3-5-haiku-latest", "anthropic", 200_000, 8_192),
        ("gemini-2.5-pro", "google", 1_048_576, 65_536),
        ("google/gemini-2.0-flash", "google", 1_048_576, 8_192),
        ("mistral-large-2411", "mistral", 131_072, 16_384),
        ("llama-3.3-70b-instruct", "meta", 128_000, 4_096),
        ("meta-llama/Llama-3.1-70B-Instruct", "meta", 128_000, 4_096),  # our own table
        ("qwen3-max", "qwen", 262_144, 65_536),
        ("Qwen/Qwen2.5-72B-Instruct", "qwen", 131_072, 8_192),
    ],
)
def test_known_models(
    settings: Settings, model: str, provider: str, window: int, output: int
) -> None:
    limits = resolve_model(model, settings)
    assert (limits.provider, limits.context_window, limits.max_output_tokens) == (
        provider,
        window,
        output,
    )
    assert limits.source in ("models.dev", "contextq")


def test_encoding_follows_the_model(settings: Settings) -> None:
    assert resolve_model("gpt-4o", settings).encoding == "o200k_base"
    assert resolve_model("ft:gpt-4o-mini:acme::x", settings).encoding == "o200k_base"
    assert resolve_model("gpt-4", settings).encoding == "cl100k_base"
    assert resolve_model("claude-sonnet-4-5", settings).encoding == "cl100k_base"


def test_separate_input_limit_is_kept(settings: Settings) -> None:
    limits = resolve_model("gpt-5", settings)
    assert limits.context_window == 400_000
    assert limits.max_input_tokens == 272_000


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("claude-9-ultra", "anthropic"),
        ("gemini-99-pro", "google"),
        ("gpt-7-turbo", "openai"),
        ("mixtral-99x1b", "mistral"),
        ("qwen9-giant", "qwen"),
        ("llama-9-1t", "meta"),
    ],
)
def test_unknown_models_get_their_provider_default(
    settings: Settings, model: str, provider: str
) -> None:
    limits = resolve_model(model, settings)
    assert limits.provider == provider
    assert limits.source == "provider-default"
    assert (limits.context_window, limits.max_output_tokens) == PROVIDER_DEFAULTS[provider]


def test_unknown_model_uses_llm_provider_setting() -> None:
    limits = resolve_model("house-model-v2", Settings(LLM_PROVIDER="anthropic"))
    assert (limits.provider, limits.context_window) == ("anthropic", 200_000)
    bare = resolve_model("house-model-v2", Settings())
    assert (bare.provider, bare.context_window) == ("openai", 128_000)
    assert resolve_model(None, Settings(LLM_PROVIDER="google")).context_window == 1_048_576


def test_max_context_tokens_caps_window_and_output() -> None:
    limits = resolve_model("gpt-4o", Settings(MAX_CONTEXT_TOKENS=8_000))
    assert limits.context_window == 8_000
    assert limits.max_output_tokens == 8_000
    assert resolve_model("gpt-4", Settings(MAX_CONTEXT_TOKENS=100_000)).context_window == 8_192


def test_lookup_is_offline_and_fast(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the catalogue tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    resolve_model("gpt-4o", settings)  # builds the index (if not yet built)
    started = time.perf_counter()
    for i in range(2_000):
        name = ("gpt-4o", "claude-sonnet-4-5", "gemini-2.5-pro", f"x-{i % 7}")[i % 4]
        resolve_model(name, settings)
    assert (time.perf_counter() - started) / 2_000 < 0.0005  # well under half a millisecond
