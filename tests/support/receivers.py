"""Real local HTTP receivers for webhook tests, and a Server-Sent Events reader.

`WebhookReceiver(secret, statuses=[500, 500])` is a threaded HTTP server on 127.0.0.1
that verifies every request with the `standardwebhooks` library (as a user's endpoint
would), records it, and answers the given statuses in order, then 200.
`SseReader(base_url, key)` follows `GET /v1/events` in a thread, parsing the stream with
`contextq_client.events.parse_sse`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from standardwebhooks import Webhook

from contextq_client.events import SseMessage, parse_sse
from tests.support.procs import wait_until


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    verified: Any = None  # the payload standardwebhooks returned, or the error it raised
    status: int = 200


@dataclass
class WebhookReceiver:
    secret: str | None = None
    statuses: list[int] = field(default_factory=list)
    redirect_to: str | None = None
    received: list[Received] = field(default_factory=list)

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                got = Received(self.path, headers, body)
                if receiver.secret:
                    try:
                        got.verified = Webhook(receiver.secret).verify(body, headers)
                    except Exception as exc:
                        got.verified = exc
                got.status = receiver.statuses.pop(0) if receiver.statuses else 200
                receiver.received.append(got)
                self.send_response(got.status)
                if 300 <= got.status < 400:
                    self.send_header("location", receiver.redirect_to or "/elsewhere")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, count: int, *, timeout: float = 60.0) -> list[Received]:
        wait_until(
            lambda: len(self.received) >= count,
            timeout=timeout,
            what=f"{count} webhook request(s) at the receiver",
        )
        return list(self.received)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


class SseReader:
    """Collects the messages of one `GET /v1/events` connection in a thread."""

    def __init__(self, base_url: str, key: str, *, last_event_id: int | None = None) -> None:
        self.messages: list[SseMessage] = []
        self.status: int | None = None
        headers = {"Authorization": f"Bearer {key}"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self._client = httpx.Client(base_url=base_url, timeout=httpx.Timeout(10, read=None))
        self._opened = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(headers,), daemon=True)
        self._thread.start()
        if not self._opened.wait(15):
            raise TimeoutError("the events stream did not open")

    def _run(self, headers: dict[str, str]) -> None:
        try:
            with self._client.stream("GET", "/v1/events", headers=headers) as resp:
                self.status = resp.status_code
                self.content_type = resp.headers.get("content-type", "")
                self._opened.set()
                for message in parse_sse(resp.iter_lines()):
                    self.messages.append(message)
        except Exception:  # the test closed the client under the stream
            pass
        finally:
            self._opened.set()

    @property
    def events(self) -> list[dict[str, Any]]:
        return [
            {"id": int(m.id), "event": m.event, **json.loads(m.data)}
            for m in self.messages
            if m.id is not None and m.data
        ]

    def wait_events(
        self, predicate: Any, *, timeout: float = 60.0, what: str
    ) -> list[dict[str, Any]]:
        """The events so far, once `predicate(events)` holds."""
        wait_until(lambda: predicate(self.events), timeout=timeout, what=what)
        return self.events

    def close(self) -> None:
        self._client.close()
        self._thread.join(5)
