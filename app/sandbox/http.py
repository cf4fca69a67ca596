"""The `http` node's executor: a request only to a host the operator allowed, never to this machine
or its neighbours.

The host must match the policy's allow-list (names or fnmatch patterns; none by default). Its name
is resolved once, in a thread, and every address it resolves to must be a global unicast one:
loopback, link-local (169.254.169.254, the cloud metadata service, among them), private, shared,
multicast, unspecified, reserved and documentation addresses are refused, IPv4-mapped IPv6 too. The
connection then goes to the address that was checked (httpcore with a network backend pinned to it),
while the URL keeps the name, so the Host header and TLS's SNI and certificate check use the name:
a DNS answer that changes between the check and the connect cannot take the request elsewhere.
Each redirect (at most 5) is checked the same way before it is followed. The body is read until
`max_response_bytes` and no further; no cookie is kept; the whole exchange has one deadline.
Nothing here logs a header value or a secret.

Tests serve their "allowed host" on 127.0.0.1: `HttpPolicy.loopback_for_tests` names the hosts
whose loopback addresses are accepted. It is empty by default and is set only by tests; a name
not listed there that resolves to loopback is still refused, which is what the tests assert.
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import json
import socket
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpcore

MAX_REDIRECTS = 5
REDIRECTS = {301, 302, 303, 307, 308}
METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
# Headers the request computes itself, or that must not cross to another host on a redirect.
COMPUTED = {"host", "content-length", "transfer-encoding", "connection"}
CREDENTIALS = {"authorization", "cookie", "proxy-authorization"}
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class HttpPolicy:
    """Where the `http` node may go and how much it may read (built from FLOW_HTTP_ALLOW and friends)."""

    allow: tuple[str, ...] = ()
    max_response_bytes: int = 10_000_000
    secret_env: tuple[str, ...] = ()  # names a template may read as {{ env.NAME }}; the caller renders them
    loopback_for_tests: tuple[str, ...] = ()  # tests only: hosts whose loopback addresses are accepted
    ca_file: str | None = None  # certificates to verify servers with instead of the system's

    def allows_host(self, host: str) -> bool:
        """Whether `host` matches a name or pattern of the allow-list."""
        name = host.lower().rstrip(".")
        return any(fnmatch.fnmatchcase(name, pattern.lower().rstrip(".")) for pattern in self.allow)

    def refuses_address(self, host: str, address: Address) -> str | None:
        """Why the request may not go to `address` (None: it may)."""
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if address in METADATA:
            return "a cloud metadata address"
        if address.is_loopback:
            allowed = host.lower().rstrip(".") in {h.lower().rstrip(".") for h in self.loopback_for_tests}
            return None if allowed else "a loopback address"
        for kind, refused in (("a link-local", address.is_link_local), ("a multicast", address.is_multicast),
                              ("an unspecified", address.is_unspecified), ("a private", address.is_private),
                              ("a reserved", address.is_reserved)):
            if refused:
                return f"{kind} address"
        return None if address.is_global else "a non-public address"


@dataclass(frozen=True)
class HttpResult:
    """The response (status, headers, body: JSON parsed when it is JSON, else text), or why there is none."""

    status: int | None
    headers: dict[str, str]
    body: Any
    error: str | None
    url: str


class RefusedError(Exception):
    """The request may not go where it points; the message says why."""


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to the checked address whatever host the connection names."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        return await self.inner.connect_tcp(self.address, port, timeout=timeout, local_address=local_address,
                                            socket_options=socket_options)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


async def _resolve(host: str, port: int) -> list[Address]:
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        found = await asyncio.to_thread(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise RefusedError(f"the host {host!r} could not be resolved") from error
    return [ipaddress.ip_address(str(entry[4][0]).split("%")[0]) for entry in found]


async def _checked_address(url: str, policy: HttpPolicy) -> str:
    """The one address this URL's request may connect to, after every check."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RefusedError(f"only http and https URLs with a host are allowed, not {url!r}")
    host = parts.hostname
    if not policy.allows_host(host):
        raise RefusedError(f"the host {host!r} is not in the allowed hosts (FLOW_HTTP_ALLOW)")
    addresses = await _resolve(host, parts.port or (443 if parts.scheme == "https" else 80))
    if not addresses:
        raise RefusedError(f"the host {host!r} has no address")
    for address in addresses:
        reason = policy.refuses_address(host, address)
        if reason:
            raise RefusedError(f"the host {host!r} resolves to {reason}, which is never allowed")
    return str(addresses[0])


