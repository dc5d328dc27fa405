"""An independent recount of a context answer's `token_count`, from its JSON alone.

The definition README's API section states (docs/token-counting.md, docs/context.md#the-rooms: the
honest count): a list costs the sum of its messages, a message its node count, nothing added; a node
whose `content` is a list counts as itself with `content: []` plus each element; an
image counts by the model provider's formula for its decoded pixel size; an
`input_audio` part by its duration; anything else is its compact JSON in the model's
encoding. Anthropic's `system` blocks count as nodes; the Responses API's
`instructions` is a JSON string, its `input` items nodes (an `input_image` by formula);
Gemini's `system_instruction` and each of its `contents` a node whose list is `parts`
(an `inlineData` image or audio by its formula).
Nothing here imports the assembly: it reads the answer as a client would.

A calibrated answer (`token_count_method: "calibrated"`, a model whose tokenizer is not
published) is recounted from its own fields, as docs/token-counting.md tells a user to:
each node's JSON counted in `token_count_encoding`, times the largest of
`token_count_factors` over the node's content kinds (`contextq.calibration.kinds`, the
documented rule), rounded up; images and audio by their formulas, as for any model.
"""

from __future__ import annotations

import base64
import io
import json
import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from PIL import Image

from contextq.calibration import kinds
from contextq.files.images import anthropic_tokens, openai_high_tokens
from contextq.tokens import encoding_name_for_model, get_encoding

AudioSeconds = Callable[[str], float]
Factors = tuple[tuple[str, int], ...]  # (content kind, factor in hundredths)


