"""`contextq events`: follow `GET /v1/events` (Server-Sent Events) and print each event.

It reconnects after a dropped connection with `Last-Event-ID` set to the last id it
printed, so nothing is missed or printed twice (the server keeps 24 h of events).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from contextq.client import ClientError, Target, _detail

RECONNECT_S = 1.0


@dataclass
class SseMessage:
    """One dispatched Server-Sent Events message (comments are kept apart)."""

    id: str | None = None
    event: str = "message"
    data: str = ""
    comments: list[str] = field(default_factory=list)


def parse_sse(lines: Iterable[str]) -> Iterator[SseMessage]:
    """Messages from the lines of an event stream (the WHATWG parsing rules: a blank
    line dispatches; `field: value`; `:` starts a comment; data lines are joined by
    newlines). A message of comments only is yielded too (heartbeats)."""
    current = SseMessage()
    data: list[str] = []
    touched = False
    for line in lines:
        if line == "":
            if touched:
                current.data = "\n".join(data)
                yield current
            current, data, touched = SseMessage(), [], False
            continue
        touched = True
        if line.startswith(":"):
            current.comments.append(line[1:].lstrip(" "))
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "event":
            current.event = value
        elif name == "id" and "\0" not in value:
            current.id = value


def follow_events(
    target: Target,
    *,
    on_event: Callable[[dict[str, Any]], None],
    last_event_id: int | None = None,
    reconnect: bool = True,
) -> None:
    """Call `on_event({"id", "type", "timestamp", "data"})` for each event, for ever
    (until interrupted, or the first disconnection when `reconnect` is False)."""
    last = last_event_id

    def seen(event: dict[str, Any]) -> None:
        nonlocal last
        on_event(event)
        last = int(event["id"])

    while True:
        try:
            _stream_once(target, last, seen)
        except httpx.TransportError as exc:
            if not reconnect:
                raise ClientError(f"the events stream ended: {exc}") from None
        if not reconnect:
            return
        time.sleep(RECONNECT_S)


def _stream_once(
    target: Target, last: int | None, on_event: Callable[[dict[str, Any]], None]
) -> None:
    headers = {"Authorization": f"Bearer {target.key}", "Accept": "text/event-stream"}
    if last is not None:
        headers["Last-Event-ID"] = str(last)
    timeout = httpx.Timeout(10.0, read=None)
    with (
        httpx.Client(base_url=target.api, timeout=timeout) as http,
        http.stream("GET", "/v1/events", headers=headers) as resp,
    ):
        if resp.status_code != httpx.codes.OK:
            resp.read()
            raise ClientError(_detail(resp))
        for message in parse_sse(resp.iter_lines()):
            if message.id is None or not message.data:
                continue  # a heartbeat or the opening comment
            body = json.loads(message.data)
            on_event({"id": int(message.id), **body})


def event_line(event: dict[str, Any]) -> str:
    """`<id> <timestamp> <type> <data as JSON>`: one line per event."""
    data = json.dumps(event.get("data"), ensure_ascii=False, separators=(",", ":"))
    return f"{event['id']} {event.get('timestamp', '')} {event.get('type', '')} {data}"
