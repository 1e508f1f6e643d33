"""A minimal OpenAI-compatible chat-completions server on 127.0.0.1, in its own process, for benchmarks.

It answers every POST with one fixed structured output after a fixed delay, using asyncio streams (no
threads, no dependencies), so 100 concurrent requests cost it almost nothing and it does not compete for
the benchmark process's GIL. Run as a module: ``python _loopback.py DELAY_S CONTENT_JSON``; it prints its
port on the first line of stdout and serves until its stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any


def _body(request: bytes, content: str) -> bytes:
    try:
        model = str(json.loads(request).get("model", "unknown"))
    except (ValueError, AttributeError):
        model = "unknown"
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 1767225600,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": max(1, len(request) // 4), "completion_tokens": 50, "total_tokens": 0},
        }
    ).encode()


async def _serve(delay_s: float, content: str) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                request = await reader.readexactly(length) if length else b""
                await asyncio.sleep(delay_s)
                body = _body(request, content)
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # serve until the parent closes our stdin
    server.close()


class BenchServer:
    """Start the server in a subprocess: ``with BenchServer(0.2, output) as srv: srv.base_url``."""

    def __init__(self, delay_s: float, content: Any):
        self.delay_s = delay_s
        self.content = json.dumps(content, ensure_ascii=False)
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> BenchServer:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(self.delay_s), self.content],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


if __name__ == "__main__":
    asyncio.run(_serve(float(sys.argv[1]), sys.argv[2]))
