"""The http node's executor against real servers on 127.0.0.1.

The "allowed host" is `localhost`, served by this module's server: the policy names it in
`loopback_for_tests`, the test-only escape, so that a loopback address is accepted for that one
name. Every refusal is asserted by its effect: the refused listener counts the connections it saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import pytest
import pytest_asyncio

from app.sandbox.http import HttpPolicy, send_request

pytestmark = pytest.mark.asyncio(loop_scope="module")
HUGE = 2**30


@dataclass
class Server:
    """A small HTTP/1.1 server that records what reached it."""

    port: int = 0
    requests: list[dict[str, object]] = field(default_factory=list)
    connections: int = 0
    sent: int = 0
    hangups: int = 0
    release: asyncio.Event = field(default_factory=asyncio.Event)
    handlers: set[asyncio.Task[None]] = field(default_factory=set)
    writers: list[asyncio.StreamWriter] = field(default_factory=list)


async def _serve(server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    server.connections += 1
    task = asyncio.current_task()
    assert task is not None
    server.handlers.add(task)
    server.writers.append(writer)
    try:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        method, target, _ = head[0].split(" ")
        headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in head[1:] if line)}
        body = await reader.readexactly(int(headers.get("content-length", 0)))
        server.requests.append({"method": method, "target": target, "headers": headers, "body": body.decode()})
        path, query = urlsplit(target).path, parse_qs(urlsplit(target).query)
        if path == "/json":
            await _answer(writer, 200, json.dumps({"hello": "world", "method": method}).encode(), "application/json")
        elif path == "/missing":
            await _answer(writer, 404, b"no such thing", "text/plain")
        elif path == "/redirect":
            await _answer(writer, int(query.get("status", ["302"])[0]), b"", "text/plain",
                          [("Location", query["to"][0]), ("Set-Cookie", "session=abc")])
        elif path == "/huge":
            writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {HUGE}\r\n\r\n".encode())
            chunk = b"x" * 65536
            while server.sent < HUGE:  # bounded; stops early when the client hangs up
                writer.write(chunk)
                await writer.drain()
                server.sent += len(chunk)
        elif path == "/slow":
            await server.release.wait()
        writer.close()
    except (ConnectionError, asyncio.IncompleteReadError):
        server.hangups += 1
    finally:
        server.handlers.discard(task)


async def _answer(writer: asyncio.StreamWriter, status: int, body: bytes, kind: str,
                  extra: list[tuple[str, str]] = []) -> None:  # noqa: B006 (read only)
    lines = [f"HTTP/1.1 {status} X", f"Content-Type: {kind}", f"Content-Length: {len(body)}", "Connection: close",
             *(f"{k}: {v}" for k, v in extra)]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    await writer.drain()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def servers() -> AsyncIterator[tuple[Server, Server]]:
    """The allowed test host's server and a listener that nothing may reach."""
    allowed, refused = Server(), Server()
    running = []
    for server in (allowed, refused):
        def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter, s: Server = server) -> object:
            return _serve(s, r, w)
        started = await asyncio.start_server(handler, "127.0.0.1", 0)
        server.port = started.sockets[0].getsockname()[1]
        running.append(started)
    yield allowed, refused
    allowed.release.set()
    for started in running:
        started.close()
    await _stop_handlers(allowed, refused)


async def _stop_handlers(*servers: Server) -> None:
    """End the connections still open (a client that never sent its request, a slow answer)."""
    handlers = [task for server in servers for task in server.handlers]
    for task in handlers:
        task.cancel()
    await asyncio.gather(*handlers, return_exceptions=True)
    for writer in [w for server in servers for w in server.writers]:
        writer.close()
        with contextlib.suppress(ConnectionError, ssl.SSLError):
            await writer.wait_closed()


def policy(**overrides: object) -> HttpPolicy:
    base: dict[str, object] = {"allow": ("localhost", "127.0.0.1"), "loopback_for_tests": ("localhost",)}
    return HttpPolicy(**{**base, **overrides})  # type: ignore[arg-type]


