"""process_file's final cuts: never past MAX_TOKENS_PER_FILE or MAX_TOTAL_OUTPUT, note included."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextq import tokens
from contextq.errors import InvalidInput
from contextq.files.pipeline import finalize, process_file
from contextq.files.registry import ProcessContext, Registry, StreamInfo
from contextq.files.result import FileExtractionResult
from contextq.settings import Settings
from tests.engine.files.conftest import SENTINEL, core_registry

Run = Callable[..., FileExtractionResult]


@pytest.mark.parametrize("max_tokens", [1, 7, 25, 100, 999])
@pytest.mark.parametrize("max_lines", [3, 200])
def test_processed_tokens_never_exceed_the_limit_and_match_the_content(
    run: Run, max_tokens: int, max_lines: int
) -> None:
    text = "".join(f"{SENTINEL} line {i} café 🎉 {'w' * (i % 50)}\n" for i in range(400))
    result = run("t.txt", text, MAX_TOKENS_PER_FILE=max_tokens, MAX_LINES=max_lines)
    assert result.success
    assert result.processed_token_count is not None
    assert result.processed_token_count <= max_tokens
    assert result.processed_token_count == tokens.count_tokens(result.content or "")
    assert result.token_count == tokens.count_tokens(text)


def test_note_states_what_was_cut_and_fits(run: Run) -> None:
    text = "".join(f"{SENTINEL} {i} " * 40 + "\n" for i in range(150))
    result = run("t.md", text, MAX_TOKENS_PER_FILE=300)
    content = result.content or ""
    assert content.endswith("]\n")
    assert "lines: " not in result.truncation.summary  # 150 lines fit MAX_LINES
    note = content[content.rindex("\n\n[truncated: ") :]
    assert "chars: 50000 of " in note and ", tokens: " in note
    shown = result.truncation.shown["tokens"]
    assert shown + tokens.count_tokens(content[content.rindex("\n\n[truncated") :]) >= (
        result.processed_token_count or 0
    )
    assert (result.processed_token_count or 0) <= 300


def test_total_output_limit_counts_the_note(run: Run) -> None:
    text = "".join(f"{SENTINEL}-{i}\n" for i in range(180))
    result = run("t.txt", text, MAX_TOTAL_OUTPUT=500)
    assert len(result.content or "") <= 500
    assert "chars: " in result.truncation.summary


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(min_size=0, max_size=3000),
    max_tokens=st.integers(min_value=1, max_value=400),
    max_chars=st.integers(min_value=1, max_value=4000),
)
def test_finalize_property(text: str, max_tokens: int, max_chars: int) -> None:
    s = Settings(MAX_TOKENS_PER_FILE=max_tokens, MAX_TOTAL_OUTPUT=max_chars)
    result = FileExtractionResult(
        success=True, file_type="text", category="text", media_type="text/plain", content=text
    )
    result.truncation.record("lines", 1, 2)  # a processor-level cut, so a note is due
    finalize(result, s)
    content = result.content or ""
    assert "\x00" not in content
    assert len(content) <= max_chars
    assert result.processed_token_count == tokens.count_tokens(content) <= max_tokens


def test_binary_results_keep_their_own_token_count() -> None:
    result = FileExtractionResult(
        success=True,
        file_type="png",
        category="image",
        media_type="image/png",
        content="image 10x10",
        binary=b"\x89PNG",
        processed_token_count=85,
    )
    finalize(result, Settings())
    assert result.processed_token_count == 85
    assert result.content == "image 10x10"


class _Exploding:
    name = "exploding"

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def accepts(self, info: StreamInfo) -> bool:
        return True

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        raise self.exc


@pytest.mark.parametrize(
    ("exc", "fragment"),
    [
        (InvalidInput("the table is cut short"), "the table is cut short"),
        (RecursionError(), "nested too deeply"),
        (MemoryError(), "more memory"),
        (ValueError("bad header"), "could not read this text file"),
    ],
)
def test_processor_errors_become_failed_results(
    write: Callable[[str, bytes], Path], exc: BaseException, fragment: str
) -> None:
    registry = Registry()
    registry.register(_Exploding(exc))
    result = process_file(write("a.txt", b"hello"), "a.txt", settings=Settings(), registry=registry)
    assert not result.success
    assert result.error is not None and fragment in result.error
    assert (result.file_type, result.category) == ("text", "text")


def test_reraise_lets_the_callers_exceptions_through(write: Callable[[str, bytes], Path]) -> None:
    class Timeout(Exception):
        pass

    registry = Registry()
    registry.register(_Exploding(Timeout()))
    with pytest.raises(Timeout):
        process_file(
            write("a.txt", b"x"),
            "a.txt",
            settings=Settings(),
            registry=registry,
            reraise=(Timeout,),
        )


def test_detected_from_says_content_when_the_content_won(
    write: Callable[[str, bytes], Path], samples: type
) -> None:
    result = process_file(
        write("x.json", b'{"a": 1}'), "x.json", settings=Settings(), registry=core_registry()
    )
    assert result.metadata["detected_from"] == "extension"
    result = process_file(
        write("data.csv", samples.image("PNG")),
        "data.csv",
        settings=Settings(),
        registry=core_registry(),
    )
    assert result.metadata["detected_from"] == "content"
    assert result.file_type == "png" and not result.success
