"""Model catalogue: models.dev data, our own table, provider defaults, settings overrides."""

from __future__ import annotations

import socket
import time

import pytest
from pydantic import ValidationError

from contextq.catalog import resolve_model
from contextq.history import STRATEGY_NAMES
from contextq.providers import CANONICAL_DEFAULTS, PROVIDER_NAMES
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
    default = CANONICAL_DEFAULTS[provider]
    assert (limits.context_window, limits.max_output_tokens) == (
        default.context_window,
        default.max_output_tokens,
    )


# seed 004's provider names and their windows for models the catalogue does not know
SEED_PROVIDERS = [
    ("azure-openai", "openai", 100_000),
    ("openai", "openai", 100_000),
    ("aws-bedrock", "anthropic", 150_000),
    ("anthropic-claude", "anthropic", 150_000),
    ("anthropic", "anthropic", 150_000),
    ("google-gemini", "google", 800_000),
    ("gcp-vertexai", "google", 150_000),
]


@pytest.mark.parametrize(("name", "provider", "window"), SEED_PROVIDERS)
def test_llm_provider_names_give_their_default_window(
    name: str, provider: str, window: int
) -> None:
    settings = Settings(LLM_PROVIDER=name)
    for model in ("house-model-v2", None, ""):
        limits = resolve_model(model, settings)
        assert (limits.provider, limits.context_window) == (provider, window)
        assert limits.source == "provider-default"
    # a known model keeps its catalogue window whatever the provider setting
    assert resolve_model("gpt-4o", settings).context_window == 128_000
    assert resolve_model("gemini-2.5-pro", settings).context_window == 1_048_576
    # MAX_CONTEXT_TOKENS caps every model, known or not
    capped = Settings(LLM_PROVIDER=name, MAX_CONTEXT_TOKENS=50_000)
    assert resolve_model("house-model-v2", capped).context_window == 50_000
    assert resolve_model("gemini-2.5-pro", capped).context_window == 50_000


def test_llm_provider_defaults_to_azure_openai_and_accepts_catalogue_ids() -> None:
    assert Settings().LLM_PROVIDER == "azure-openai"
    assert resolve_model("house-model-v2", Settings()).context_window == 100_000
    assert Settings(LLM_PROVIDER=" AWS-Bedrock ").LLM_PROVIDER == "aws-bedrock"
    mistral = resolve_model("house-model-v2", Settings(LLM_PROVIDER="mistral"))
    assert (mistral.provider, mistral.context_window) == ("mistral", 128_000)
    # the model's own name wins over the setting for a family it names
    claude = resolve_model("claude-9-ultra", Settings(LLM_PROVIDER="google-gemini"))
    assert (claude.provider, claude.context_window) == ("anthropic", 150_000)
    assert resolve_model(None, Settings(LLM_PROVIDER="google")).context_window == 1_048_576


def test_unknown_llm_provider_is_refused_listing_the_names() -> None:
    with pytest.raises(ValidationError) as err:
        Settings(LLM_PROVIDER="azure")
    message = str(err.value)
    assert "LLM_PROVIDER 'azure' is not a known provider" in message
    for name in PROVIDER_NAMES:
        assert name in message


def test_context_defaults_are_settings_and_validated() -> None:
    settings = Settings()
    assert settings.CONTEXT_DEFAULT_STRATEGY == "token_budget"
    assert settings.CONTEXT_DEFAULT_OPTIONS == {}
    assert settings.CONTEXT_DEFAULT_THRESHOLD == 0.8
    custom = Settings(
        CONTEXT_DEFAULT_STRATEGY="sliding_window",
        CONTEXT_DEFAULT_OPTIONS={"window_size": 30},
        CONTEXT_DEFAULT_THRESHOLD=0.6,
    )
    assert custom.CONTEXT_DEFAULT_OPTIONS == {"window_size": 30}
    with pytest.raises(ValidationError, match=r"CONTEXT_DEFAULT_OPTIONS\.window_size"):
        Settings(CONTEXT_DEFAULT_OPTIONS={"window_size": 30})  # not a token_budget option
    with pytest.raises(ValidationError, match=r"CONTEXT_DEFAULT_OPTIONS\.window_size"):
        Settings(
            CONTEXT_DEFAULT_STRATEGY="sliding_window", CONTEXT_DEFAULT_OPTIONS={"window_size": 0}
        )
    with pytest.raises(ValidationError, match="CONTEXT_DEFAULT_STRATEGY"):
        Settings(CONTEXT_DEFAULT_STRATEGY="smart")
    with pytest.raises(ValidationError, match="CONTEXT_DEFAULT_THRESHOLD"):
        Settings(CONTEXT_DEFAULT_THRESHOLD=1.5)
    # the settings' Literal and the engine's strategy names are one list
    literal = Settings.model_fields["CONTEXT_DEFAULT_STRATEGY"].annotation
    assert tuple(literal.__args__) == STRATEGY_NAMES  # type: ignore[union-attr]


def test_context_defaults_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTEXT_DEFAULT_OPTIONS", '{"budget_percentage": 0.5}')
    monkeypatch.setenv("CONTEXT_DEFAULT_THRESHOLD", "0.9")
    settings = Settings()
    assert settings.CONTEXT_DEFAULT_OPTIONS == {"budget_percentage": 0.5}
    assert settings.CONTEXT_DEFAULT_THRESHOLD == 0.9
    monkeypatch.setenv("CONTEXT_DEFAULT_OPTIONS", "[1, 2]")
    with pytest.raises(ValidationError, match="CONTEXT_DEFAULT_OPTIONS"):
        Settings()


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
