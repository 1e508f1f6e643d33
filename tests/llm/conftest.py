"""Fixtures for the model layer: a throw-away book with a scripted provider, and a fake provider."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from novelmuse.book import Book, find_book
from novelmuse.llm import ProviderError, ProviderRequest, ProviderResponse, Usage

from .loopback import TRANSPORT


def write_book(
    root: Path,
    script: dict[str, Any] | None = None,
    *,
    model: str = "scripted-model-1",
    extra_toml: str = "",
    max_concurrency: int = 4,
    script_format: str = "yaml",
) -> Book:
    """Create a book at `root` whose every role goes to a scripted provider `s` (or none if script is None)."""
    root.mkdir(parents=True, exist_ok=True)
    toml = '[book]\ntitle = "测试"\n'
    if script is not None:
        name = "script.json" if script_format == "json" else "script.yaml"
        text = (
            json.dumps(script, ensure_ascii=False)
            if script_format == "json"
            else yaml.safe_dump(script, allow_unicode=True)
        )
        (root / name).write_text(text, encoding="utf-8")
        toml += (
            f'\n[providers.s]\nkind = "scripted"\nscript = "{name}"\nmax_concurrency = {max_concurrency}\n'
            f'\n[roles]\ndefault = "s:{model}"\n'
        )
    toml += extra_toml
    (root / "book.toml").write_text(toml, encoding="utf-8")
    return find_book(root)


@pytest.fixture
def make_book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Book]:
    """`make_book(script, **kw)` → a Book in a fresh directory (no user config leaks in)."""
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "no-user-config.toml"))
    counter = iter(range(1000))

    def make(script: dict[str, Any] | None = None, **kw: Any) -> Book:
        return write_book(tmp_path / f"book{next(counter)}", script, **kw)

    return make


class FakeProvider:
    """A provider whose behaviour is a Python callable per request: exact transport behaviours in tests."""

    kind = "fake"

    def __init__(
        self,
        name: str,
        behaviour: Callable[[ProviderRequest, int], ProviderResponse | ProviderError],
        *,
        max_concurrency: int = 4,
        delay_s: float = 0.0,
    ):
        self.name = name
        self.behaviour = behaviour
        self.max_concurrency = max_concurrency
        self.delay_s = delay_s
        self.requests: list[ProviderRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.closed = False

    async def send(self, request: ProviderRequest) -> ProviderResponse:
        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            result = self.behaviour(request, len(self.requests))
        finally:
            self.in_flight -= 1
        if isinstance(result, ProviderError):
            raise result
        return result

    async def aclose(self) -> None:
        self.closed = True


def ok_response(request: ProviderRequest, output: Any, **kw: Any) -> ProviderResponse:
    """A well-formed response carrying `output` as JSON text."""
    text = json.dumps(output, ensure_ascii=False)
    fields: dict[str, Any] = {
        "text": text,
        "raw": json.dumps({"choices": [{"text": text}]}, ensure_ascii=False).encode(),
        "resolved_model": request.model,
        "finish": "stop",
        "usage": Usage(100, 20),
    }
    fields.update(kw)
    return ProviderResponse(**fields)


@pytest.fixture(params=["sdk", "http"])
def transport(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test on both transports of the HTTP providers (see loopback.TRANSPORT)."""
    TRANSPORT["now"] = request.param
    yield request.param
    TRANSPORT["now"] = "sdk"
