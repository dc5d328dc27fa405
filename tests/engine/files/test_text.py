"""Text and code: decoding, line limits, streaming, exact token count."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contextq import tokens
from contextq.files.detect import detect
from contextq.files.registry import ProcessContext
from contextq.files.result import FileExtractionResult
from contextq.files.text import TextProcessor, sniff_encoding
from contextq.settings import Settings
from tests.engine.files.conftest import SENTINEL

Run = Callable[..., FileExtractionResult]

# (filename, data, must_include, must_not_include, truncation summary ("" = none))
VECTORS: list[tuple[str, bytes, list[str], list[str], str]] = [
    (
        "script.py",
        f"def main():\n    return '{SENTINEL}'\n".encode(),
        ["```python\n", f"return '{SENTINEL}'", "\n```"],
        [],
        "",
    ),
    (
        "long.py",
        "\n".join(f"x{i} = {i}  # {SENTINEL}" for i in range(500)).encode(),
        ["x0 = 0", "x199 = 199"],
        ["x200 = 200"],
        "lines: 200 of 500",
    ),
    (
        "wide.log",
        b"A" * 5000 + f"\n{SENTINEL}\n".encode(),
        [SENTINEL, "… (4000 more chars)"],
        ["A" * 1001],
        "line_chars: 1000 of 5000, 1 lines cut at 1000 chars",
    ),
    (
        "latin1.txt",
        f"caf\xe9 cr\xe8me {SENTINEL}\n".encode("latin-1"),
        ["café crème", SENTINEL],
        ["\ufffd"],
        "",
    ),
    ("bom.txt", f"\ufeff{SENTINEL} ok".encode(), [f"{SENTINEL} ok"], ["\ufeff"], ""),
    ("utf16.txt", f"{SENTINEL} \u00fcber".encode("utf-16"), [f"{SENTINEL} über"], [], ""),
    ("nul.txt", f"a\x00b {SENTINEL}\n".encode(), [f"ab {SENTINEL}"], ["\x00"], ""),
    (
        "broken.txt",
        f"{SENTINEL} ok\n".encode() + b"\xff\xfe\xfa bad \xc3\n",
        [f"{SENTINEL} ok", "bad"],
        [],
        "",
    ),
    (
        "crlf.md",
        f"# {SENTINEL}\r\nline two\r\n".encode(),
        [f"# {SENTINEL}\nline two"],
        ["\r"],
        "",
    ),
    (
        "fence.md",
        f"```js\nx\n```\n{SENTINEL}".encode(),
        ["```js", SENTINEL],
        [],
        "",
    ),
]


@pytest.mark.parametrize(
    ("filename", "data", "must_include", "must_not_include", "summary"),
    VECTORS,
    ids=[v[0] for v in VECTORS],
)
def test_text_vectors(
    run: Run,
    filename: str,
    data: bytes,
    must_include: list[str],
    must_not_include: list[str],
    summary: str,
) -> None:
    result = run(filename, data)
    assert result.success, result.error
    assert result.content is not None
    for text in must_include:
        assert text in result.content
    for text in must_not_include:
        assert text not in result.content
    assert result.truncation.summary == summary
    if summary:
        assert f"[truncated: {summary}" in result.content


def test_code_fence_is_longer_than_any_backtick_run_inside(run: Run) -> None:
    result = run("doc.py", f's = """\n```\n{SENTINEL}\n```\n"""\n')
    assert result.content is not None
    assert result.content.startswith("````python\n")
    assert result.content.rstrip().endswith("````")


def test_full_text_tokens_is_exact_for_the_whole_file(run: Run) -> None:
    text = "".join(f"line {i}: {SENTINEL} café 🎉  \n\tindent {i * 7}\r\n" for i in range(3000))
    result = run("big.txt", text.encode())
    assert result.token_count == tokens.count_tokens(text) > 5000
    assert result.processed_token_count is not None
    assert result.processed_token_count <= 5000
    assert result.metadata["lines"] == 6000
    assert "lines: 200 of 6000" in result.truncation.summary


def test_token_count_is_exact_when_chunks_cut_everywhere(
    write: Callable[[str, bytes], Path], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tiny read chunks and counter chunks: the streamed count still equals tiktoken's."""
    import contextq.files.text as text_mod

    monkeypatch.setattr(text_mod, "CHUNK_BYTES", 7)
    original = tokens.StreamingTokenCounter.__init__

    def small(self: Any, encoding: str = "cl100k_base", **_: Any) -> None:
        original(self, encoding, chunk_chars=5)

    monkeypatch.setattr(tokens.StreamingTokenCounter, "__init__", small)
    text = "Hello  world!\n\n  indented 'll éé 🎉🎉 12345\r\n" * 40
    path = write("t.txt", text.encode())
    result = TextProcessor().process(path, detect(path, "t.txt"), ProcessContext(settings))
    assert result.full_text_tokens == tokens.count_tokens(text)


def test_single_huge_line_is_streamed_in_bounded_memory(
    write: Callable[[str, bytes], Path], settings: Settings
) -> None:
    """24 MB on one line: memory stays a few chunks, never the whole line."""
    line = (f"{SENTINEL} " + "word " * 200) * 24_000
    path = write("one-line.txt", line.encode())
    assert path.stat().st_size > 24_000_000
    del line
    info = detect(path, "one-line.txt")
    tracemalloc.start()
    try:
        result = TextProcessor().process(path, info, ProcessContext(settings))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12_000_000, peak
    assert result.metadata["lines"] == 1
    assert result.truncation.shown["line_chars"] == 1000
    assert result.full_text_tokens is not None and result.full_text_tokens > 4_000_000


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"plain ascii", "utf-8"),
        ("h\u00e9".encode(), "utf-8"),
        (b"\xef\xbb\xbfbom", "utf-8-sig"),
        ("x".encode("utf-16"), "utf-16"),
        ("hello there".encode("utf-16-le"), "utf-16-le"),
        ("caf\xe9 and a lot of ascii around it".encode("latin-1"), "cp1252"),
        (("Привет, как дела? Это русский текст. " * 20).encode("cp1251"), "cp1251"),
    ],
)
def test_sniff_encoding(data: bytes, expected: str) -> None:
    assert sniff_encoding(data) == expected
