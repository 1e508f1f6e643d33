"""The scripted provider: its file format, per-role cursors, `match`, defaults, and its errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from novelmuse.book import ScriptedProviderConfig
from novelmuse.errors import InputError
from novelmuse.llm import Message, ProviderError, ProviderRequest
from novelmuse.llm._provider_scripted import ScriptedProvider
from tests.llm.calls import task_call


def provider(tmp_path: Path, script: Any, *, raw: str | None = None, name: str = "s.yaml") -> ScriptedProvider:
    path = tmp_path / name
    path.write_text(raw if raw is not None else json.dumps(script, ensure_ascii=False), encoding="utf-8")
    return ScriptedProvider("s", ScriptedProviderConfig(kind="scripted", script=name), tmp_path)


def req(role: str, text: str = "你好", model: str = "m-1") -> ProviderRequest:
    return ProviderRequest("s", model, [Message(role="user", content=text)], "X", {}, 100, 5.0, role=role)


def send(p: ScriptedProvider, r: ProviderRequest) -> Any:
    return asyncio.run(p.send(r))


def test_per_role_order_and_default(tmp_path: Path) -> None:
    p = provider(
        tmp_path,
        {"judge": [{"output": {"n": 1}}, {"output": {"n": 2}}], "default": [{"output": {"n": "d"}}]},
    )
    assert json.loads(send(p, req("judge")).text) == {"n": 1}
    assert json.loads(send(p, req("reviewer")).text) == {"n": "d"}
    assert json.loads(send(p, req("judge")).text) == {"n": 2}
    with pytest.raises(ProviderError) as info:
        send(p, req("judge"))
    assert info.value.code == "MODEL_SCRIPT_EXHAUSTED" and not info.value.transient


def test_defaults_usage_from_characters_and_model_echo(tmp_path: Path) -> None:
    p = provider(tmp_path, {"default": [{"output": {"a": "三国"}}]})
    resp = send(p, req("x", "一二三四五", model="full-model-id"))
    assert resp.resolved_model == "full-model-id" and resp.finish == "stop" and not resp.is_error
    assert resp.usage is not None
    assert resp.usage.input_tokens == 5 and resp.usage.output_tokens == len(resp.text)
    assert json.loads(resp.raw)["text"] == resp.text


def test_overrides_model_usage_finish_is_error(tmp_path: Path) -> None:
    script = {
        "default": [
            {"output": {}, "model": "other", "usage": None, "finish": "length", "is_error": True},
            {"raw_text": "plain", "usage": {"input_tokens": 7, "output_tokens": 3, "cache_read_tokens": 2}},
            {"output": None},
        ]
    }
    p = provider(tmp_path, script)
    first = send(p, req("a"))
    assert (first.resolved_model, first.usage, first.finish, first.is_error) == ("other", None, "length", True)
    second = send(p, req("a"))
    assert second.text == "plain" and second.usage is not None
    assert (second.usage.input_tokens, second.usage.output_tokens, second.usage.cache_read_tokens) == (7, 3, 2)
    assert send(p, req("a")).text == "null"  # an explicit null output is an output


def test_errors_are_classified(tmp_path: Path) -> None:
    script = {
        "default": [
            {"error": {"code": "MODEL_TRANSIENT", "status": 503}},
            {"error": {"code": "MODEL_AUTH", "status": 401}},
            {"error": {"code": "MODEL_TIMEOUT", "cost_known": False}},
            {"error": {"code": "CUSTOM", "transient": True}},
        ]
    }
    p = provider(tmp_path, script)
    got = []
    for _ in range(4):
        with pytest.raises(ProviderError) as info:
            send(p, req("a"))
        got.append((info.value.code, info.value.transient, info.value.cost_known, info.value.status))
    assert got == [
        ("MODEL_TRANSIENT", True, True, 503),
        ("MODEL_AUTH", False, True, 401),
        ("MODEL_TIMEOUT", True, False, None),
        ("CUSTOM", True, True, None),
    ]


def test_match_serves_the_first_fitting_entry(tmp_path: Path) -> None:
    script = {
        "judge": [
            {"output": {"for": "ch3"}, "match": "第3章"},
            {"output": {"for": "any"}},
            {"output": {"for": "ch1"}, "match": "第1章"},
        ]
    }
    p = provider(tmp_path, script)
    assert json.loads(send(p, req("judge", "评第1章")).text) == {"for": "any"}  # first fitting in order
    assert json.loads(send(p, req("judge", "评第1章")).text) == {"for": "ch1"}
    assert json.loads(send(p, req("judge", "评第3章")).text) == {"for": "ch3"}
    with pytest.raises(ProviderError):
        send(p, req("judge", "评第3章"))


def test_yaml_script_with_chinese(tmp_path: Path) -> None:
    raw = "reviewer:\n  - output: {issues: [{quote: 分久必合}]}\n  - raw_text: 不是JSON\n"
    p = provider(tmp_path, None, raw=raw)
    assert json.loads(send(p, req("reviewer")).text) == {"issues": [{"quote": "分久必合"}]}
    assert send(p, req("reviewer")).text == "不是JSON"


def test_delay(tmp_path: Path) -> None:
    p = provider(tmp_path, {"default": [{"output": 1, "delay_s": 0.05}] * 4})

    async def go() -> float:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await asyncio.gather(*(p.send(req("a")) for _ in range(4)))
        return loop.time() - t0

    assert 0.05 <= asyncio.run(go()) < 0.19  # concurrent, not serial


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("[1, 2]", "map role names"),
        ("judge: {output: 1}", "must hold a list"),
        ("judge:\n  - {output: 1, raw_text: x}", "exactly one of"),
        ("judge:\n  - {}", "exactly one of"),
        ("judge:\n  - {output: 1, colour: red}", "judge entry 1"),
        ("judge:\n  - {output: 1, finish: weird}", "judge entry 1"),
        ("judge: [\n", "not valid YAML"),
    ],
)
def test_invalid_scripts_are_input_errors(tmp_path: Path, raw: str, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        provider(tmp_path, None, raw=raw)
    assert info.value.code == "SCRIPT_INVALID" and fragment in info.value.what


def test_a_yaml_syntax_error_is_one_line_with_the_line_number(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        provider(tmp_path, None, raw="judge:\n  - output: {a: 1}\n  - output: [\n")
    err = info.value
    assert err.code == "SCRIPT_INVALID" and "\n" not in err.what and "\n" not in err.where
    assert err.where.endswith(":4")  # the stream ends on line 4 (where the parser noticed)


def test_missing_script(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        ScriptedProvider("s", ScriptedProviderConfig(kind="scripted", script="nope.yaml"), tmp_path)
    assert info.value.code == "SCRIPT_READ"


def test_missing_script_surfaces_as_input_error(make_book: Any) -> None:
    """A session's call surfaces the script error as an InputError (exit 2), not a model failure."""
    from pydantic import BaseModel

    from novelmuse.llm import ModelSession

    class X(BaseModel):
        a: int

    book = make_book({"default": []})
    (book.root / "script.yaml").unlink()

    async def go() -> None:
        async with ModelSession.open(book, run_kind="t") as session:
            await session.call(task_call(role="judge", schema=X, messages=[Message(role="user", content="x")]))

    with pytest.raises(InputError) as info:
        asyncio.run(go())
    assert info.value.code == "SCRIPT_READ"
