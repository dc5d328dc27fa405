"""`contextq_client.events.parse_sse`: the event-stream parsing rules the SDK and the CLI
rely on."""

from __future__ import annotations

from cli.client import event_line
from contextq_client.events import parse_sse


def test_messages_comments_and_multiline_data() -> None:
    lines = [
        ": opening comment",
        "",
        "event: file.ready",
        'data: {"a":',
        "data:  1}",
        "id: 7",
        "",
        ": heartbeat",
        "",
        "data: no id or event",
        "retry: 100",
        "",
        "event: ignored because never dispatched",
    ]
    messages = list(parse_sse(lines))
    assert [m.comments for m in messages] == [["opening comment"], [], ["heartbeat"], []]
    assert (messages[1].event, messages[1].id, messages[1].data) == (
        "file.ready",
        "7",
        '{"a":\n 1}',
    )
    assert (messages[3].event, messages[3].id, messages[3].data) == (
        "message",
        None,
        "no id or event",
    )


def test_event_line() -> None:
    line = event_line({"id": 3, "timestamp": "t", "type": "file.ready", "data": {"é": 1}})
    assert line == '3 t file.ready {"é":1}'
