"""What the two HTTP providers (openai, anthropic) share: the API key and its client, failure classification
(scrubbing the key out of bodies is `_secrets`, shared with the claude-cli provider).

Classification of one failed HTTP attempt (the policy above decides what to do with it):

| what happened                                  | code                   | transient | cost known |
|------------------------------------------------|------------------------|-----------|------------|
| API key variable unset or empty (never sent)   | MODEL_KEY_MISSING      | no        | yes (0)    |
| 429                                            | MODEL_RATE_LIMITED     | yes       | yes (0)    |
| 500–599 (incl. 529 overloaded)                 | MODEL_SERVER_ERROR     | yes       | yes (0)    |
| 408 / 409 (the server says: try again)         | MODEL_SERVER_ERROR     | yes       | yes (0)    |
| 401                                            | MODEL_AUTH             | no        | yes (0)    |
| 403                                            | MODEL_PERMISSION       | no        | yes (0)    |
| 402                                            | MODEL_BILLING          | no        | yes (0)    |
| 400 / 404 / 413 / 422 / any other 4xx          | MODEL_INVALID_REQUEST  | no        | yes (0)    |
| connection refused / connect timeout / pool    | MODEL_CONNECTION / MODEL_TIMEOUT | yes | yes (0: nothing was sent) |
| read timeout after the request was sent        | MODEL_TIMEOUT          | yes       | NO         |
| connection reset / closed after sending        | MODEL_CONNECTION       | yes       | NO         |
| 200 whose body is not the API's JSON           | MODEL_BAD_RESPONSE     | no        | NO         |
| any other SDK exception                        | MODEL_PROVIDER_ERROR   | no        | NO         |

A failed connect names the configured URL and the socket's reason — `connection refused at <base_url>`, `cannot
resolve the host of <base_url>` — with the fix pointing at `base_url` in `[providers.<name>]`, so a typo'd port does
not read as an outage (the URL is shown without user info, query or fragment).

An error *status* is an answer: the provider billed nothing for it, so its cost is known (0) and a transient one
may be resent. A timeout or a reset after the request went out may have been billed by the server: the cost is
unknown, so the policy does not resend it (the issue: "a transient API error whose cost is known → resend";
"never retried: … unknown cost").

Secrets: the key is read from `os.environ[api_key_env]` at each attempt and handed only to the SDK client. Error
messages are written here (never the SDK's text, which quotes the response body), and any raw body and output
text are scrubbed of the key before they leave the provider (a 401 body may echo the key back). Bodies are
parsed from the bytes as received, and scrubbed afterwards, so scrubbing can never change what was parsed;
values shorter than 8 characters are placeholders, not secrets, and are not scrubbed.
"""

from __future__ import annotations

import json
import os
import re
import socket
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx2  # the HTTP library both official SDKs are built on (a dependency of openai and anthropic)

from ._http_direct import DirectHttp, TransportFailure
from ._secrets import scrub
from ._types import ProviderError, ProviderRequest, ProviderResponse

#: What a local server (on this machine, no key needed) is sent when its key variable is unset: the SDKs want one.
LOCAL_NO_KEY = "novelmuse-local-no-key"


def read_api_key(provider: str, env_name: str, *, optional: bool = False) -> str:
    """The provider's API key from its configured environment variable; MODEL_KEY_MISSING when unset or empty —
    unless `optional` (a server on this machine), then a fixed placeholder that is no secret."""
    key = os.environ.get(env_name, "").strip()
    if not key and optional:
        return LOCAL_NO_KEY
    if not key:
        raise ProviderError(
            "MODEL_KEY_MISSING",
            f"provider {provider!r}: the environment variable {env_name} is not set (nothing was sent)",
            transient=False,
            cost_known=True,
        )
    return key


def status_error(provider: str, status: int, raw: bytes, secret: str | None) -> ProviderError:
    """Classify an HTTP error status (see the module table)."""
    body = scrub(raw, secret)
    where = f"provider {provider!r}: HTTP {status}"
    if status == 429:
        return ProviderError("MODEL_RATE_LIMITED", f"{where} (rate limited)", transient=True, raw=body, status=status)
    if status >= 500 or status in (408, 409):
        return ProviderError("MODEL_SERVER_ERROR", f"{where} (server error)", transient=True, raw=body, status=status)
    if status == 401:
        return ProviderError("MODEL_AUTH", f"{where} (authentication failed)", raw=body, status=status)
    if status == 403:
        return ProviderError("MODEL_PERMISSION", f"{where} (permission denied)", raw=body, status=status)
    if status == 402:
        return ProviderError("MODEL_BILLING", f"{where} (payment required)", raw=body, status=status)
    return ProviderError("MODEL_INVALID_REQUEST", f"{where} (request refused)", raw=body, status=status)


def shown_url(url: str) -> str:
    """`url` as it may be shown in an error: scheme, host, port and path, without user info, query or fragment
    (a gateway's token sometimes rides there)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port is not None:
            netloc += f":{parts.port}"
    except ValueError:
        return "(an unparsable base_url)"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _socket_error(exc: BaseException) -> OSError | None:
    """The socket-level error under an SDK connection error (SDK error → httpx error → … → OSError), if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and (current.errno is not None or isinstance(current, socket.gaierror)):
            return current
        current = current.__cause__ or current.__context__
    return None


