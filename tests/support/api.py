"""The real API: a uvicorn subprocess (`uvicorn api.main:app`) or an in-process TestClient."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.support.procs import ManagedProcess, executable, free_port, wait_until
from tests.support.stack import StackEnv


class ApiServer(ManagedProcess):
    def __init__(
        self,
        stack: StackEnv,
        *,
        log_dir: Path,
        port: int | None = None,
        app: str = "api.main:app",
        workers: int = 1,
    ) -> None:
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        argv = [
            executable("uvicorn"),
            app,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "warning",
            "--no-access-log",
            *(["--workers", str(workers)] if workers > 1 else []),  # uvicorn's supervisor
        ]
        super().__init__(
            argv, env=stack.subprocess_env(), log_path=log_dir / f"api-{self.port}.log", name="api"
        )

    def start(self, *, wait: bool = True, timeout: float = 60.0) -> ApiServer:
        if not wait:
            super().start()
            return self

        def wait_up() -> None:
            def up() -> bool:
                if not self.alive():
                    raise RuntimeError(f"api exited:\n{self.log()[-4000:]}")
                try:
                    resp = httpx.get(self.base_url + "/healthz", timeout=2)
                    return resp.status_code in (200, 503)
                except httpx.TransportError:
                    return False

            wait_until(up, timeout=timeout, interval=0.1, what="uvicorn to answer /healthz")

        self.start_and_wait(wait_up)
        return self

    def client(self, key: str | None = None, *, timeout: float = 30.0) -> httpx.Client:
        return api_client(self.base_url, key, timeout=timeout)


def api_client(base_url: str, key: str | None = None, *, timeout: float = 30.0) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=base_url, headers=headers, timeout=timeout)


def in_process_client(key: str | None = None):  # type: ignore[no-untyped-def]
    """A FastAPI TestClient over a fresh app (settings from the current env)."""
    from fastapi.testclient import TestClient

    from api.main import create_app

    client = TestClient(create_app(), raise_server_exceptions=False)
    if key:
        client.headers["Authorization"] = f"Bearer {key}"
    return client
