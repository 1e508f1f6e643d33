"""Loopback model servers with fault injection: the OpenAI chat-completions API and the Anthropic messages API.

Each server listens on 127.0.0.1 on a random port in a background thread (stdlib `ThreadingHTTPServer`, so
concurrent requests are served concurrently), counts and records every request (path, headers, raw and parsed
body) and answers each request with the next scripted `Reply` in order; when the queue is empty it answers with
`default` (a normal success unless changed). A `Reply` can inject: an HTTP status with a body, a delay (for
timeouts and latency), an invalid JSON body, a dropped connection (reset without a response), a
`finish_reason` / `stop_reason`, a wrong model id, missing usage, or any structured output content. A
`responder` callable can instead build each reply from the parsed request (answers that depend on the input).

    with LoopbackServer("openai") as srv:
        srv.queue(Reply(status=500), Reply(content={"ok": True}))
        ... base_url=srv.base_url ...
        assert srv.count == 2

Used by the provider tests, the HTTP policy matrix, `muse models check` tests and the llm benchmark.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Kind = Literal["openai", "anthropic"]

#: How the providers the tests build send (issue 17.5): the tests with a server run on the SDK and on the thin
#: client of llm/_http_direct.py — the loopback tests are the contract both transports keep. Set by the
#: `transport` fixture (conftest.py) and by test_http_policy's `kind`.
TRANSPORT = {"now": "sdk"}

_UNSET: Any = object()


@dataclass
class Reply:
    """What the server answers to one request (fields left at their defaults give a normal success).

    - `status`/`error_body`: a non-200 status with this JSON body (a provider-shaped error by default);
    - `content`: the structured output; a dict/list is sent as JSON text, a str is sent as is;
    - `finish`: `finish_reason` (openai) or `stop_reason` (anthropic); default "stop" / "end_turn";
    - `model`: the model id reported back (default: echo the requested one);
    - `usage`: False → no usage object; a dict → that usage object; True → counted from lengths;
    - `invalid_json`: the HTTP body is not JSON at all;
    - `drop`: close the connection without any response (a connection reset);
    - `delay_s`: wait before answering (timeouts, latency);
    - `body`: a complete raw body that overrides everything else (bytes or a JSON-able object).
    """

    status: int = 200
    content: Any = _UNSET
    finish: str | None = None
    model: str | None = None
    usage: bool | dict[str, Any] = True
    invalid_json: bool = False
    drop: bool = False
    delay_s: float = 0.0
    error_body: Any = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    json: Any


DEFAULT_CONTENT: dict[str, Any] = {"ok": True}


class LoopbackServer:
    """A fake model endpoint on 127.0.0.1 (see the module docstring)."""

    def __init__(
        self, kind: Kind, *, default: Reply | None = None, responder: Callable[[Any], Reply] | None = None
    ) -> None:
        self.kind: Kind = kind
        self.default = default or Reply()
        self.responder = responder  # when set, answers requests the queue does not cover, from the parsed body
        self.requests: list[Recorded] = []
        self.in_flight = 0  # requests being answered right now
        self.max_in_flight = 0  # the most requests ever answered at the same time
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- control ---------------------------------------------------------------------------------------
    def queue(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def count(self) -> int:
        """How many requests reached the server."""
        with self._lock:
            return len(self.requests)

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._replies)

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The base URL to configure: the SDKs append /chat/completions or /v1/messages to it."""
        return f"http://127.0.0.1:{self.port}" + ("/v1" if self.kind == "openai" else "")

    def start(self) -> LoopbackServer:
        handler = _make_handler(self)
        server = _Server(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------------------------------
    def _next(self, rec: Recorded) -> Reply:
        with self._lock:
            self.requests.append(rec)
            if self._replies:
                return self._replies.popleft()
        return self.responder(rec.json) if self.responder is not None else self.default

    def _wait(self, seconds: float) -> bool:
        """Sleep (interruptible by stop); True if the server is stopping."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()

    def render(self, reply: Reply, request: Any) -> tuple[int, bytes]:
        """The status and body for one reply to one parsed request."""
        if reply.body is not None:
            body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            return reply.status, body
        if reply.invalid_json:
            return reply.status, b'{"id": "chatcmpl-1", "choices": [ this is not json'
        if reply.status != 200:
            return reply.status, json.dumps(reply.error_body or self._error_body(reply.status)).encode()
        req = request if isinstance(request, dict) else {}
        model = reply.model or str(req.get("model", "unknown-model"))
        content = DEFAULT_CONTENT if reply.content is _UNSET else reply.content
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        in_tokens = max(1, len(json.dumps(req.get("messages", ""), ensure_ascii=False)) // 4)
        out_tokens = max(1, len(text) // 4)
        if self.kind == "openai":
            return 200, json.dumps(self._openai_body(reply, model, text, in_tokens, out_tokens)).encode()
        body = self._anthropic_body(reply, model, text, in_tokens, out_tokens)
        choice = req.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") == "tool":  # forced tool call: answer through the tool
            body["content"] = [
                {"type": "tool_use", "id": "toolu_loopback", "name": choice.get("name"), "input": content}
            ]
            body["stop_reason"] = reply.finish or "tool_use"
        return 200, json.dumps(body).encode()

    def _error_body(self, status: int) -> dict[str, Any]:
        kinds = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 429: "rate_limit"}
        etype = kinds.get(status, "api_error")
        if self.kind == "openai":
            return {"error": {"message": f"loopback status {status}", "type": etype, "code": None}}
        return {"type": "error", "error": {"type": etype, "message": f"loopback status {status}"}}

    @staticmethod
    def _openai_body(reply: Reply, model: str, text: str, n_in: int, n_out: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": "chatcmpl-loopback",
            "object": "chat.completion",
            "created": 1767225600,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "finish_reason": reply.finish or "stop",
                    "logprobs": None,
                }
            ],
        }
        if isinstance(reply.usage, dict):
            body["usage"] = reply.usage
        elif reply.usage:
            body["usage"] = {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}
        return body

    @staticmethod
    def _anthropic_body(reply: Reply, model: str, text: str, n_in: int, n_out: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": "msg_loopback",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": reply.finish or "end_turn",
            "stop_sequence": None,
        }
        if isinstance(reply.usage, dict):
            body["usage"] = reply.usage
        elif reply.usage:
            body["usage"] = {"input_tokens": n_in, "output_tokens": n_out}
        return body


class _Server(ThreadingHTTPServer):
    request_queue_size = 512  # many concurrent clients (the default backlog of 5 resets connections)


def _make_handler(srv: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # headers and body go out in two writes: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms per reply
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            return

        def do_GET(self) -> None:
            self._handle()

        def do_POST(self) -> None:
            self._handle()

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.command == "GET" and self.path == "/_loopback/count":  # not a model request: not counted
                body = str(srv.count).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            try:
                parsed: Any = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            rec = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw, parsed)
            reply = srv._next(rec)
            with srv._lock:
                srv.in_flight += 1
                srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
            try:
                self._answer(reply, parsed)
            finally:
                with srv._lock:
                    srv.in_flight -= 1

        def _answer(self, reply: Reply, parsed: Any) -> None:
            if srv._wait(reply.delay_s):
                return
            if reply.drop:
                self.close_connection = True
                with suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            status, body = srv.render(reply, parsed)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the client gave up (timeout) before we answered
                self.close_connection = True

    return Handler


@contextmanager
def serving(kind: Kind, *replies: Reply, default: Reply | None = None) -> Iterator[LoopbackServer]:
    """Run a loopback server for the duration of a `with` block, with replies queued."""
    srv = LoopbackServer(kind, default=default)
    srv.queue(*replies)
    with srv:
        yield srv


@contextmanager
def serving_in_subprocess(kind: Kind, *, delay_s: float = 0.0) -> Iterator[str]:
    """Run a loopback server in a separate process (answering every request with a success after `delay_s`)
    and yield its base URL: for benchmarks, where a server thread would compete with the client for the GIL.
    `GET <host>/_loopback/count` returns the number of model requests it received."""
    import subprocess
    import sys

    with subprocess.Popen([sys.executable, __file__, kind, str(delay_s)], stdout=subprocess.PIPE, text=True) as proc:
        try:  # leaving the `with` closes the stdout pipe (else: ResourceWarning, unclosed file)
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            if not line.startswith("http://127.0.0.1:"):
                raise RuntimeError(f"loopback subprocess did not start: {line!r}")
            yield line
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def _main(argv: list[str]) -> None:
    kind: Kind = "anthropic" if argv[0] == "anthropic" else "openai"
    srv = LoopbackServer(kind, default=Reply(delay_s=float(argv[1]) if len(argv) > 1 else 0.0)).start()
    print(srv.base_url, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    import sys

    _main(sys.argv[1:])
