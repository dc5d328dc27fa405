"""The token count of a context as sent (docs/context.md#the-rooms), one definition for every
format.

A list costs the sum of its messages, and a message its *node* count: the JSON
serialisation as the API sends it, nothing added (no per-message framing, no reply
priming: docs/token-counting.md). A node (a message dict or a content part/block) counts:

- an image part: the model provider's published formula for its pixel size (OpenAI
  high detail — 85 for `detail: low` —, Anthropic's wxh/750: `contextq.files.images`;
  Gemini's 258 per 768-px tile);
- an audio part: its duration at the provider's rate (OpenAI 10 tokens/s, Gemini 32
  tokens/s);
- a node whose list of parts (`content`; the format says the key) is a list: the node
  with that list empty as compact JSON, plus each element's count;
- anything else: its compact JSON (`json.dumps(..., separators=(",", ":"),
  ensure_ascii=False)`) in the model's encoding.

Which nodes are images or audio is the format's to say (`WireFormat.media_of`; OpenAI's
and Anthropic's shapes: `chat_media`). With `format=anthropic` the `system` blocks count
as nodes. A string content is counted whole, exactly as `contextq.history.message_tokens`
counts a stored message, so a stored count is reused as is when the encoding matches.

Each JSON string is tokenized once and remembered (`_JSON_TOKENS`, bounded by size):
documents and long messages are not re-tokenized on every request.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from contextq.files.images import anthropic_tokens, openai_high_tokens
from contextq.history.message_tokens import serialise
from contextq.tokens import count_tokens

__all__ = [
    "Media",
    "audio_tokens",
    "chat_media",
    "image_tokens",
    "json_tokens",
    "message_tokens",
    "node_tokens",
]

AUDIO_TOKENS_PER_SECOND = {"openai": 10.0, "google": 32.0}
UNKNOWN_IMAGE_SIZE = (1024, 1024)  # an image given by URL: its size is not known here
GEMINI_TILE_TOKENS = 258


def gemini_image_tokens(width: int, height: int) -> int:
    """Gemini: 258 when both sides are ≤ 384 px, else 258 per 768x768 tile."""
    if width <= 384 and height <= 384:
        return GEMINI_TILE_TOKENS
    return GEMINI_TILE_TOKENS * math.ceil(width / 768) * math.ceil(height / 768)


def image_tokens(width: int, height: int, provider: str, detail: str = "high") -> int:
    """An image's tokens by the formula of the model's provider (OpenAI's for the
    providers that publish none)."""
    if provider == "anthropic":
        return anthropic_tokens(width, height)
    if provider == "google":
        return gemini_image_tokens(width, height)
    return 85 if detail == "low" else openai_high_tokens(width, height)


def audio_tokens(duration_s: float, provider: str) -> int:
    rate = AUDIO_TOKENS_PER_SECOND.get(provider, AUDIO_TOKENS_PER_SECOND["openai"])
    return max(1, math.ceil(duration_s * rate))


class _TokenCache:
    """JSON string → token count per encoding, least recently used out first, bounded
    by the characters it holds."""

    def __init__(self, max_chars: int = 64_000_000) -> None:
        self.max_chars = max_chars
        self._items: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def count(self, text: str, encoding: str) -> int:
        key = (encoding, text)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        tokens = count_tokens(text, encoding)
        with self._lock:
            if key not in self._items:
                self._items[key] = tokens
                self._chars += len(text)
                while self._chars > self.max_chars and self._items:
                    (_, old), _n = self._items.popitem(last=False)
                    self._chars -= len(old)
        return tokens

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._chars = 0


_JSON_TOKENS = _TokenCache()


def json_tokens(node: Any, encoding: str) -> int:
    """Tokens of `node` as compact JSON (remembered per JSON string)."""
    return _JSON_TOKENS.count(serialise(node), encoding)


SizeOf = Callable[[str], tuple[int, int] | None]


def image_size_of_data(data_b64: str) -> tuple[int, int] | None:
    """Pixel size of a base64 image (header only; None when it cannot be read)."""
    try:
        raw = base64.b64decode(data_b64, validate=False)
    except (binascii.Error, ValueError):
        return None
    try:
        from PIL import Image  # noqa: PLC0415 - Pillow loads on the first image counted

        with Image.open(io.BytesIO(raw)) as image:
            return int(image.width), int(image.height)
    except Exception:
        return None


@dataclass(frozen=True, slots=True)
class Media:
    """An image or audio node, as counting needs it: its base64 data (None when it is not
    carried in the node: a URL) and an image's detail."""

    kind: Literal["image", "audio"]
    data: str | None
    detail: str = "high"


MediaOf = Callable[[Mapping[str, Any]], Media | None]


def chat_media(node: Mapping[str, Any]) -> Media | None:
    """The image and audio nodes of OpenAI's and Anthropic's shapes: `image_url` (a
    `data:` URL, its `detail`), `image` (a base64 source), `input_audio`."""
    kind = node.get("type")
    if kind == "image_url":
        image_url = node.get("image_url") or {}
        url = str(image_url.get("url", ""))
        data = url.split(",", 1)[1] if url.startswith("data:") and "," in url else None
        return Media("image", data, str(image_url.get("detail") or "high"))
    if kind == "image":
        source = node.get("source") or {}
        return Media(
            "image", str(source.get("data", "")) if source.get("type") == "base64" else None
        )
    if kind == "input_audio":
        return Media("audio", str((node.get("input_audio") or {}).get("data", "")))
    return None


def node_tokens(
    node: Any,
    *,
    encoding: str,
    provider: str,
    size_of: SizeOf = image_size_of_data,
    audio_seconds: Callable[[str], float | None] | None = None,
    media_of: MediaOf = chat_media,
    children: str = "content",
) -> int:
    """A node's count (module docstring). `media_of` tells the format's image and audio
    nodes; `children`: the key of a node's list of parts (Gemini's `parts`)."""
    if not isinstance(node, Mapping):
        return json_tokens(node, encoding)
    media = media_of(node)
    if media is not None:
        return _media_tokens(media, provider, size_of, audio_seconds)
    content = node.get(children)
    if isinstance(content, list):
        frame = json_tokens({**node, children: []}, encoding)
        return frame + sum(
            node_tokens(
                part,
                encoding=encoding,
                provider=provider,
                size_of=size_of,
                audio_seconds=audio_seconds,
                media_of=media_of,
                children=children,
            )
            for part in content
            if isinstance(part, Mapping)
        )
    return json_tokens(node, encoding)


def _media_tokens(
    media: Media,
    provider: str,
    size_of: SizeOf,
    audio_seconds: Callable[[str], float | None] | None,
) -> int:
    if media.kind == "image":
        size = (size_of(media.data) if media.data else None) or UNKNOWN_IMAGE_SIZE
        return image_tokens(size[0], size[1], provider, media.detail)
    seconds = audio_seconds(media.data or "") if audio_seconds is not None else None
    return audio_tokens(seconds if seconds is not None else 0.0, provider)


def message_tokens(message: Mapping[str, Any], *, encoding: str, provider: str) -> int:
    """A whole message: its node count."""
    return node_tokens(message, encoding=encoding, provider=provider)


def clear_caches() -> None:
    _JSON_TOKENS.clear()
