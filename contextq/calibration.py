"""Counts for models whose tokenizer is not published (docs/token-counting.md), never below the
bill.

A model's tokens are counted *exactly* when its tokenizer ships here (OpenAI's
`cl100k_base` and `o200k_base`), else *calibrated*: the open encoding's count of each
counted text (a message's JSON, a content part: `contextq.assembly.counting`) times a
factor for the text's content kind, rounded up:

    calibrated(text) = ceil(open_count(text) x factor[kind])

where the factor is the largest among the kinds the text holds (`kinds`), never below 1.
The factors are taken from published measurements, the upper end of each (cited below
and in docs/token-counting.md, which derives every figure), by tokenizer family
(`family_for`):

- `claude` : Anthropic's tokenizer of Claude 3 through Claude 4.6 (Haiku 4.5 included);
- `claude-2026` : the tokenizer introduced with Claude Opus 4.7 and used by every later
  Claude (Opus 4.8, the Claude 5 family: Opus, Sonnet, Fable, Mythos); an unrecognised
  Claude name gets it too (the larger factors);
- `gemini` : Google's Gemini (and Gemma) SentencePiece tokenizer;
- `other` : every other model not counted exactly (Mistral, Llama, Qwen, DeepSeek, Grok,
  unknown): the larger of the `claude` and `gemini` factors per kind.

Content kinds (`kinds(text)`), decided from cheap counts on the text's UTF-8 bytes:

- `cjk`: characters U+3000-U+D7FF (CJK punctuation, kana, ideographs, Hangul) make at
  least 10 % of the characters;
- otherwise, or when Latin letters also make at least 10 % of the characters, the text
  is `prose`; also `json` when it holds at least 4 object keys (``":``) and at least one
  per 100 characters; also `code` when code punctuation (``{}()[];=<>|&``, or only
  ``();=<>|&`` in JSON, whose braces are its own) makes at least 4 % of its characters,
  or (not JSON) lines start indented (a newline, raw or JSON-escaped, then two spaces
  or a tab) at least once per 200 characters.

The factor used is the largest of the kinds found: a text that is both prose and code
counts as code when code's factor is larger, as prose when prose's is (the new Claude
tokenizer's prose premium is its largest), so a mixed text is never counted at the
smaller factor. Factors are kept in hundredths and applied in integers, so a recount
from an answer's `token_count_factors` reproduces the count exactly.

Sources (the figures each family takes; docs/token-counting.md has the derivation):

[A] Anthropic's Claude Code prompt, "Data: Token counting reference": tiktoken
    "undercounts Claude tokens by ~15-20% on typical text, and by much more on code or
    non-English input" (github.com/Piebald-AI/claude-code-system-prompts,
    system-prompts/data-token-counting-reference.md).
[B] sammcj/ingest PR #65 (github.com/sammcj/ingest/pull/65): o200k x 1.18 for Claude
    before Opus 4.7, x 1.53 for Opus 4.7 and later.
[C] grantcarthew/chonkometer, docs/validate-claude-tokens.md: Claude 3 Haiku's
    count_tokens over cl100k on 106 JSON tool definitions, 1.18-1.26 by server.
[D] claudeguide.io/claude-token-counting-accurate: Claude tokens per 500 characters :
    English 118, Python 161, JSON 198, Korean 312.
[E] headroomlabs-ai/headroom PR #2543: Claude within ~10-20 % of o200k.
[F] jackin.tailrocks.com/research/token-optimization/11-tokenizer-arbitrage: the
    Opus 4.7 tokenizer's premium over the older one, by content: English prose +59 %,
    minified JSON +34 %, Python +15.6 %, CJK ~0 %.
[G] sol.ava.dev/writings/2026-04-17-opus-4-7-tokenizer.html: Opus 4.7 / 4.6 ratios :
    English prose 1.45, code 1.13-1.33, text-heavy JSON 1.31, CJK 1.00.
[H] pithwire.com/en/articles/measuring-claude-47s-tokenizer-costs: Opus 4.7 / 4.6 :
    code 1.29-1.39, technical docs 1.47, CJK 1.01-1.07.
[I] techcompare.app/token-counter/gemini-tokenization: Gemini uses roughly 5-10 % more
    tokens than o200k on English, fewer on CJK.
[J] alehatsman/dex issue #183: an empirical Gemini correction of 1.08 over a BPE count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

Kind = Literal["prose", "code", "json", "cjk"]
KINDS: tuple[Kind, ...] = ("prose", "code", "json", "cjk")
Method = Literal["exact", "calibrated"]

# UTF-8 lead bytes of U+3000-U+D7FF (three-byte characters: CJK punctuation, kana,
# ideographs, Yi, Hangul); every such character has exactly one
_CJK_LEADS = bytes(range(0xE3, 0xEE))
_LATIN = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_CODE_MARKS = b"{}()[];=<>|&"
_JSON_CODE_MARKS = b"();=<>|&"
_INDENTS = ("\n  ", "\n\t", "\\n  ", "\\n\\t")


@dataclass(frozen=True, slots=True)
class Family:
    """A tokenizer family: its factors (hundredths, by kind)."""

    name: str
    hundredths: Mapping[Kind, int]

    @property
    def factors(self) -> dict[str, float]:
        """The factors as numbers (as the context answer reports them)."""
        return {kind: self.hundredths[kind] / 100 for kind in KINDS}

    @property
    def largest(self) -> int:
        return max(self.hundredths.values())


def _family(name: str, *, prose: int, code: int, json: int, cjk: int) -> Family:
    hundredths: dict[Kind, int] = {"prose": prose, "code": code, "json": json, "cjk": cjk}
    assert all(h >= 100 for h in hundredths.values()), "a calibration never counts less"
    return Family(name, MappingProxyType(hundredths))


# Over cl100k_base (the open encoding these models are counted with), rounded up to 0.05;
# docs/token-counting.md derives each from the sources above.
CLAUDE = _family(  # Claude 3 - Claude 4.6
    "claude",
    prose=120,  # [A] 15-20 %; [B] 1.18; [D] 1.17; [E] 10-20 %
    code=135,  # [D] 161 per 500 characters ÷ this corpus' cl100k ≈ 1.32; [A] "much more"
    json=130,  # [C] up to 1.26; [D] 1.14
    cjk=120,  # [A] "much more" than typical text, taken as 1.20 over cl100k, which counts
    # CJK 1.4-1.6 x o200k; [D] Korean 0.72 over cl100k
)
CLAUDE_2026 = _family(  # Claude Opus 4.7 and later
    "claude-2026",
    prose=195,  # 1.20 x [F] 1.59 (English prose; [G] 1.45, [H] technical docs 1.47)
    code=190,  # 1.35 x [H] 1.39 (code up to; [G] 1.33, [F] Python 1.156)
    json=175,  # 1.30 x [F] 1.34 (minified JSON; [G] 1.31)
    cjk=130,  # 1.20 x [H] 1.07 (CJK; [F] ~0 %, [G] 1.00)
)
GEMINI = _family(  # Gemini and Gemma (SentencePiece, not shipped here)
    "gemini",
    prose=110,  # [I] 5-10 % over o200k (o200k = cl100k on this prose); [J] 1.08
    code=135,  # no published Gemini figure: the Claude factor stands in
    json=130,  # likewise
    cjk=100,  # [I] fewer tokens than o200k, which counts CJK below cl100k
)
OTHER = _family(  # any other tokenizer not shipped here: the larger of Claude's and Gemini's
    "other",
    prose=120,
    code=135,
    json=130,
    cjk=120,
)
FAMILIES: dict[str, Family] = {f.name: f for f in (CLAUDE, CLAUDE_2026, GEMINI, OTHER)}

# Claude names whose tokenizer is the 2026 one whatever their version number
_CLAUDE_2026_TIERS = ("fable", "mythos")
_CLAUDE_2026_FROM = (4, 7)


def claude_version(name: str) -> tuple[int, int] | None:
    """(major, minor) of a Claude model name (`claude-opus-4-7`, `claude-3-5-sonnet-…`,
    `anthropic.claude-sonnet-4-5-20250929-v1:0`, `claude-opus-4.7`), or None. Dates and
    version suffixes (`v1`) are not version numbers."""
    tail = name.lower().split("claude", 1)[-1]
    numbers: list[int] = []
    for part in tail.replace(".", "-").replace("@", "-").replace(":", "-").split("-"):
        if part.isdigit() and len(part) <= 2:
            numbers.append(int(part))
            if len(numbers) == 2:
                break
        elif numbers:  # a tier, a date, a `v1`: the version has ended
            break
    if not numbers:
        return None
    return numbers[0], numbers[1] if len(numbers) > 1 else 0


def family_for(provider: str, model: str | None) -> Family | None:
    """The tokenizer family of a model, or None when it is counted exactly (OpenAI). A
    Claude or Gemini model is known by its name too, whoever hosts it (a Bedrock id
    such as `anthropic.claude-sonnet-4-5-…` has the catalogue's host as provider)."""
    name = (model or "").lower()
    bare = name.rsplit("/", 1)[-1]
    if provider == "anthropic" or "claude" in name:
        if any(tier in name for tier in _CLAUDE_2026_TIERS):
            return CLAUDE_2026
        version = claude_version(name)
        if version is None or version >= _CLAUDE_2026_FROM:
            return CLAUDE_2026  # an unrecognised Claude: the larger factors
        return CLAUDE
    if provider == "google" or bare.startswith(("gemini", "gemma")):
        return GEMINI
    if provider == "openai":
        return None
    return OTHER


def kinds(text: str) -> tuple[Kind, ...]:
    """The content kinds `text` holds (module docstring): `cjk`, and/or `prose` with
    `code` and `json` when their marks are dense enough."""
    n = len(text)
    if n == 0:
        return ("prose",)
    found: list[Kind] = []
    latin_too = True
    raw = text.encode("utf-8")
    if len(raw) != n:  # not ASCII
        cjk = len(raw) - len(raw.translate(None, _CJK_LEADS))
        if cjk * 10 >= n:
            found.append("cjk")
            latin = len(raw) - len(raw.translate(None, _LATIN))
            latin_too = latin * 10 >= n
    if not latin_too:
        return tuple(found)
    found.append("prose")
    keys = text.count('":')
    if keys >= 4 and keys * 100 >= n:  # JSON: its braces and indentation are its own
        marks = len(raw) - len(raw.translate(None, _JSON_CODE_MARKS))
        if marks * 100 >= 4 * n:
            found.append("code")
        found.append("json")
        return tuple(found)
    marks = len(raw) - len(raw.translate(None, _CODE_MARKS))
    indents = sum(text.count(i) for i in _INDENTS)
    if marks * 100 >= 4 * n or indents * 200 >= n:
        found.append("code")
    return tuple(found)


def factor_hundredths(text: str, family: Family) -> int:
    """The factor (hundredths) for `text`: the largest of its kinds'."""
    return max(family.hundredths[k] for k in kinds(text))


def calibrate(open_count: int, text: str, family: Family) -> int:
    """`open_count` (of `text` in the open encoding) calibrated: ceil(count x factor)."""
    if open_count <= 0:
        return 0
    return -(-open_count * factor_hundredths(text, family) // 100)


def open_room(calibrated_room: int, text: str, family: Family) -> int:
    """The open-encoding tokens of `text` that fit `calibrated_room` calibrated tokens."""
    return max(0, calibrated_room * 100 // factor_hundredths(text, family))


def upper_bound(open_count: int, family: Family | None) -> int:
    """An open count of texts not looked at (stored totals) calibrated at the family's
    largest factor: never below what any mix of kinds would count."""
    if family is None or open_count <= 0:
        return max(0, open_count)
    return -(-open_count * family.largest // 100)


@dataclass(frozen=True, slots=True)
class Counting:
    """How a model's tokens are counted: exactly in `encoding`, or in `encoding`
    calibrated by `family`. `counter` is the name the counting functions take
    (`contextq.tokens.count_tokens(text, counter)`)."""

    encoding: str
    family: Family | None = None

    @property
    def method(self) -> Method:
        return "exact" if self.family is None else "calibrated"

    @property
    def counter(self) -> str:
        return self.encoding if self.family is None else f"{self.encoding}+{self.family.name}"

    def upper(self, open_count: int) -> int:
        """A stored (open) count as at most this model would count it."""
        return upper_bound(open_count, self.family)

    def open_within(self, tokens: int) -> int:
        """The stored (open) tokens that stay within `tokens` of this model's, whatever
        their kinds: a window-sized threshold in stored counts."""
        if self.family is None:
            return tokens
        return tokens * 100 // self.family.largest

    def report(self) -> dict[str, object]:
        """The answer's fields saying how it counted (docs/history.md#the-answer)."""
        family = self.family
        return {
            "token_count_method": self.method,
            "token_count_encoding": self.encoding,
            "token_count_family": family.name if family is not None else None,
            "token_count_factors": family.factors if family is not None else None,
        }


def split_counter(counter: str) -> tuple[str, Family | None]:
    """`cl100k_base+claude` → ("cl100k_base", CLAUDE); a plain encoding → (it, None).
    An unknown family name raises KeyError (a programming error)."""
    encoding, _, family = counter.partition("+")
    return encoding, FAMILIES[family] if family else None
