"""A local HTTP server speaking the chat-completions protocol (a fake LLM endpoint)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeChatServer:
    """A local endpoint speaking the chat-completions protocol, scripted per request.

    `reply(body)` writes the answer's content (default: `SUMMARY of <n> chars`).
    """

    def __init__(
        self, script: list[int | str], reply: Callable[[dict[str, Any]], str] | None = None
    ) -> None:
        self.script = list(script)  # an HTTP status to fail with, or "ok"
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                step = server.script.pop(0) if server.script else "ok"
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "not found"}})
                elif step == "ok":
                    text = (
                        server.reply(body)
                        if server.reply
                        else f"SUMMARY of {len(body['messages'][1]['content'])} chars"
                    )
                    self._send(
                        200,
                        {
                            "id": "chatcmpl-1",
                            "object": "chat.completion",
                            "model": body["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text},
                                }
                            ],
                        },
                    )
                else:
                    self._send(int(step), {"error": {"message": "scripted failure"}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)
