"""Where a webhook may send (docs/events.md, SSRF): http(s) URLs whose host is, and resolves
only to, public addresses, unless the host as written is in WEBHOOK_ALLOWED_HOSTS.

The host is resolved with the system resolver (`getaddrinfo`), which also reads the
numeric forms a URL parser leaves alone (`2130706433`, `0x7f000001`, `0177.0.0.1`,
`127.1` are all 127.0.0.1), and every address it gives must be public. A delivery
checks again when it sends and connects to the address it checked
(`service.webhook_delivery`), so a name that resolves elsewhere a second later (DNS
rebinding) gains nothing.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

from contextq.errors import ValidationFailed

MAX_URL_CHARS = 2048
# cloud metadata services; most are link-local or private already, Azure's is public
METADATA_ADDRESSES = frozenset(
    {"169.254.169.254", "169.254.170.2", "168.63.129.16", "100.100.100.200", "fd00:ec2::254"}
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")

Resolver = Callable[[str, int], list[str]]


def system_resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (raises OSError when it does not)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone
        if address not in seen:
            seen.append(address)
    return seen


@dataclass(frozen=True)
class Target:
    """A checked URL: what to connect to and what to call it."""

    url: str
    scheme: str
    host: str  # as written, lowercase, without brackets or a trailing dot
    port: int
    addresses: tuple[str, ...]  # checked, in the resolver's order
    allowed: bool  # listed in WEBHOOK_ALLOWED_HOSTS

    def url_for(self, address: str) -> str:
        """The URL with the host replaced by `address` (the connection goes there)."""
        parts = urlsplit(self.url)
        literal = f"[{address}]" if ":" in address else address
        netloc = f"{literal}:{self.port}"
        return parts._replace(netloc=netloc).geturl()

    @property
    def host_header(self) -> str:
        parts = urlsplit(self.url)
        return (parts.netloc.rsplit("@", 1)[-1]) or self.host


def refusal(address: str) -> str | None:
    """Why `address` may not be reached, or None for a public address."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip in NAT64:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if str(ip) in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_unspecified or ip.is_multicast or ip.is_reserved:
        return "a reserved address"
    if ip.is_private or not ip.is_global:
        return "a private address"
    return None


def parse(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a webhook URL, or ValidationFailed saying what is wrong."""
    if len(url) > MAX_URL_CHARS:
        raise ValidationFailed(f"url is longer than {MAX_URL_CHARS} characters", field="url")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ValidationFailed(f"url is not a valid URL: {exc}", field="url") from None
    if parts.scheme not in ("http", "https"):
        raise ValidationFailed("url must start with http:// or https://", field="url")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise ValidationFailed("url has no host", field="url")
    return parts.scheme, host, port or (443 if parts.scheme == "https" else 80)


def check(
    url: str, *, allowed_hosts: Collection[str], resolve: Resolver = system_resolve
) -> Target:
    """The checked target of `url`, or ValidationFailed (422) naming why it is refused."""
    scheme, host, port = parse(url)
    allowed = host in allowed_hosts
    try:
        addresses = tuple(resolve(host, port))
    except (OSError, UnicodeError) as exc:
        raise ValidationFailed(
            f"url: the host {host!r} does not resolve ({exc})", field="url"
        ) from None
    if not addresses:
        raise ValidationFailed(f"url: the host {host!r} does not resolve", field="url")
    if not allowed:
        for address in addresses:
            reason = refusal(address)
            if reason is not None:
                raise ValidationFailed(
                    f"url: the host {host!r} is or resolves to {address}, {reason}; webhooks "
                    "may only reach public addresses (list the host in WEBHOOK_ALLOWED_HOSTS "
                    "to allow it)",
                    field="url",
                )
    return Target(url.strip(), scheme, host, port, addresses, allowed)
