"""Hostile and broken input for text, tables and structured formats.

Each ends `failed` with a reason a person can act on, or `ready` with safe
output, quickly; and the next file processes normally.
"""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from contextq.files.result import FileExtractionResult
from tests.engine.files.conftest import SENTINEL, Samples

Run = Callable[..., FileExtractionResult]
S = Samples

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<lolz>&lol4;</lolz>"""
XXE = b"""<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<foo>&xxe;</foo>"""
YAML_BOMB = b"""a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def zip_bomb_xlsx(part: str = "xl/worksheets/sheet1.xml") -> bytes:
    """An archive with a 300 MB part of zeros that deflates to about 300 KB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        if part == "content.xml":
            zf.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("[Content_Types].xml", "<Types/>")
        with zf.open(part, "w", force_zip64=True) as fh:
            block = b"\x00" * (1 << 20)
            for _ in range(300):
                fh.write(block)
    return out.getvalue()


def many_entries_xlsx() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("xl/workbook.xml", "<x/>")
        for i in range(10_001):
            zf.writestr(f"xl/e{i}", b"")
    return out.getvalue()


# (filename, factory, expected error fragment or None for ready-with-safe-output)
VECTORS: list[tuple[str, Callable[[], bytes], str | None]] = [
    ("deep.json", lambda: b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ("deep.jsonl", lambda: b"[" * 100_000 + b"]" * 100_000 + b"\n", None),
    ("deep.yaml", lambda: b"[" * 20_000 + b"]" * 20_000, "nested too deeply"),
    ("deep-ok.yaml", lambda: b"[" * 900 + b"1" + b"]" * 900, None),  # a depth-cut view
    ("bomb.yaml", lambda: YAML_BOMB, "alias bomb"),
    ("code.yaml", lambda: b"!!python/object/apply:os.system ['echo pwned']\n", "!!python"),
    ("code2.yml", lambda: b"x: !!python/name:os.system\n", "!!python"),
    ("laughs.xml", lambda: LAUGHS, "billion-laughs"),
    ("xxe.xml", lambda: XXE, "external references"),
    ("broken.xml", lambda: b"<a><b></a>", "invalid XML"),
    ("bad.toml", lambda: b"a = = 1\n", "invalid TOML"),
    ("field.csv", lambda: b'a,b\n1,"' + b"x" * 1_000_000 + b'"\n', "131072"),
    ("open-quote.csv", lambda: S.csv(40) + b'"' + b"y\n" * 100_000, "never closed"),
    ("one-line.csv", lambda: b"a,b\n" + b"x" * (9 << 20), "characters"),
    ("bomb.xlsx", zip_bomb_xlsx, "zip bomb"),
    ("entries.xlsx", many_entries_xlsx, "MAX_ARCHIVE_ENTRIES"),
    ("bomb.ods", lambda: zip_bomb_xlsx("content.xml"), "zip bomb"),
    ("nul.csv", lambda: b"a,b\n" + f"1,{SENTINEL}\x00\n".encode(), None),
    ("invalid-utf8.csv", lambda: b"a,b\n\xff\xfe,\xc3\x28\n" + f"x,{SENTINEL}\n".encode(), None),
    ("polyglot.csv", lambda: S.image("PNG"), "no processor"),
    ("exe.txt", S.elf, "executable"),
    ("junk.json", S.junk, "binary data"),
    ("empty.json", lambda: b"", "invalid JSON"),
    ("empty.csv", lambda: b"", None),
    ("empty.txt", lambda: b"", None),
]


@pytest.mark.parametrize(("filename", "factory", "error"), VECTORS, ids=[v[0] for v in VECTORS])
def test_hostile_input_fails_clearly_or_is_safe(
    run: Run, filename: str, factory: Callable[[], bytes], error: str | None
) -> None:
    data = factory()
    started = time.monotonic()
    result = run(filename, data)
    assert time.monotonic() - started < 20
    if error is None:
        assert result.success, result.error
        assert "\x00" not in (result.content or "")
    else:
        assert not result.success
        assert result.error is not None and error in result.error, result.error
    # the next file processes normally
    after = run("after.txt", f"fine {SENTINEL}\n")
    assert after.success and SENTINEL in (after.content or "")


def test_zip_bomb_is_refused_before_any_parser_opens_it(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openpyxl

    def boom(*_: object, **__: object) -> None:
        raise AssertionError("openpyxl must not be reached")

    monkeypatch.setattr(openpyxl, "load_workbook", boom)
    result = run("bomb.xlsx", zip_bomb_xlsx())
    assert not result.success and "MAX_ARCHIVE" in (result.error or "")


def test_huge_json_over_the_parse_limit_is_streamed_not_loaded(
    write: Callable[[str, bytes], Path], run: Run
) -> None:
    import json

    data = json.dumps({"rows": [{"i": i, "s": SENTINEL} for i in range(20_000)]}).encode()
    result = run("huge.json", data, MAX_JSON_PARSE_BYTES=10_000)
    assert result.success, result.error
    assert result.metadata["parser"] == "ijson (streamed)"
    assert "... 19950 more items" in (result.content or "")


def test_yaml_over_the_parse_limit_is_refused_with_the_setting_named(run: Run) -> None:
    result = run("big.yaml", b"a: 1\n" * 1000, MAX_JSON_PARSE_BYTES=100)
    assert not result.success
    assert "MAX_JSON_PARSE_BYTES" in (result.error or "")
