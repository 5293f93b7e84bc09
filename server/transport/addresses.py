"""The client address of a connection, on every door: the one place that decides it.

A connection's client address is its peer's address, unless the peer is one of the load
balancers listed in the ``trusted_proxies`` setting (:class:`TrustedProxies`): HAProxy then
opens each connection with a PROXY protocol header (``send-proxy`` on its ``server`` lines,
version 1 or 2, both read by :func:`parse_proxy_header`) naming the client it stands for. The
door that reads that header (the public listener, the ICS listener) records the address with
:func:`remember_forwarded`; every door then asks :func:`client_address` with its transport.

Why the PROXY protocol and not ``X-Forwarded-For``: the public listener counts connections per
address when it accepts them, before any HTTP is parsed, and HAProxy may carry several clients'
requests on one kept-alive connection to a hub; the ICS port is not HTTP at all. A PROXY header
comes first on the connection, written by HAProxy before any byte of the client's, so a client
cannot forge one. From any peer not listed, a PROXY header is not read (to the HTTP servers it
is a malformed request line, refused with 400; to the ICS port a login name) and
``X-Forwarded-For`` is never read by anyone: a client forging either is still counted, limited
and logged under its own address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import struct
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "MAX_PROXY_HEADER",
    "PROXY_V1_PREFIX",
    "PROXY_V2_SIGNATURE",
    "Descriptor",
    "ProxyHeader",
    "ProxyHeaderError",
    "TrustedProxies",
    "client_address",
    "parse_proxy_header",
    "peer_host",
    "read_proxy_header",
    "remember_forwarded",
]

PROXY_V1_PREFIX = b"PROXY "
PROXY_V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
MAX_PROXY_V1 = 107
"""The longest version-1 header, ``\\r\\n`` included (the specification's bound)."""
MAX_PROXY_HEADER = 16 + 216
"""The most bytes a header this server accepts may take: version 2's fixed part and the
largest address block it reads (a UNIX-socket pair); longer TLVs are refused."""

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class TrustedProxies:
    """The balancers whose PROXY header is believed: the ``trusted_proxies`` setting, a comma
    separated list of addresses and networks (empty: none).

    >>> trusted = TrustedProxies("10.0.0.5, 172.28.0.0/16")
    >>> trusted.trusts("172.28.1.2"), trusted.trusts("10.0.0.6"), TrustedProxies("").trusts("::1")
    (True, False, False)
    """

    __slots__ = ("_networks",)

    def __init__(self, setting: str) -> None:
        self._networks: tuple[Network, ...] = tuple(
            ipaddress.ip_network(item.strip(), strict=False)
            for item in setting.split(",")
            if item.strip()
        )

    def __bool__(self) -> bool:
        return bool(self._networks)

    def trusts(self, host: str) -> bool:
        """Whether ``host`` (a peer's address) is a listed balancer."""
        if not self._networks:
            return False
        try:
            address: Address = ipaddress.ip_address(host)
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self._networks)


class ProxyHeaderError(ValueError):
    """Bytes that start like a PROXY header but are not a valid one."""


@dataclass(frozen=True, slots=True)
class ProxyHeader:
    """A PROXY protocol header: its length in bytes and the client address it names (``None``:
    ``UNKNOWN`` or ``LOCAL``, the balancer speaking for itself, a health check)."""

    length: int
    address: str | None


def parse_proxy_header(data: bytes) -> ProxyHeader | None:
    """The PROXY header (version 1 or 2) at the start of ``data``; ``None`` while ``data`` is
    too short to tell.

    :raises ProxyHeaderError: ``data`` does not start with a PROXY header, or it is malformed.

    >>> parse_proxy_header(b"PROXY TCP4 203.0.113.7 10.0.0.2 5555 8080\\r\\nGET / HTTP/1.1")
    ProxyHeader(length=43, address='203.0.113.7')
    >>> parse_proxy_header(b"PROXY TCP4 203.0"), parse_proxy_header(b"PROXY UNKNOWN\\r\\n")
    (None, ProxyHeader(length=15, address=None))
    """
    if data.startswith(PROXY_V2_SIGNATURE):
        return _parse_v2(data)
    if data.startswith(PROXY_V1_PREFIX):
        return _parse_v1(data)
    if PROXY_V2_SIGNATURE.startswith(data) or PROXY_V1_PREFIX.startswith(data):
        return None
    raise ProxyHeaderError("not a PROXY protocol header")


