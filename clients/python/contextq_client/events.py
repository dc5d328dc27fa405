"""`client.events`: the owner's event stream (`GET /v1/events`, Server-Sent Events).

`stream()` yields events from one connection; `follow()` reconnects after a dropped
connection with `Last-Event-ID` set to the last id it yielded, so nothing is missed or
yielded twice (the server keeps 24 h of events).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field

import httpx

from contextq_client.errors import TransportError
from contextq_client.models import Event
from contextq_client.routing import route
from contextq_client.transport import AsyncTransport, SyncTransport, raise_for_status

RECONNECT_S = 1.0
STREAM_TIMEOUT = httpx.Timeout(10.0, read=None)


@dataclass
class SseMessage:
    """One dispatched Server-Sent Events message (comments are kept apart)."""

    id: str | None = None
    event: str = "message"
    data: str = ""
    comments: list[str] = field(default_factory=list)


class SseParser:
    """The WHATWG parsing rules, a line at a time: a blank line dispatches; `field:
    value`; `:` starts a comment; data lines are joined by newlines. A message of
    comments only is dispatched too (heartbeats)."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.current, self.data, self.touched = SseMessage(), list[str](), False

    def feed(self, line: str) -> SseMessage | None:
        if line == "":
            done = self.current if self.touched else None
            if done is not None:
                done.data = "\n".join(self.data)
            self._reset()
            return done
        self.touched = True
        if line.startswith(":"):
            self.current.comments.append(line[1:].lstrip(" "))
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self.data.append(value)
        elif name == "event":
            self.current.event = value
        elif name == "id" and "\0" not in value:
            self.current.id = value
        return None


def parse_sse(lines: Iterable[str]) -> Iterator[SseMessage]:
    parser = SseParser()
    for line in lines:
        message = parser.feed(line)
        if message is not None:
            yield message


def _event(message: SseMessage) -> Event | None:
    if message.id is None or not message.data:
        return None  # a heartbeat or the opening comment
    return Event.model_validate({"id": int(message.id), **json.loads(message.data)})


def _headers(last_event_id: int | None) -> dict[str, str]:
    headers = {"Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    return headers


class Events:
    def __init__(self, transport: SyncTransport) -> None:
        self._t = transport

    @route("GET", "/v1/events")
    def stream(self, *, last_event_id: int | None = None) -> Iterator[Event]:
        """Events after `last_event_id` (0: every one kept), then live ones, from one
        connection; ends when the connection does."""
        try:
            with self._t.http.stream(
                "GET", "/v1/events", headers=_headers(last_event_id), timeout=STREAM_TIMEOUT
            ) as response:
                if not response.is_success:
                    response.read()
                    raise_for_status(response)
                for message in parse_sse(response.iter_lines()):
                    event = _event(message)
                    if event is not None:
                        yield event
        except httpx.TransportError as exc:
            raise TransportError(f"the events stream ended: {exc}") from exc

    def follow(self, *, last_event_id: int | None = None) -> Iterator[Event]:
        """Every event for ever, reconnecting (after RECONNECT_S) from the last one seen."""
        last = last_event_id
        while True:
            try:
                for event in self.stream(last_event_id=last):
                    last = event.id
                    yield event
            except TransportError:
                pass
            time.sleep(RECONNECT_S)


class AsyncEvents:
    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    @route("GET", "/v1/events")
    async def stream(self, *, last_event_id: int | None = None) -> AsyncIterator[Event]:
        """As `Events.stream`, asynchronously."""
        parser = SseParser()
        try:
            async with self._t.http.stream(
                "GET", "/v1/events", headers=_headers(last_event_id), timeout=STREAM_TIMEOUT
            ) as response:
                if not response.is_success:
                    await response.aread()
                    raise_for_status(response)
                async for line in response.aiter_lines():
                    message = parser.feed(line)
                    event = _event(message) if message is not None else None
                    if event is not None:
                        yield event
        except httpx.TransportError as exc:
            raise TransportError(f"the events stream ended: {exc}") from exc

    async def follow(self, *, last_event_id: int | None = None) -> AsyncIterator[Event]:
        """As `Events.follow`, asynchronously."""
        last = last_event_id
        while True:
            try:
                async for event in self.stream(last_event_id=last):
                    last = event.id
                    yield event
            except TransportError:
                pass
            await asyncio.sleep(RECONNECT_S)
