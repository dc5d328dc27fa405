"""Where a large tool result is written and with which extension
(docs/workspaces.md#large-tool-results)."""

from __future__ import annotations

import json

import pytest

from contextq.errors import ValidationFailed
from contextq.workspace.tool_results import tool_result_extension, tool_result_path


@pytest.mark.parametrize(
    ("text", "extension"),
    [
        (json.dumps({"rows": [{"a": i} for i in range(100)]}), "json"),
        (json.dumps([1, 2, 3]), "json"),
        ("\n".join(json.dumps({"n": i}) for i in range(20)), "jsonl"),
        ("id,name\n" + "\n".join(f"{i},n{i}" for i in range(50)), "csv"),
        ("id\tname\n" + "\n".join(f"{i}\tn{i}" for i in range(50)), "tsv"),
        ('"a","b"\n"1, with comma","2"\n"3","4"\n', "csv"),
        ("<?xml version='1.0'?><root><a/></root>", "xml"),
        ("<!DOCTYPE html><html><body>x</body></html>", "html"),
        ("Traceback (most recent call last):\n  File 'x.py', line 1\nValueError: bad", "txt"),
        ("just some prose, with a comma.\nAnd another line, also with one.\nEnd.", "txt"),
        ("{not json at all", "txt"),
        ("", "txt"),
        ("a,b\n1,2,3\n4\n", "txt"),  # ragged: not a table
    ],
)
def test_extension_from_the_content(text: str, extension: str) -> None:
    assert tool_result_extension(text) == extension


def test_the_path_names_the_message() -> None:
    assert tool_result_path("0123abcd", "csv") == "tool-results/0123abcd.csv"
    with pytest.raises(ValidationFailed):
        tool_result_path("../x", "csv")