def _connect_failure(url: str, exc: BaseException) -> str:
    """Why nothing could be sent to `url`, in the socket's words."""
    cause = _socket_error(exc)
    if isinstance(cause, ConnectionRefusedError):
        return f"connection refused at {url}"
    if isinstance(cause, socket.gaierror):
        return f"cannot resolve the host of {url}"
    if cause is not None and cause.strerror:
        return f"cannot connect to {url} ({cause.strerror})"
    return f"cannot connect to {url}"


def transport_error(provider: str, exc: BaseException, *, timeout: bool, base_url: str = "") -> ProviderError:
    """Classify an SDK connection/timeout error by its httpx cause: did the request possibly reach the server?
    The message names the configured URL and the socket's reason (see the module docstring)."""
    cause = exc.__cause__
    nothing_sent = isinstance(
        cause, httpx2.ConnectError | httpx2.ConnectTimeout | httpx2.PoolTimeout | httpx2.UnsupportedProtocol
    )
    timed_out = timeout or isinstance(cause, httpx2.TimeoutException)
    return transport_failure(provider, exc, timeout=timed_out, nothing_sent=nothing_sent, base_url=base_url)


def transport_failure(
    provider: str, exc: BaseException, *, timeout: bool, nothing_sent: bool, base_url: str = ""
) -> ProviderError:
    """A request that could not complete, as either transport saw it: timed out or not, and whether anything was
    sent (then the cost is unknown). `exc`'s chain holds the socket's reason for a failed connect."""
    url = shown_url(base_url) if base_url else "the endpoint"
    where = f"base_url in book.toml [providers.{provider}]"
    if timeout:
        if nothing_sent:
            what, fix = f"connecting to {url} timed out (nothing was sent)", f"check {where} and that the server is up"
        else:
            what, fix = f"timed out waiting for the response from {url}", f"retry later, or raise timeout_s in {where}"
        return ProviderError(
            "MODEL_TIMEOUT", f"provider {provider!r}: {what}", transient=True, cost_known=nothing_sent, fix=fix
        )
    if nothing_sent:
        what = f"{_connect_failure(url, exc)} (nothing was sent)"
        fix = f"check {where} (host and port) and that the server is running there"
    else:
        what, fix = f"the connection to {url} was lost after the request was sent", "retry later"
    return ProviderError(
        "MODEL_CONNECTION", f"provider {provider!r}: {what}", transient=True, cost_known=nothing_sent, fix=fix
    )


def sdk_error(provider: str, exc: BaseException) -> ProviderError:
    """Any other SDK failure (an SDK-side check, an unexpected client state): never retried, cost unknown.

    Only the exception's class name is kept — SDK messages may quote bodies or settings."""
    return ProviderError(
        "MODEL_PROVIDER_ERROR",
        f"provider {provider!r}: the SDK failed ({type(exc).__name__})",
        transient=False,
        cost_known=False,
    )


@dataclass(frozen=True)
class SdkErrors:
    """The exception classes of one official SDK. openai and anthropic mirror each other: `APIStatusError`
    (carries the HTTP response), `APITimeoutError` (a subclass of `APIConnectionError`, so it is tested first),
    everything else below the SDK's base error."""

    status: type[Exception]
    timeout: type[Exception]
    connection: type[Exception]

    def classify(self, provider: str, exc: Exception, secret: str | None, *, base_url: str = "") -> ProviderError:
        """Any exception of the SDK's base error class, classified (see the module table)."""
        response = getattr(exc, "response", None)
        if isinstance(exc, self.status) and isinstance(response, httpx2.Response):
            return status_error(provider, response.status_code, response.content, secret)
        if isinstance(exc, self.timeout):
            return transport_error(provider, exc, timeout=True, base_url=base_url)
        if isinstance(exc, self.connection):
            return transport_error(provider, exc, timeout=False, base_url=base_url)
        return sdk_error(provider, exc)


def bad_response(provider: str, raw: bytes, secret: str | None, why: str) -> ProviderError:
    """A 200 whose body is not the API's JSON: never retried (the server may have billed the attempt)."""
    return ProviderError(
        "MODEL_BAD_RESPONSE",
        f"provider {provider!r}: {why}",
        transient=False,
        cost_known=False,
        raw=scrub(raw, secret),
        status=200,
    )


_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]")


def schema_name(name: str) -> str:
    """A schema or tool name both APIs accept (^[A-Za-z0-9_-]{1,64}$)."""
    return (_NAME_BAD.sub("_", name) or "output")[:64]


class _Closable(Protocol):
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_Closable)
_ClientT_co = TypeVar("_ClientT_co", bound=_Closable, covariant=True)


class SdkClientClass(Protocol[_ClientT_co]):
    """What both official SDKs' async client classes accept (`openai.AsyncOpenAI`, `anthropic.AsyncAnthropic`)."""

    def __call__(self, *, api_key: str, base_url: str, max_retries: int, timeout: float) -> _ClientT_co: ...


