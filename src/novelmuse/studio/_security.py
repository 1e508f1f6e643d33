"""The studio's guard: every request proves it comes from the author's own browser tab, opened by `muse studio`.

A local web server that can spend money and change the author's files is a target for any page the author
visits (cross-site requests, DNS rebinding) and for other users of the machine. So, before any route runs:

- the Host header must name the address the studio listens on (a rebinding domain → 403);
- an Origin header, when sent, must be the studio's own origin (a foreign page's fetch or form → 403);
- the request must carry the session cookie holding the random token of this start (→ 403 otherwise). The token
  reaches the browser once, in the URL `muse studio` opens; that request sets it as an HttpOnly, SameSite=Strict
  cookie and is redirected to the same page without it, so the token stays out of history and referrers;
- a request that changes anything is a POST carrying the CSRF token of this start (a form field or the
  X-CSRF-Token header) → 403 otherwise; every other method than GET, HEAD and POST is 405.

Every response says how long the studio took to make it (Server-Timing), and: no caching, no framing, no sniffing,
no referrer to other sites, and a Content-Security-Policy that lets the page load only the studio's own scripts and
styles (nothing from the network: the pages work offline).
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';"
    " form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make the browser send `Origin: null`
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
SAFE_METHODS = frozenset({"GET", "HEAD"})
CSRF_FIELD = "csrf"
CSRF_HEADER = b"x-csrf-token"


@dataclass(frozen=True)
class Secrets:
    """The two random values of one studio start: the session token (in the opened URL, then a cookie) and the
    CSRF token (in every form the studio renders)."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The Host header values the studio answers: its own address and port (and the loopback names for it)."""
    names = {host}
    if host in ("127.0.0.1", "localhost", "::1"):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    if ":" in host and not host.startswith("["):
        names.add(f"[{host}]")
    return frozenset(f"{n}:{port}" for n in names)


def cookie_name(port: int) -> str:
    """Cookies are shared by every port of a host: each studio start names its own."""
    return f"muse_studio_{port}"


def _same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


class Guard:
    """ASGI middleware enforcing the rules of the module doc around the studio's routes."""

    def __init__(self, app: ASGIApp, keys: Secrets, hosts: frozenset[str], port: int):
        self.app = app
        self.keys = keys
        self.hosts = hosts
        self.origins = frozenset(f"http://{h}" for h in hosts)
        self.cookie = cookie_name(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        method = scope["method"]
        if headers.get("host") not in self.hosts:
            await _plain(send, 403, "forbidden: this studio answers only at its own address (Host header)")
            return
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            await _plain(send, 403, "forbidden: a request from another site (Origin header)")
            return
        if method not in SAFE_METHODS and method != "POST":
            await _plain(send, 405, "method not allowed", extra=((b"allow", b"GET, HEAD, POST"),))
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        offered = next((v for k, v in query if k == "token"), None)
        if method in SAFE_METHODS and offered is not None and _same(offered, self.keys.token):
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            where = scope["path"] + (f"?{rest}" if rest else "")
            cookie = f"{self.cookie}={self.keys.token}; Path=/; HttpOnly; SameSite=Strict"
            await _plain(send, 303, "", extra=((b"location", where.encode()), (b"set-cookie", cookie.encode())))
            return
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is no token
            jar = SimpleCookie()
        held = jar.get(self.cookie)
        if not _same(held.value if held is not None else None, self.keys.token):
            await _plain(
                send,
                403,
                "forbidden: no studio session — open the link `muse studio` printed (it holds this start's token)",
            )
            return
        if method == "POST":
            body, receive = await _buffer(receive)
            if not _same(_csrf_of(headers, body), self.keys.csrf):
                await _plain(send, 403, "forbidden: the form's CSRF token is missing or stale — reload the page")
                return

        began = time.perf_counter()

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                took = f"app;dur={(time.perf_counter() - began) * 1000:.1f}".encode()
                message["headers"] = [*message.get("headers", []), *HEADERS, (b"server-timing", took)]
            await send(message)

        await self.app(scope, receive, with_headers)


MAX_BODY = 32 * 1024 * 1024  # a chapter of 16 MiB, form-encoded


async def _buffer(receive: Receive) -> tuple[bytes, Receive]:
    """Read the whole request body (capped) and hand the route a receive that replays it."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            break
        chunks.append(chunk)
        more = message.get("more_body", False)
    body = b"".join(chunks)
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


def _csrf_of(headers: dict[str, str], body: bytes) -> str | None:
    header = headers.get(CSRF_HEADER.decode())
    if header:
        return header
    if headers.get("content-type", "").split(";")[0].strip() == "application/x-www-form-urlencoded":
        for k, v in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True):
            if k == CSRF_FIELD:
                return v
    return None


async def _plain(send: Send, status: int, text: str, extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *HEADERS,
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
