"""Is a part answering? HTTP for the API and Flower, PING for the broker, a control ping
for a worker. Used by `contextq up` and by `contextq health` (compose healthchecks)."""

from __future__ import annotations


def connect_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host  # noqa: S104


def http_status(url: str, timeout: float = 2.0) -> int | None:
    import httpx  # noqa: PLC0415 - each probe its own client

    try:
        return httpx.get(url, timeout=timeout).status_code
    except httpx.HTTPError:
        return None


def api_ready(base_url: str) -> bool:
    return http_status(base_url.rstrip("/") + "/healthz") == 200


def flower_ready(base_url: str) -> bool:
    return http_status(base_url.rstrip("/") + "/") in (200, 401)


def redis_ready(url: str) -> bool:
    import redis  # noqa: PLC0415

    client = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def worker_ping(redis_url: str, destination: list[str] | None = None, timeout: float = 1.0) -> bool:
    """True when a worker (one of `destination`, or any) answers a control ping."""
    from celery import Celery  # noqa: PLC0415

    app = Celery("contextq-probe", broker=redis_url, set_as_current=False)
    app.conf.update(accept_content=["json"], broker_connection_retry_on_startup=False)
    try:
        with app.connection_for_write() as conn:
            replies = app.control.ping(destination=destination, timeout=timeout, connection=conn)
    except Exception:  # broker down or not answering: the worker is not ready
        return False
    finally:
        app.close()
    return bool(replies)