class KeyedClient(Generic[ClientT]):
    """The one SDK client of a provider, for the API key currently in the environment.

    Every client is made with the SDK's own retries off (`max_retries=0`): one attempt is one HTTP request, and
    retries belong to the call policy. Concurrent sends share the client (one connection pool). A changed key
    gets a fresh client; the old one may still carry requests in flight, so it is retired and closed only by
    `aclose`."""

    def __init__(self, sdk_client: SdkClientClass[ClientT], *, base_url: str, timeout_s: float) -> None:
        self._sdk_client = sdk_client
        self.base_url = base_url
        self._timeout_s = timeout_s
        self._client: ClientT | None = None
        self._key: str | None = None
        self._retired: list[ClientT] = []

    def get(self, key: str) -> ClientT:
        """The client for `key` (made on first use, or when the key changed)."""
        if self._client is not None and self._key != key:
            self._retired.append(self._client)
            self._client = None
        if self._client is None:
            self._client = self._sdk_client(api_key=key, base_url=self.base_url, max_retries=0, timeout=self._timeout_s)
            self._key = key
        return self._client

    async def aclose(self) -> None:
        """Close every client made so far (their HTTP connection pools)."""
        clients = [*self._retired, *([self._client] if self._client is not None else [])]
        self._client, self._retired = None, []
        for client in clients:
            await client.close()


def json_body(provider: str, raw: bytes, secret: str | None) -> dict[str, Any]:
    """A 200 body that must be a JSON object (else MODEL_BAD_RESPONSE)."""
    try:
        body = json.loads(raw)
    except ValueError:
        raise bad_response(provider, raw, secret, "the response body is not JSON") from None
    if not isinstance(body, dict):
        raise bad_response(provider, raw, secret, "the response body is not a JSON object")
    return body


class _HttpConfig(Protocol):
    @property
    def api_key_env(self) -> str: ...
    @property
    def max_concurrency(self) -> int: ...
    @property
    def transport(self) -> str: ...


ConfigT = TypeVar("ConfigT", bound=_HttpConfig)


class SdkProvider(ABC, Generic[ConfigT, ClientT]):
    """What the openai and anthropic providers share: a configured endpoint, one SDK client per API key, one
    HTTP request per `send` (the SDK's own retries off), the SDK's failures classified, the raw body parsed.

    A provider says how to build its request parameters, how to post them with its SDK (returning the raw body
    bytes as received) and how to read that body; and, for `transport = "http"` (`_http_direct`), the path it
    posts to and the headers carrying the key.
    """

    kind: str
    errors: SdkErrors
    base_error: type[Exception]  # every exception the SDK raises derives from it
    path: str  # under the base URL, for transport = "http"

    def __init__(self, name: str, config: ConfigT, book_root: Path, clients: KeyedClient[ClientT]) -> None:
        self.name = name
        self.config = config
        self.book_root = book_root
        self.max_concurrency = config.max_concurrency
        self._clients = clients
        self._direct = DirectHttp(name, clients.base_url) if config.transport == "http" else None

    @abstractmethod
    def auth_headers(self, key: str) -> dict[str, str]:
        """The headers that carry the key (and the API version) when the SDK is not used."""

    @abstractmethod
    def build_params(self, request: ProviderRequest) -> dict[str, Any]:
        """The API parameters for one request (pure: no key, no I/O)."""

    @abstractmethod
    async def post(self, client: ClientT, params: dict[str, Any], timeout_s: float) -> bytes:
        """Send the parameters once with the SDK; the raw response body."""

    @abstractmethod
    def parse(self, request: ProviderRequest, raw: bytes, key: str) -> ProviderResponse:
        """Read one response body (the key is scrubbed from what is kept)."""

    async def send(self, request: ProviderRequest) -> ProviderResponse:
        """Send one request; raise ProviderError for a classified failure."""
        key = read_api_key(self.name, self.config.api_key_env, optional=getattr(self.config, "key_optional", False))
        params = self.build_params(request)
        if self._direct is not None:
            body = json.dumps(params, ensure_ascii=False, separators=(",", ":")).encode()
            try:
                status, raw = await self._direct.post(self.path, self.auth_headers(key), body, request.timeout_s)
            except TransportFailure as exc:
                raise transport_failure(
                    self.name, exc, timeout=exc.timeout, nothing_sent=not exc.sent, base_url=self._clients.base_url
                ) from None
            if not 200 <= status < 300:
                raise status_error(self.name, status, raw, key) from None
            return self.parse(request, raw, key)
        client = self._clients.get(key)
        try:
            raw = await self.post(client, params, request.timeout_s)
        except self.base_error as exc:
            raise self.classify(exc, key) from None
        return self.parse(request, raw, key)

    def classify(self, exc: Exception, secret: str | None) -> ProviderError:
        """One of the SDK's exceptions, classified (see the module table); connect failures name the base URL."""
        return self.errors.classify(self.name, exc, secret, base_url=self._clients.base_url)

    async def aclose(self) -> None:
        """Close the HTTP connection pools."""
        await self._clients.aclose()
        if self._direct is not None:
            await self._direct.aclose()
