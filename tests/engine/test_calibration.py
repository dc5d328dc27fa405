"""Calibrated counts for closed tokenizers (docs/token-counting.md, contextq.calibration): the
family follows the model, the content kind is found cheaply and right on real-looking text, the
arithmetic is exact and never below the open count, and the counting functions apply it
wherever they are given a model's counter."""

from __future__ import annotations

import inspect
import json
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextq import calibration as cal
from contextq import tokens
from contextq.assembly import build_history_context
from contextq.assembly.formats import FORMATS
from contextq.catalog import resolve_model
from contextq.history import Message, count_message_tokens
from contextq.history.retention import fit_summary
from contextq.history.summary_format import parse_summary
from contextq.history.types import FORMAT_NAMES, FormatName
from contextq.settings import Settings
from tests.engine.history.test_structured_summaries import _structured
from tests.support.recount import recount

PROSE = (
    "The worker picks the upload from the queue, converts the document to text and cuts "
    "what is over the limit. When it fails three times the file is marked failed, and the "
    "user is told why, so that they can upload it again in another format."
)
CODE = textwrap.dedent(
    """\
    def retry(call, attempts=3):
        for attempt in range(attempts):
            try:
                return call()
            except TimeoutError as error:
                last = error
                time.sleep(2 ** attempt)
        raise last
    """
)
JS = (
    "export async function load(id) {\n  const r = await fetch(`/v1/files/${id}`);\n"
    "  return r.ok ? r.json() : null;\n}\n"
)
RECORDS = [
    {"id": 1000 + i, "title": f"Retry after {i} s", "state": "open", "labels": ["bug", "api"]}
    for i in range(12)
]
ZH = (
    "对话的历史记录保存在数据库里，每条消息都带有它的令牌数。"
    "当历史变得太长时，系统会保留最新的消息。"
)
KO = "대화 기록은 데이터베이스에 저장되며 각 메시지에는 토큰 수가 함께 기록됩니다."


def message(role: str, content: str) -> str:
    """A message as the counter sees it: its compact JSON."""
    return json.dumps({"role": role, "content": content}, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5", "claude"),
        ("claude-3-5-sonnet-20241022", "claude"),
        ("claude-opus-4-20250514", "claude"),
        ("claude-opus-4-6", "claude"),
        ("claude-haiku-4-5", "claude"),
        ("anthropic/claude-3.5-sonnet", "claude"),
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", "claude"),
        ("claude-opus-4-7", "claude-2026"),
        ("claude-opus-4.7", "claude-2026"),
        ("claude-sonnet-5", "claude-2026"),
        ("claude-fable-5", "claude-2026"),
        ("gemini-2.5-pro", "gemini"),
        ("gemma-4-31b-it", "gemini"),
        ("mistral-large-latest", "other"),
        ("llama-3.1-8b-instruct", "other"),
    ],
)
def test_the_family_follows_the_model(model: str, family: str) -> None:
    counting = resolve_model(model, Settings()).counting
    assert counting.method == "calibrated"
    assert counting.family is not None and counting.family.name == family
    assert counting.counter == f"cl100k_base+{family}"


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4", "o3-mini", "gpt-5", None])
def test_openai_models_count_exactly(model: str | None) -> None:
    counting = resolve_model(model, Settings()).counting
    assert counting.method == "exact" and counting.family is None
    assert counting.counter == counting.encoding
    assert counting.report()["token_count_factors"] is None


def test_an_unrecognised_claude_takes_the_larger_factors() -> None:
    assert cal.family_for("anthropic", "claude-next") is cal.CLAUDE_2026
    assert cal.family_for("anthropic", "my-bedrock-model") is cal.CLAUDE_2026


def test_every_factor_is_at_least_one_and_the_2026_tokenizer_counts_more() -> None:
    for family in cal.FAMILIES.values():
        assert min(family.hundredths.values()) >= 100
    for kind in cal.KINDS:
        assert cal.CLAUDE_2026.hundredths[kind] >= cal.CLAUDE.hundredths[kind]
        other = cal.OTHER.hundredths[kind]
        assert other == max(cal.CLAUDE.hundredths[kind], cal.GEMINI.hundredths[kind])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PROSE, {"prose"}),
        (message("user", PROSE), {"prose"}),
        (message("user", "Where is the retry logic?"), {"prose"}),
        (CODE, {"prose", "code"}),
        (message("tool", CODE), {"prose", "code"}),
        (message("tool", JS), {"prose", "code"}),
        (json.dumps(RECORDS, separators=(",", ":")), {"prose", "json"}),
        (message("tool", json.dumps(RECORDS)), {"prose", "json"}),
        (ZH, {"cjk"}),
        (message("user", ZH * 3), {"cjk"}),
        (KO, {"cjk"}),
        (PROSE + " " + ZH, {"prose", "cjk"}),
    ],
    ids=[
        "prose",
        "prose-message",
        "short-message",
        "code",
        "code-message",
        "js-message",
        "json",
        "json-message",
        "chinese",
        "chinese-message",
        "korean",
        "mixed",
    ],
)
def test_kinds_on_real_looking_text(text: str, expected: set[str]) -> None:
    assert set(cal.kinds(text)) == expected