@lru_cache(maxsize=50_000)  # the invariant harness recounts the same texts read after read
def _count(encoding: str, factors: Factors, text: str) -> int:
    n = len(get_encoding(encoding).encode_ordinary(text))
    if not factors:
        return n
    by_kind = dict(factors)
    return -(-n * max(by_kind[k] for k in kinds(text)) // 100)


class Counter:
    """A JSON text's tokens as the answer says it counted: exact, or calibrated."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.encoding: str = answer["token_count_encoding"]
        factors = answer["token_count_factors"] or {}
        self.factors: Factors = tuple(sorted((k, round(f * 100)) for k, f in factors.items()))

    def __call__(self, text: str) -> int:
        return _count(self.encoding, self.factors, text)


def json_tokens(node: Any, enc: Counter) -> int:
    """A node's compact JSON (as the API receives it), counted as the answer counts."""
    return enc(json.dumps(node, ensure_ascii=False, separators=(",", ":")))


@lru_cache(maxsize=256)
def _image_size(data: str) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        return image.width, image.height


def _image(node: dict[str, Any], provider: str) -> int:
    if "inlineData" in node:
        detail, data = "high", node["inlineData"]["data"]
    elif node["type"] == "image_url":
        detail = node["image_url"].get("detail", "high")
        data = node["image_url"]["url"].split(",", 1)[1]
    elif node["type"] == "input_image":
        detail, data = node.get("detail", "high"), node["image_url"].split(",", 1)[1]
    else:
        detail, data = "high", node["source"]["data"]
    width, height = _image_size(data)
    if provider == "anthropic":
        return anthropic_tokens(width, height)
    if provider == "google":
        if width <= 384 and height <= 384:
            return 258
        return 258 * math.ceil(width / 768) * math.ceil(height / 768)
    return 85 if detail == "low" else openai_high_tokens(width, height)


def node_tokens(
    node: dict[str, Any], enc: Counter, provider: str, audio: AudioSeconds | None = None
) -> int:
    """One node: a message, a content part or an Anthropic system block."""
    kind = node.get("type")
    if kind in ("image_url", "image", "input_image"):
        return _image(node, provider)
    if kind == "input_audio":
        return _audio_tokens(node["input_audio"]["data"], provider, audio)
    content = node.get("content")
    if isinstance(content, list):
        return json_tokens({**node, "content": []}, enc) + sum(
            node_tokens(part, enc, provider, audio) for part in content
        )
    return json_tokens(node, enc)


def _audio_tokens(data: str, provider: str, audio: AudioSeconds | None) -> int:
    assert audio is not None, "an audio part needs its duration to be counted"
    rate = 32.0 if provider == "google" else 10.0
    return max(1, math.ceil(audio(data) * rate))


def gemini_node_tokens(
    node: dict[str, Any], enc: Counter, provider: str, audio: AudioSeconds | None = None
) -> int:
    """A Gemini content (or `system_instruction`): itself with `parts: []`, plus each
    part (an `inlineData` image or audio by its formula)."""
    inline = node.get("inlineData")
    if isinstance(inline, dict):
        kind = str(inline.get("mimeType", "")).partition("/")[0]
        if kind == "image":
            return _image(node, provider)
        if kind == "audio":
            return _audio_tokens(inline["data"], provider, audio)
    parts = node.get("parts")
    if isinstance(parts, list):
        return json_tokens({**node, "parts": []}, enc) + sum(
            gemini_node_tokens(part, enc, provider, audio) for part in parts
        )
    return json_tokens(node, enc)


def recount(answer: dict[str, Any], *, audio: AudioSeconds | None = None) -> int:
    """`token_count` recomputed from the answer's `messages` (and `system`): exactly in
    the model's encoding, or calibrated as the answer says (module docstring)."""
    assert answer["token_count_encoding"] == encoding_name_for_model(answer["model"] or None)
    calibrated = answer["provider"] != "openai"
    assert answer["token_count_method"] == ("calibrated" if calibrated else "exact")
    assert (answer["token_count_factors"] is not None) == calibrated
    enc = Counter(answer)
    provider = answer["provider"]
    total = 0
    if answer["format"] == "responses":
        if answer["instructions"] is not None:
            total += json_tokens(answer["instructions"], enc)
        return total + sum(node_tokens(item, enc, provider, audio) for item in answer["input"])
    if answer["format"] == "gemini":
        nodes = [answer["system_instruction"] or {}, *answer["contents"]]
        return sum(gemini_node_tokens(n, enc, provider, audio) for n in nodes if n)
    for block in answer.get("system") or ():
        total += node_tokens(block, enc, provider, audio)
    for message in answer["messages"]:
        total += node_tokens(message, enc, provider, audio)
    return total


# Google's documented dummy thought signature (base64 of `skip_thought_signature_validator`):
# not reasoning, so not in `token_breakdown.reasoning`
GEMINI_DUMMY = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="
_SIGNATURES = ("thoughtSignature", "thought_signature")


def recount_reasoning(answer: dict[str, Any]) -> int:
    """`token_breakdown.reasoning` recomputed from the answer: Anthropic `thinking` and
    `redacted_thinking` blocks, Responses `reasoning` items, Gemini thought parts whole
    and, of a part carrying a thought signature (not the dummy), what the signature adds
    to its JSON (the part counted with and without it); 0 for OpenAI Chat."""
    enc = Counter(answer)
    provider = answer["provider"]
    if answer["format"] == "anthropic":
        blocks = [
            b for m in answer["messages"] if isinstance(m["content"], list) for b in m["content"]
        ]
        return sum(
            node_tokens(b, enc, provider)
            for b in blocks
            if b.get("type") in ("thinking", "redacted_thinking")
        )
    if answer["format"] == "responses":
        return sum(
            node_tokens(i, enc, provider) for i in answer["input"] if i.get("type") == "reasoning"
        )
    if answer["format"] != "gemini":
        return 0
    total = 0
    for part in (p for c in answer["contents"] for p in c["parts"]):
        signature = next((part[k] for k in _SIGNATURES if part.get(k) is not None), None)
        if part.get("thought") is True:
            total += gemini_node_tokens(part, enc, provider)
        elif signature is not None and signature != GEMINI_DUMMY:
            bare = {k: v for k, v in part.items() if k not in _SIGNATURES}
            share = gemini_node_tokens(part, enc, provider) - gemini_node_tokens(
                bare, enc, provider
            )
            total += max(0, share)
    return total
