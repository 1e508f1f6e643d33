"""The thin HTTP client of `transport = "http"` (issue 17.5) on the wire shapes the provider tests' loopback server
never sends: chunked and gzip bodies, a body that runs to the end of the connection, keep-alive reuse, a pooled
connection the server closed, a response cut short, and a proxy it must not bypass."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Awaitable, Callable

import pytest

from novelmuse.llm._http_direct import DirectHttp, TransportFailure
from novelmuse.llm._types import ProviderError

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


REQUEST_LINES: list[bytes] = []


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    REQUEST_LINES.append(head.split(b"\r\n", 1)[0])
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    return await reader.readexactly(length)


def serve(*answers: bytes, close_after: bool = False) -> tuple[Handler, list[int]]:
    """A handler answering each request on a connection with the next of `answers`; counts connections."""
    connections: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            for answer in answers:
                await read_request(reader)
                writer.write(answer)
                await writer.drain()
                if close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return handle, connections


async def exchange(handler: Handler, n: int = 1, pause_s: float = 0.0, query: str = "") -> list[tuple[int, bytes]]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = DirectHttp("p", f"http://127.0.0.1:{port}/v1/{query}")
    out = []
    try:
        for _ in range(n):
            out.append(await client.post("/chat/completions", {"Authorization": "Bearer k"}, b"{}", 5.0))
            await asyncio.sleep(pause_s)
    finally:
        await client.aclose()
        server.close()
    return out


def test_chunked_and_gzip_bodies_are_decoded_and_the_connection_reused() -> None:
    packed = gzip.compress(b'{"ok": true}')
    chunked = (
        b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\n{"ok"\r\n7\r\n: true}\r\n0\r\nX-T: 1\r\n\r\n'
    )
    gzipped = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(packed), packed)
    handler, connections = serve(chunked, gzipped)
    REQUEST_LINES.clear()
    assert asyncio.run(exchange(handler, 2, query="?api-version=2")) == [(200, b'{"ok": true}')] * 2
    assert len(connections) == 1  # HTTP/1.1 keep-alive: the second request went over the first connection
    assert REQUEST_LINES == [b"POST /v1/chat/completions?api-version=2 HTTP/1.1"] * 2  # a gateway's query is kept


def test_an_interim_response_is_skipped_and_a_204_has_no_body() -> None:
    early = b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    handler, connections = serve(early, b"HTTP/1.1 204 No Content\r\n\r\n")
    assert asyncio.run(exchange(handler, 2)) == [(200, b"{}"), (204, b"")]  # the 204 is not read to a timeout
    assert len(connections) == 1


def test_a_body_without_length_runs_to_the_end_and_the_connection_is_not_reused() -> None:
    handler, connections = serve(b'HTTP/1.0 429 Too Many\r\n\r\n{"error": 1}', close_after=True)
    assert asyncio.run(exchange(handler, 2)) == [(429, b'{"error": 1}')] * 2
    assert len(connections) == 2


def test_a_pooled_connection_the_server_closed_is_not_reused() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    handler, connections = serve(answer, close_after=True)  # says keep-alive, then closes: a server's idle timeout
    assert asyncio.run(exchange(handler, 2, pause_s=0.1)) == [(200, b"{}")] * 2
    assert len(connections) == 2


@pytest.mark.parametrize(
    "answer",
    [
        b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"cut',  # closed mid-body
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{}",  # closed mid-chunk
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",  # not gzip
        b"garbage\r\n\r\n",  # not HTTP
        b"",  # closed without a word
    ],
)
def test_a_response_cut_short_is_a_lost_connection_after_sending(answer: bytes) -> None:
    handler, _ = serve(answer, close_after=True)
    with pytest.raises(TransportFailure) as info:
        asyncio.run(exchange(handler))
    assert (info.value.sent, info.value.timeout) == (True, False)  # the provider words it: cost unknown


def test_a_proxy_in_the_environment_is_never_bypassed(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("no_proxy", "NO_PROXY", "http_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    client = DirectHttp("p", "https://api.example.invalid/v1")
    with pytest.raises(ProviderError) as info:
        asyncio.run(client.post("/chat/completions", {}, b"{}", 1.0))
    assert (info.value.code, info.value.cost_known) == ("MODEL_PROVIDER_ERROR", True)
    assert 'transport = "sdk"' in str(info.value)
    monkeypatch.setenv("NO_PROXY", "api.example.invalid")  # bypassed by the user's own rule: no refusal
    client = DirectHttp("p", "https://api.example.invalid/v1")
    client._refuse_proxied()
