"""`transport = "http"`: the openai and anthropic providers' requests sent without their SDK (issue 17 item 5).

Why: replay sends hundreds of concurrent calls, and the SDK path costs several ms of CPU per request (the SDK's
request building and response models, httpx's connection pool, which grows with the number of connections), all
serial on the one event loop. Measured against a loopback server answering after 200 ms (`benchmarks/bench_llm.py`):
100 concurrent calls take 2.6-2.8x one call through the SDK, 1.3-1.4x through this client (the model layer's
own bookkeeping alone: 1.2x). The SDK stays the default
(DESIGN: official SDKs); this path is chosen per provider in book.toml.

What it is: HTTP/1.1 POST of a JSON body over asyncio streams (TLS set up as the SDKs' httpx does), a keep-alive
pool per endpoint, responses with Content-Length, chunked, or read to the end, gzip/deflate decoded. What it keeps
from the SDK path (the loopback provider tests run on both): one request per attempt (no retries), the same
parameters and parsing, and the same failure classes and messages (`_provider_http`'s table: it raises
`TransportFailure`, which the provider words) — nothing sent (refused, connect timeout) → cost known, anything after
the request went out (read timeout, reset, a response cut short) → cost unknown. It does not go through proxies:
with a proxy variable set for the endpoint it refuses to send (MODEL_PROVIDER_ERROR) rather than bypass the proxy.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

from ._types import ProviderError

#: An idle pooled connection older than this is closed rather than reused: servers close idle keep-alive
#: connections after a few seconds (uvicorn: 5 s), and a request written into one that is closing is lost.
IDLE_EXPIRY_S = 4.0
#: Bounds what a response may make us hold (a model answer is a few hundred KB at most).
MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024


@dataclass
class _Conn:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    idle_since: float = 0.0

    def close(self) -> None:
        self.writer.close()


class _Cut(Exception):
    """The response ended or broke after the request was sent."""


class TransportFailure(Exception):
    """The request did not complete: whether it may have reached the server (`sent`: its cost is then unknown)
    and whether time ran out. The socket's own error, if any, is the `__cause__` (the provider names it)."""

    def __init__(self, *, sent: bool, timeout: bool) -> None:
        super().__init__("sent" if sent else "not sent", "timeout" if timeout else "failed")
        self.sent = sent
        self.timeout = timeout