async def test_an_allowed_request_works_and_json_is_parsed(servers: tuple[Server, Server]) -> None:
    allowed, _ = servers
    result = await send_request("POST", f"http://localhost:{allowed.port}/json", {"X-Token": "t", "Host": "evil"},
                                '{"a": 1}', 5, policy())
    assert result.error is None and result.status == 200 and result.body == {"hello": "world", "method": "POST"}
    seen = allowed.requests[-1]
    assert seen["body"] == '{"a": 1}' and seen["headers"]["host"] == f"localhost:{allowed.port}"  # type: ignore[index]
    assert seen["headers"]["x-token"] == "t"  # type: ignore[index]


async def test_a_status_of_400_or_more_is_reported(servers: tuple[Server, Server]) -> None:
    allowed, _ = servers
    result = await send_request("GET", f"http://localhost:{allowed.port}/missing", {}, None, 5, policy())
    assert result.status == 404 and result.body == "no such thing" and result.error is None


@pytest.mark.parametrize(("host", "allow"), [("127.0.0.1", ()), ("127.0.0.1", ("127.0.0.1",)),
                                             ("localhost", ("localhost",)), ("127.0.0.1", ("*",))],
                         ids=["not allowed", "allowed but loopback", "a name resolving to loopback", "allow all"])
async def test_a_loopback_listener_is_never_reached(servers: tuple[Server, Server], host: str,
                                                    allow: tuple[str, ...]) -> None:
    _, refused = servers
    result = await send_request("GET", f"http://{host}:{refused.port}/json", {}, None, 5,
                                HttpPolicy(allow=allow))
    assert result.error and result.error.startswith("refused") and result.status is None
    assert refused.connections == 0


@pytest.mark.parametrize("to", ["http://127.0.0.1:{refused}/json", "http://169.254.169.254/latest/meta-data/",
                                "http://[::ffff:127.0.0.1]:{refused}/json", "http://10.0.0.1/", "http://[fd00:ec2::254]/",
                                "http://0.0.0.0:{refused}/", "file:///etc/passwd"])
async def test_a_redirect_to_a_refused_address_is_not_followed(servers: tuple[Server, Server], to: str) -> None:
    allowed, refused = servers
    target = to.format(refused=refused.port)
    result = await send_request("GET", f"http://localhost:{allowed.port}/redirect?to={target}", {}, None, 5,
                                policy(allow=("*",)))
    assert result.error and result.error.startswith("refused") and refused.connections == 0


async def test_redirects_are_bounded(servers: tuple[Server, Server]) -> None:
    allowed, _ = servers
    url = f"http://localhost:{allowed.port}/json"
    for _ in range(6):
        url = f"http://localhost:{allowed.port}/redirect?to={url}"
    before = len(allowed.requests)
    result = await send_request("GET", url, {}, None, 5, policy())
    assert result.error == "more than 5 redirects" and len(allowed.requests) - before == 6


async def test_a_redirect_keeps_no_cookie_and_drops_credentials_for_another_host(servers: tuple[Server, Server]) -> None:
    allowed, _ = servers
    to = f"http://127.0.0.1:{allowed.port}/json"
    result = await send_request("GET", f"http://localhost:{allowed.port}/redirect?to={to}",
                                {"Authorization": "Bearer s3cr3t", "X-Trace": "1"}, None, 5,
                                policy(loopback_for_tests=("localhost", "127.0.0.1")))
    assert result.status == 200, result
    first, second = allowed.requests[-2]["headers"], allowed.requests[-1]["headers"]
    assert first["authorization"] == "Bearer s3cr3t"  # type: ignore[index]
    assert "authorization" not in second and "cookie" not in second and second["x-trace"] == "1"  # type: ignore[operator,index]