def _request_headers(headers: Mapping[str, str], same_host: bool) -> list[tuple[str, str]]:
    return [(name, value) for name, value in headers.items() if name.lower() not in COMPUTED
            and (same_host or name.lower() not in CREDENTIALS)]


async def _exchange(method: str, url: str, headers: list[tuple[str, str]], body: bytes | None, address: str,
                    policy: HttpPolicy) -> tuple[int, list[tuple[bytes, bytes]], bytes | None]:
    """One request to the pinned address; the body read up to the limit (None: it was larger)."""
    context = ssl.create_default_context(cafile=policy.ca_file)
    pool = httpcore.AsyncConnectionPool(network_backend=_PinnedBackend(address), ssl_context=context, max_connections=1)
    async with pool, pool.stream(method, url, headers=headers, content=body) as response:
        chunks, size = [], 0
        async for chunk in response.aiter_stream():
            size += len(chunk)
            if size > policy.max_response_bytes:
                return response.status, response.headers, None
            chunks.append(chunk)
        return response.status, response.headers, b"".join(chunks)


def _decoded(headers: list[tuple[bytes, bytes]], data: bytes) -> tuple[dict[str, str], Any]:
    named: dict[str, str] = {}
    for raw_name, raw_value in headers:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        named[name] = f"{named[name]}, {value}" if name in named else value
    text = data.decode("utf-8", "replace")
    if "json" in named.get("content-type", "").lower():
        try:
            return named, json.loads(text)
        except ValueError:
            pass
    return named, text


async def send_request(method: str, url: str, headers: Mapping[str, str], body: str | bytes | None,
                       timeout_seconds: float, policy: HttpPolicy) -> HttpResult:
    """Send one request under `policy`, following checked redirects; refusals and failures come back as `error`."""
    method, current = method.upper(), url
    data = body.encode() if isinstance(body, str) else body
    first_host = urlsplit(url).hostname
    try:
        async with asyncio.timeout(timeout_seconds):
            for _ in range(MAX_REDIRECTS + 1):
                address = await _checked_address(current, policy)
                same_host = urlsplit(current).hostname == first_host
                status, raw_headers, content = await _exchange(
                    method, current, _request_headers(headers, same_host), data, address, policy)
                named, parsed = _decoded(raw_headers, content or b"")
                if content is None:
                    return HttpResult(status, named, None, f"the response is larger than "
                                      f"{policy.max_response_bytes} bytes", current)
                location = named.get("location")
                if status not in REDIRECTS or not location:
                    return HttpResult(status, named, parsed, None, current)
                current = urljoin(current, location)
                if status == 303 or (status in (301, 302) and method == "POST"):
                    method, data = "GET", None
            return HttpResult(None, {}, None, f"more than {MAX_REDIRECTS} redirects", current)
    except RefusedError as error:
        return HttpResult(None, {}, None, f"refused: {error}", current)
    except TimeoutError:
        return HttpResult(None, {}, None, f"no complete response within {timeout_seconds:g} s", current)
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException, ssl.SSLError) as error:
        # A connection's failure in the library's words (a certificate, a refused port); a protocol error's
        # words may quote a header value, which may be a secret, so only its kind is said.
        connecting = isinstance(error, (httpcore.ConnectError, ssl.SSLError)) and str(error)
        detail = f" ({str(error)[:200]})" if connecting else ""
        return HttpResult(None, {}, None, f"the request failed: {type(error).__name__}{detail}", current)
    except httpcore.UnsupportedProtocol:
        return HttpResult(None, {}, None, "the URL's scheme is not supported", current)
