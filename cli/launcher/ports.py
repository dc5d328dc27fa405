"""Ports for `contextq up`.

The ports the user asked for (`--port`, `--flower-port`) are bound first and held
(bound, not listening) until the part that serves each one starts. Every port `up`
picks itself (the embedded broker's) is picked while they are held, with the kernel's
port-0 allocation, which never hands out a bound port, and checked against them too:
a picked port can be neither an asked one nor another picked one.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field

from cli.launcher.processes import LaunchError


@dataclass(frozen=True)
class AskedPort:
    label: str  # "API"
    host: str
    port: int
    flag: str  # "--port": named in the error when the port is taken


def _bind(host: str, port: int, *, reuse: bool) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if reuse:  # a port left in TIME_WAIT by a previous run is free for us
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


@dataclass
class PortReservation:
    """Asked ports held by this process until `release()`."""

    held: dict[int, socket.socket] = field(default_factory=dict)

    @property
    def ports(self) -> set[int]:
        return set(self.held)

    def release(self, port: int) -> None:
        sock = self.held.pop(port, None)
        if sock is not None:
            sock.close()

    def release_all(self) -> None:
        for port in list(self.held):
            self.release(port)


def reserve(asked: Iterable[AskedPort]) -> PortReservation:
    """Bind every asked port, or raise LaunchError naming the one in use (nothing held)."""
    reservation = PortReservation()
    for want in asked:
        if want.port in reservation.held:
            reservation.release_all()
            raise LaunchError(
                f"{want.label} port {want.port} is asked for twice; change {want.flag}"
            )
        try:
            reservation.held[want.port] = _bind(want.host, want.port, reuse=True)
        except OSError as exc:
            reservation.release_all()
            raise LaunchError(
                f"{want.label} port {want.host}:{want.port} is in use; choose another with "
                f"{want.flag}"
            ) from exc
    return reservation


def pick_free_ports(count: int, *, host: str = "127.0.0.1", avoid: Iterable[int] = ()) -> list[int]:
    """`count` distinct free ports, none of them in `avoid` (typically the reserved ones)."""
    excluded = set(avoid)
    picked: list[socket.socket] = []
    rejected: list[socket.socket] = []
    try:
        while len(picked) < count:
            sock = _bind(host, 0, reuse=False)
            port = int(sock.getsockname()[1])
            # held until the end, so the kernel cannot hand the same port out again
            (rejected if port in excluded else picked).append(sock)
            if len(rejected) > 100:
                raise LaunchError(f"no free port on {host} outside {sorted(excluded)}")
        return [int(s.getsockname()[1]) for s in picked]
    finally:
        for sock in picked + rejected:
            with contextlib.suppress(OSError):
                sock.close()