class DirectHttp:
    """A minimal HTTP/1.1 JSON client for one base URL (see the module docstring)."""

    def __init__(self, provider: str, base_url: str) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self._provider = provider
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._prefix = parts.path.rstrip("/")
        self._query = f"?{parts.query}" if parts.query else ""  # a gateway's parameters ride on every request
        default_port = self._port == (443 if self._tls else 80)
        self._host_header = (f"[{self._host}]" if ":" in self._host else self._host) + (
            "" if default_port else f":{self._port}"
        )
        self._idle: list[_Conn] = []
        self._ssl: ssl.SSLContext | None = None
        self._proxy_checked = False

    async def post(self, path: str, headers: dict[str, str], body: bytes, timeout_s: float) -> tuple[int, bytes]:
        """POST `body` to base URL + `path`; (status, body). TransportFailure when it could not complete;
        ProviderError when a proxy would be bypassed."""
        self._refuse_proxied()
        conn = await self._connect(timeout_s)
        head = [f"POST {self._prefix}{path}{self._query} HTTP/1.1", f"Host: {self._host_header}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        head += ["Content-Type: application/json", "Accept-Encoding: gzip, deflate", f"Content-Length: {len(body)}"]
        request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        try:
            conn.writer.write(request)
            status, raw, reusable = await asyncio.wait_for(self._exchange(conn), timeout_s)
        except TimeoutError as exc:
            conn.close()
            raise TransportFailure(sent=True, timeout=True) from exc
        except (_Cut, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            conn.close()
            raise TransportFailure(sent=True, timeout=False) from exc
        except BaseException:  # cancelled (Ctrl-C, a sibling failing): the connection is in an unknown state
            conn.close()
            raise
        if reusable:
            conn.idle_since = time.monotonic()
            self._idle.append(conn)
        else:
            conn.close()
        return status, raw

    async def aclose(self) -> None:
        """Close every pooled connection."""
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        for conn in idle:
            with contextlib.suppress(OSError):
                await conn.writer.wait_closed()

    def _refuse_proxied(self) -> None:
        if self._proxy_checked:
            return
        import urllib.request  # only here: it imports email and http.client, which other paths never need

        scheme = "https" if self._tls else "http"
        proxies = urllib.request.getproxies_environment()
        proxied = (scheme in proxies or "all" in proxies) and not urllib.request.proxy_bypass(self._host)
        if proxied:
            raise ProviderError(
                "MODEL_PROVIDER_ERROR",
                f'provider {self._provider!r}: transport = "http" does not use the proxy set in the environment '
                '(nothing was sent) — use transport = "sdk" for this provider',
                transient=False,
                cost_known=True,
            )
        self._proxy_checked = True

    async def _connect(self, timeout_s: float) -> _Conn:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if now - conn.idle_since < IDLE_EXPIRY_S and not conn.reader.at_eof() and not conn.writer.is_closing():
                return conn
            conn.close()
        if self._tls and self._ssl is None:
            import httpx2  # the TLS settings of the SDKs' HTTP library (its CA store, SSL_CERT_FILE honoured)

            self._ssl = httpx2.create_ssl_context()
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(
                    self._host, self._port, ssl=self._ssl, server_hostname=self._host if self._tls else None
                ),
                timeout_s,
            )
        except TimeoutError as exc:
            raise TransportFailure(sent=False, timeout=True) from exc
        except OSError as exc:
            raise TransportFailure(sent=False, timeout=False) from exc
        return _Conn(reader, writer)

    async def _exchange(self, conn: _Conn) -> tuple[int, bytes, bool]:
        """Send what was written, read one response: (status, decoded body, connection reusable)."""
        await conn.writer.drain()
        reader = conn.reader
        version, status, fields = await _read_head(reader)
        while 100 <= status < 200:  # interim responses (103 Early Hints from a CDN): the answer follows
            version, status, fields = await _read_head(reader)
        keep_alive = version == "HTTP/1.1" and fields.get("connection", "").lower() != "close"
        if status in (204, 304):  # no body, whatever the headers say
            return status, b"", keep_alive
        if "chunked" in fields.get("transfer-encoding", "").lower():
            body = await _read_chunked(reader)
        elif "content-length" in fields:
            try:
                length = int(fields["content-length"])
            except ValueError:
                raise _Cut from None
            if not 0 <= length <= MAX_BODY_BYTES:
                raise _Cut
            body = await reader.readexactly(length)
        else:  # no length: the body runs to the end of the connection
            body = await reader.read(MAX_BODY_BYTES + 1)
            while not reader.at_eof() and len(body) <= MAX_BODY_BYTES:
                body += await reader.read(MAX_BODY_BYTES + 1 - len(body))
            if len(body) > MAX_BODY_BYTES:
                raise _Cut
            keep_alive = False
        encoding = fields.get("content-encoding", "identity").lower()
        if encoding in ("gzip", "deflate"):
            try:
                body = zlib.decompress(body, 47)  # 32 + 15: gzip or zlib header, detected
            except zlib.error:
                raise _Cut from None
        return status, body, keep_alive


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, int, dict[str, str]]:
    """One response head: HTTP version, status, header fields (names lower-cased)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise _Cut from None
    if len(head) > MAX_HEADER_BYTES:
        raise _Cut
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    try:
        status = int(rest[:3])
    except ValueError:
        raise _Cut from None
    fields: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            fields[name.strip().lower()] = value.strip()
    return version, status, fields


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise _Cut from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailer fields, then the blank line
                pass
            return b"".join(parts)
        total += size
        if total > MAX_BODY_BYTES:
            raise _Cut
        parts.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise _Cut