def test_the_largest_factor_of_the_kinds_applies() -> None:
    mixed = PROSE + " " + ZH
    for family in cal.FAMILIES.values():
        want = max(family.hundredths["prose"], family.hundredths["cjk"])
        assert cal.factor_hundredths(mixed, family) == want
    # the 2026 tokenizer's prose premium is its largest: code counts at prose's factor
    assert cal.factor_hundredths(CODE, cal.CLAUDE_2026) == cal.CLAUDE_2026.hundredths["prose"]
    assert cal.factor_hundredths(CODE, cal.CLAUDE) == cal.CLAUDE.hundredths["code"]


def test_calibration_is_integer_exact() -> None:
    # 100 x 1.10 is 110, not the 111 a float ceil would give (1.1 * 100 = 110.00000000000001)
    assert cal.calibrate(100, PROSE, cal.GEMINI) == 110
    assert cal.calibrate(7, PROSE, cal.CLAUDE) == 9  # ceil(8.4)
    assert cal.calibrate(0, PROSE, cal.CLAUDE) == 0
    assert cal.upper_bound(1000, cal.CLAUDE) == 1350
    assert cal.upper_bound(1000, None) == 1000
    counting = resolve_model("claude-sonnet-4-5", Settings()).counting
    assert counting.open_within(13_500) == 10_000
    assert counting.upper(counting.open_within(99_999)) <= 99_999


@pytest.mark.parametrize("text", [PROSE, CODE, message("tool", json.dumps(RECORDS)), ZH])
def test_a_counter_counts_the_encoding_times_the_kinds_factor(text: str) -> None:
    exact = tokens.count_tokens(text, "cl100k_base")
    for family in cal.FAMILIES.values():
        counter = f"cl100k_base+{family.name}"
        want = -(-exact * cal.factor_hundredths(text, family) // 100)
        assert tokens.count_tokens(text, counter) == want
        assert tokens.count_tokens_fast(text, counter) == want
        assert want >= exact
    assert tokens.get_encoding("cl100k_base+claude").name == "cl100k_base"


def test_a_long_text_takes_the_fast_path_calibrated() -> None:
    source = inspect.getsource(inspect)  # over FAST_COUNT_MIN_CHARS
    assert len(source) >= tokens.FAST_COUNT_MIN_CHARS
    exact = tokens.count_tokens(source, "cl100k_base")
    assert tokens.count_tokens(source, "cl100k_base+claude") == cal.calibrate(
        exact, source, cal.CLAUDE
    )


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list('ab {}():;\n"=,xy日本語한국')), max_size=400),
    room=st.integers(min_value=0, max_value=200),
    family=st.sampled_from(sorted(cal.FAMILIES)),
)
def test_truncation_with_a_counter_fits_its_room(text: str, room: int, family: str) -> None:
    counter = f"cl100k_base+{family}"
    kept, total, kept_tokens = tokens.truncate_to_tokens(text, room, counter)
    assert text.startswith(kept)
    assert total == tokens.count_tokens(text, counter)
    assert kept_tokens == tokens.count_tokens(kept, counter) <= max(room, 0) or kept == text
    if total <= room:
        assert kept == text


def test_truncation_keeps_most_of_what_fits() -> None:
    """Cut to the room the text's own factor gives, not the largest factor's."""
    _, _, kept_tokens = tokens.truncate_to_tokens(PROSE * 20, 300, "cl100k_base+claude-2026")
    assert 280 <= kept_tokens <= 300


def _history(stored: bool) -> list[Message]:
    raw = [
        {"role": "user", "content": PROSE},
        {"role": "tool", "tool_call_id": "c1", "content": CODE},
        {"role": "assistant", "content": json.dumps(RECORDS)},
        {"role": "user", "content": ZH},
    ]
    out = []
    for seq, data in enumerate(raw, start=1):
        message = Message.from_openai(data, id=f"m{seq}-{stored}", seq=seq)
        if stored:  # what the service stores at insert: the open count of its JSON
            message.token_count = count_message_tokens(message, "claude-sonnet-4-5")
        out.append(message)
    return out


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_stored_open_counts_calibrate_to_the_fresh_count(fmt: FormatName) -> None:
    """A stored count (cl100k, no calibration) is reused calibrated by the message's kinds:
    the same count as counting the message afresh, and as the recount from the answer."""
    answers = [
        build_history_context(
            _history(stored), settings=Settings(), model="claude-sonnet-4-5", format=fmt
        )
        for stored in (True, False)
    ]
    reused, fresh = (a.report["token_count"] for a in answers)
    assert reused == fresh
    listed = FORMATS[fmt].list_key  # messages, input, …
    answer = {**answers[0].report, listed: answers[0].messages, "system": answers[0].system}
    assert recount(answer) == reused
    assert answer["token_count_method"] == "calibrated"


def test_a_summary_cut_for_a_calibrated_model_keeps_its_sections_in_order() -> None:
    """fit_summary with a model's counter chooses lines in the encoding within the room
    the summary's factor leaves: the goal first, within the calibrated room, not far
    under it."""
    summary = _structured()
    counter = "cl100k_base+claude"
    small = fit_summary(summary, 900, counter)
    assert 0.85 * 900 <= tokens.count_tokens(small, counter) <= 900
    parsed = parse_summary(small)
    assert parsed.sections["goal"][0].startswith("Goal: Port the importer to asyncio")
    assert any(line.startswith("[cut to fit") for line in parsed.header)