def _parse_v1(data: bytes) -> ProxyHeader | None:
    end = data.find(b"\r\n", 0, MAX_PROXY_V1)
    if end < 0:
        if len(data) >= MAX_PROXY_V1:
            raise ProxyHeaderError("PROXY v1 line too long")
        return None
    words = data[:end].split(b" ")
    if len(words) >= 2 and words[1] == b"UNKNOWN":
        return ProxyHeader(end + 2, None)
    if len(words) != 6 or words[1] not in (b"TCP4", b"TCP6"):
        raise ProxyHeaderError("malformed PROXY v1 line")
    try:
        address = ipaddress.ip_address(words[2].decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise ProxyHeaderError("malformed PROXY v1 source address") from None
    return ProxyHeader(end + 2, str(address))


def _parse_v2(data: bytes) -> ProxyHeader | None:
    if len(data) < 16:
        return None
    version_command, family, size = data[12], data[13], struct.unpack("!H", data[14:16])[0]
    if version_command >> 4 != 2 or version_command & 0x0F > 1:
        raise ProxyHeaderError("unsupported PROXY v2 version or command")
    if 16 + size > MAX_PROXY_HEADER:
        raise ProxyHeaderError("PROXY v2 header too long")
    if len(data) < 16 + size:
        return None
    body = data[16 : 16 + size]
    if version_command & 0x0F == 0:  # LOCAL: the balancer's own connection (a health check)
        return ProxyHeader(16 + size, None)
    if family >> 4 == 1 and len(body) >= 12:
        return ProxyHeader(16 + size, str(ipaddress.IPv4Address(body[:4])))
    if family >> 4 == 2 and len(body) >= 36:
        return ProxyHeader(16 + size, str(ipaddress.IPv6Address(body[:16])))
    return ProxyHeader(16 + size, None)  # UNSPEC or UNIX: no client address to take


class Descriptor(Protocol):
    """A socket as the doors hold it (``socket.socket``, asyncio's ``TransportSocket``)."""

    def fileno(self) -> int: ...


async def read_proxy_header(reader: asyncio.StreamReader) -> ProxyHeader:
    """Read exactly the PROXY header (version 1 or 2) that starts ``reader``'s stream (a door
    whose client speaks second, the ICS port, waits for it from a trusted balancer).

    :raises ProxyHeaderError: the stream does not start with a valid PROXY header.
    :raises asyncio.IncompleteReadError: the stream ended first.
    """
    data = await reader.readexactly(len(PROXY_V1_PREFIX))
    if data == PROXY_V1_PREFIX:
        try:
            data += await reader.readuntil(b"\r\n")
        except asyncio.LimitOverrunError:
            raise ProxyHeaderError("PROXY v1 line too long") from None
    elif PROXY_V2_SIGNATURE.startswith(data):
        data += await reader.readexactly(16 - len(data))
        parse_proxy_header(data)  # the fixed part: refused here if malformed
        data += await reader.readexactly(struct.unpack("!H", data[14:16])[0])
    header = parse_proxy_header(data)
    if header is None or header.length != len(data):
        raise ProxyHeaderError("malformed PROXY header")
    return header


_FORWARDED: dict[int, tuple[Descriptor, str]] = {}
"""Connections whose client address came in a PROXY header, by file descriptor, with the
socket it was read on (a descriptor reused by a later connection is told apart by its socket
being closed). One table per process, as descriptors are; at most one entry per descriptor."""


def remember_forwarded(sock: Descriptor, address: str) -> None:
    """Record the client address a trusted balancer's PROXY header gave for ``sock``."""
    _FORWARDED[sock.fileno()] = (sock, address)


def peer_host(sock: socket.socket) -> str:
    """The host part of ``sock``'s peer address (``"unknown"`` for a socket that has none,
    already reset)."""
    try:
        peer = sock.getpeername()
    except OSError:
        return "unknown"
    return str(peer[0]) if isinstance(peer, tuple) else "unknown"


def client_address(transport: asyncio.BaseTransport) -> str:
    """The client address of the connection of ``transport`` (any door: a websocket's, an HTTP
    request's ``request.transport``, an ICS connection's): what a trusted balancer's PROXY
    header named, else the peer's address. The key of every per-address limit and what logs
    name."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        fd = sock.fileno()
        entry = _FORWARDED.get(fd)
        if entry is not None and entry[0].fileno() == fd:
            return entry[1]
    peer = transport.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
