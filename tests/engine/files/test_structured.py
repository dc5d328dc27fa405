"""JSON, JSONL, YAML, TOML, XML: truncated views with visible markers and exact figures."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from contextq.files.result import FileExtractionResult
from tests.engine.files.conftest import SENTINEL

Run = Callable[..., FileExtractionResult]

NESTED = {"l1": {"l2": {"l3": {"l4": {"l5": {"l6": SENTINEL + "-deep"}}}}}}
BIG = {
    "name": SENTINEL,
    "items": list(range(500)),
    "long": "z" * 1734,
    **{f"k{i:02d}": i for i in range(60)},
}


def _json_view(result: FileExtractionResult) -> Any:
    assert result.content is not None
    body = result.content.split("```json\n", 1)[1].split("\n```", 1)[0]
    return json.loads(body)


# (filename, data, must_include, must_not_include, truncation summary)
VECTORS: list[tuple[str, bytes, list[str], list[str], str]] = [
    (
        "small.json",
        json.dumps({"a": [1, 2], "s": SENTINEL}).encode(),
        [SENTINEL, "```json"],
        ["more items"],
        "",
    ),
    (
        "big.json",
        json.dumps(BIG).encode(),
        [SENTINEL, '"... 450 more items"', '"...": "... 13 more keys"', "… (1234 more chars)"],
        ['"k47"', "499"],
        "items: 50 of 500, keys: 50 of 63, 1 strings truncated",
    ),
    (
        "deep.json",
        json.dumps(NESTED).encode(),
        ['"l5": "<truncated: depth>"'],
        [f"{SENTINEL}-deep"],
        "depth: 5 of 6",
    ),
    (
        "rows.jsonl",
        "\n".join(json.dumps({"i": i, "s": SENTINEL}) for i in range(120)).encode(),
        [SENTINEL, '"... 70 more items"', '"i": 49'],
        ['"i": 50'],
        "items: 50 of 120",
    ),
    (
        "conf.yaml",
        f"name: {SENTINEL}\nlist: [1, 2, 3]\nnested:\n  a: b\n".encode(),
        ["```yaml", f"name: {SENTINEL}", "- 3"],
        [],
        "",
    ),
    ("multi.yaml", f"---\na: {SENTINEL}\n---\nb: 2\n".encode(), [SENTINEL, "b: 2"], [], ""),
    (
        "big.yaml",
        ("items:\n" + "".join(f"- {SENTINEL}{i}\n" for i in range(80))).encode(),
        [f"{SENTINEL}49", "... 30 more items"],
        [f"{SENTINEL}50"],
        "items: 50 of 80",
    ),
    (
        "cfg.toml",
        f'title = "{SENTINEL}"\n[owner]\nborn = 1979-05-27\n'.encode(),
        [f"title: {SENTINEL}", "born: '1979-05-27'"],
        [],
        "",
    ),
    (
        "feed.xml",
        (
            f"<feed><title>{SENTINEL}</title>"
            + "".join(f"<entry n='{i}'>e{i}</entry>" for i in range(80))
            + "</feed>"
        ).encode(),
        ["```xml", SENTINEL, 'n="48"', "<!-- ... 31 more items -->"],
        ['n="49"'],
        "items: 50 of 81",
    ),
    (
        "deep.xml",
        f"<a><b><c><d><e><f>{SENTINEL}</f></e></d></c></b></a>".encode(),
        ["<e>&lt;truncated: depth&gt;</e>"],
        [SENTINEL],
        "depth: 5 of 6",
    ),
    (
        "attrs.xml",
        ("<r " + " ".join(f'a{i}="{i}"' for i in range(60)) + f">{SENTINEL}</r>").encode(),
        [SENTINEL, '_more="... 10 more keys"'],
        ['a55="55"'],
        "keys: 50 of 60",
    ),
]


@pytest.mark.parametrize(
    ("filename", "data", "must_include", "must_not_include", "summary"),
    VECTORS,
    ids=[v[0] for v in VECTORS],
)
def test_structured_vectors(
    run: Run,
    filename: str,
    data: bytes,
    must_include: list[str],
    must_not_include: list[str],
    summary: str,
) -> None:
    result = run(filename, data)
    assert result.success, result.error
    assert result.category == "structured"
    assert result.content is not None
    for text in must_include:
        assert text in result.content, text
    for text in must_not_include:
        assert text not in result.content, text
    assert result.truncation.summary == summary


def test_big_json_is_streamed_with_the_same_view(run: Run) -> None:
    data = json.dumps({"wrap": BIG, "nested": NESTED, "list": [BIG] * 3}).encode()
    in_memory = run("a.json", data)
    streamed = run("a.json", data, MAX_JSON_PARSE_BYTES=1000)
    assert in_memory.metadata["parser"] == "json"
    assert streamed.metadata["parser"] == "ijson (streamed)"
    assert _json_view(streamed) == _json_view(in_memory)
    assert streamed.truncation.summary == in_memory.truncation.summary
    assert streamed.token_count == in_memory.token_count


def test_streamed_top_level_array(run: Run) -> None:
    data = json.dumps([{"i": i, "s": SENTINEL} for i in range(1000)]).encode()
    result = run("arr.json", data, MAX_JSON_PARSE_BYTES=100)
    view = _json_view(result)
    assert view[-1] == "... 950 more items"
    assert view[0] == {"i": 0, "s": SENTINEL}
    assert result.truncation.summary == "items: 50 of 1000"


def test_invalid_json_names_line_and_column(run: Run) -> None:
    result = run("bad.json", b'{\n  "a": 1,\n  "b": \n}')
    assert not result.success
    assert result.error == "invalid JSON at line 4, column 1: Expecting value"


def test_invalid_jsonl_line_is_shown_not_fatal(run: Run) -> None:
    result = run("mixed.jsonl", f'{{"ok": "{SENTINEL}"}}\n{{broken\n\n{{"ok": 3}}\n'.encode())
    assert result.success, result.error
    assert result.metadata["records"] == 3
    assert result.metadata["invalid_lines_shown"] == [2]
    assert "<line 2: invalid JSON" in (result.content or "")


def test_jsonl_counts_blank_lines_out_across_chunks(run: Run) -> None:
    lines = [json.dumps({"i": i}) if i % 3 else "  " for i in range(300_00)]
    result = run("many.jsonl", "\n".join(lines).encode())
    assert result.metadata["records"] == sum(1 for line in lines if line.strip())


def test_token_count_is_of_the_whole_file(run: Run) -> None:
    from contextq import tokens

    data = json.dumps(BIG, indent=1)
    result = run("big.json", data.encode())
    assert result.token_count == tokens.count_tokens(data)
    assert result.processed_token_count == tokens.count_tokens(result.content or "")