async def test_a_303_turns_a_post_into_a_get(servers: tuple[Server, Server]) -> None:
    allowed, _ = servers
    to = f"http://localhost:{allowed.port}/json"
    result = await send_request("POST", f"http://localhost:{allowed.port}/redirect?status=303&to={to}", {}, "x", 5,
                                policy())
    assert result.body == {"hello": "world", "method": "GET"}


async def test_a_1_gb_response_is_read_no_further_than_the_limit(servers: tuple[Server, Server]) -> None:
    allowed, _ = servers
    result = await send_request("GET", f"http://localhost:{allowed.port}/huge", {}, None, 60,
                                policy(max_response_bytes=1_000_000))
    assert result.error == "the response is larger than 1000000 bytes" and result.body is None
    for _ in range(1000):  # the server notices the hang-up at its next write
        if allowed.hangups:
            break
        await asyncio.sleep(0.01)
    assert allowed.hangups == 1 and allowed.sent < HUGE // 10


async def test_a_slow_response_ends_at_the_timeout(servers: tuple[Server, Server]) -> None:
    allowed, _ = servers
    result = await send_request("GET", f"http://localhost:{allowed.port}/slow", {}, None, 0.5, policy())
    assert result.error == "no complete response within 0.5 s" and result.status is None


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
                                     "169.254.1.1", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255",
                                     "::1", "::", "fe80::1", "fd00:ec2::254", "fc00::1", "::ffff:10.0.0.1", "ff02::1"])
async def test_addresses_that_are_not_public_are_refused(address: str) -> None:
    assert HttpPolicy(allow=("*",)).refuses_address("example.org", ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"])
async def test_public_addresses_are_accepted(address: str) -> None:
    assert HttpPolicy(allow=("*",)).refuses_address("example.org", ipaddress.ip_address(address)) is None


async def test_the_allow_list_matches_names_and_patterns() -> None:
    allowed = HttpPolicy(allow=("api.example.com", "*.internal.example.org"))
    assert allowed.allows_host("API.example.com.") and allowed.allows_host("a.b.internal.example.org")
    assert not allowed.allows_host("example.com") and not allowed.allows_host("api.example.com.evil.org")
    assert not HttpPolicy().allows_host("example.com")  # none by default


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tls_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Server, str, list[str]]]:
    """An HTTPS server on 127.0.0.1 with a certificate for `localhost` only; it records the SNI names it got."""
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    made = await asyncio.create_subprocess_exec(
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
        "-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    if await made.wait() != 0:
        pytest.skip("openssl could not make a test certificate")
    names: list[str] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: names.append(str(name)) and None  # type: ignore[func-returns-value]
    server = Server()

    def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> object:
        return _serve(server, r, w)

    started = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=context)
    server.port = started.sockets[0].getsockname()[1]
    yield server, str(cert), names
    started.close()
    await _stop_handlers(server)


async def test_https_goes_to_the_checked_address_with_the_names_sni_and_certificate(
        tls_server: tuple[Server, str, list[str]]) -> None:
    server, ca, names = tls_server
    result = await send_request("GET", f"https://localhost:{server.port}/json", {}, None, 5, policy(ca_file=ca))
    assert result.status == 200 and result.body == {"hello": "world", "method": "GET"}, result
    assert names == ["localhost"] and server.requests[-1]["headers"]["host"] == f"localhost:{server.port}"  # type: ignore[index]
    by_address = await send_request("GET", f"https://127.0.0.1:{server.port}/json", {}, None, 5,
                                    policy(ca_file=ca, loopback_for_tests=("localhost", "127.0.0.1")))
    assert "CERTIFICATE_VERIFY_FAILED" in (by_address.error or "") and len(server.requests) == 1  # not its name


async def test_a_failed_request_does_not_quote_a_header_value(servers: tuple[Server, Server]) -> None:
    allowed, _ = servers
    result = await send_request("GET", f"http://localhost:{allowed.port}/json", {"X-Key": "s3cr3t\r\nX: 1"}, None, 5,
                                policy())
    assert result.error and result.error.startswith("the request failed") and "s3cr3t" not in result.error
