"""Reading tool output: envelopes, markup, tracebacks of several languages, error lines;
and the memory's error patterns taken from the error, not from the output around it."""

from __future__ import annotations

import json

import pytest

from contextq.history import Message
from contextq.history.memory import HierarchicalMemory
from contextq.history.tool_output import ErrorSpot, main_error, readable, tracebacks

PY = (
    "collecting ...\n"
    "Traceback (most recent call last):\n"
    '  File "/venv/lib/site.py", line 10, in run\n'
    "    step()\n"
    '  File "app/io.py", line 42, in parse\n'
    "    raise ValueError(header)\n"
    "ValueError: bad header 'X-Id'\n"
    "done"
)
JS = (
    "TypeError: Cannot read properties of undefined (reading 'zip')\n"
    "    at restore (src/hooks/useForm.ts:31:7)\n"
    "    at commit (node_modules/react-dom/cjs/react-dom.development.js:19:3)\n"
)
JAVA = (
    'Exception in thread "main" java.lang.NullPointerException: name\n'
    "\tat com.acme.Main.greet(Main.java:12)\n"
    "\tat com.acme.Main.main(Main.java:5)\n"
)


def test_python_js_java_tracebacks_are_one_spot_each() -> None:
    rest, [spot] = tracebacks(PY)
    assert spot == ErrorSpot("ValueError: bad header 'X-Id'", "app/io.py:42 in parse", "app/io.py")
    assert rest == "collecting ...\ndone"
    _, [js] = tracebacks(JS)
    assert js.text() == (
        "TypeError: Cannot read properties of undefined (reading 'zip')"
        " (at src/hooks/useForm.ts:31)"
    )
    _, [java] = tracebacks(JAVA)
    assert java.message.endswith("NullPointerException: name") and java.path == "Main.java"


def test_envelopes_and_markup_are_removed() -> None:
    enveloped = json.dumps({"exit_code": 2, "stdout": "line one", "stderr": "fatal: no repo"})
    assert readable(enveloped) == "line one\nfatal: no repo\n(exit code 2)"
    assert readable("<returncode>1</returncode>\n<output>\nboom\n</output>").split() == [
        "1",
        "boom",
    ]
    assert readable('{"not": "an envelope"}') == '{"not": "an envelope"}'
    assert readable("{broken json") == "{broken json"


@pytest.mark.parametrize(
    ("output", "error"),
    [
        (f"<returncode>1</returncode>\n<output>\n{PY}\n</output>", "ValueError: bad header 'X-Id'"),
        (json.dumps({"exit_code": 1, "stdout": PY}), "ValueError: bad header 'X-Id'"),
        ("building\nsrc/a.c:10:5: error: expected ';'\n", "error: expected ';'"),
        ("E       assert 2 == 3\n", "assert 2 == 3"),
        ("npm ERR! missing script: build", "npm ERR! missing script: build"),
        ("bash: rg: command not found", "bash: rg: command not found"),
        ("all good", "all good"),
    ],
)
def test_main_error(output: str, error: str) -> None:
    assert main_error(output) == error


def test_memory_patterns_come_from_the_error_itself() -> None:
    memory = HierarchicalMemory()
    for code, port in ((1, 5432), (2, 5433), (1, 6000)):
        frame = f'  File "db.py", line {port}, in c\n'
        body = f"Traceback (most recent call last):\n{frame}OperationalError: port {port} refused"
        content = json.dumps({"exit_code": code, "stdout": body})
        memory.observe(Message(role="tool", content=content, tool_call_id="c", kind="error"))
    assert list(memory.error_patterns) == ["operationalerror: port N refused"]
    assert memory.error_patterns["operationalerror: port N refused"]["alert"] is True
