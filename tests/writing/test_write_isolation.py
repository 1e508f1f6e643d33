"""The tool-less writer (无工具 Writer 只接收 WriterContext): what actually goes over the wire.

`muse write 11` against loopback OpenAI and Anthropic servers (the request bodies as recorded) and against the
fake Claude CLI (its argv and stdin as recorded): no tool, function, MCP or session field is ever sent, the
writer's messages are exactly the write task rendered from the WriterContext, the CLI runs with its no-tools
flags and reads the prompt from stdin only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from novelmuse.llm import _provider_cli
from novelmuse.llm._provider_cli import EMPTY_MCP_CONFIG
from novelmuse.writing import build_context

from ..llm.loopback import LoopbackServer, Reply
from ..llm.test_cli_provider import MODEL as CLI_MODEL
from ..llm.test_cli_provider import install_fake
from .write_helpers import as_json, chapter_text, detector, draft, facts, sample_book

KEY = "sk-writer-loopback-test-key-0123456789"
MODELS = {"openai": "gpt-4o-mini-2024-07-18", "anthropic": "claude-test-model-1"}
#: Request fields that would give the model a tool, a function, an MCP server or a session to lean on.
FORBIDDEN = {
    "tools",
    "tool_choice",
    "functions",
    "function_call",
    "parallel_tool_calls",
    "mcp_servers",
    "mcp",
    "session",
    "session_id",
    "conversation",
    "previous_response_id",
    "thread_id",
    "container",
}


def _schema(body: dict[str, Any]) -> dict[str, Any]:
    if "response_format" in body:
        return dict(body["response_format"]["json_schema"]["schema"])
    return dict(body["output_config"]["format"]["schema"])


def _answer(body: dict[str, Any]) -> Reply:
    props = _schema(body)["properties"]
    if "verdicts" in props:
        return Reply(content=detector()["output"])
    if "events" in props:
        return Reply(content=facts()["output"])
    return Reply(content=draft(requests=[] if "evidence_requests" in props else None)["output"])


def _keys(node: Any, out: set[str]) -> set[str]:
    """Every key of the body outside the output schema itself (whose properties are the answer's fields)."""
    if isinstance(node, dict):
        for k, v in node.items():
            out.add(k)
            if k not in ("schema", "json_schema"):
                _keys(v, out)
    elif isinstance(node, list):
        for v in node:
            _keys(v, out)
    return out


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_no_tool_function_mcp_or_session_field_is_ever_sent(
    tmp_path: Path, muse: Any, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setenv("MUSE_TEST_WRITER_KEY", KEY)
    model = MODELS[kind]
    with LoopbackServer(kind, responder=_answer) as srv:  # type: ignore[arg-type]
        toml = (
            f'\n[providers.p]\nkind = "{kind}"\nbase_url = "{srv.base_url}"\napi_key_env = "MUSE_TEST_WRITER_KEY"\n'
            f'timeout_s = 20\n\n[roles]\ndefault = "p:{model}"\n'
        )
        book = sample_book(tmp_path / "b", None)
        with (book.root / "book.toml").open("a", encoding="utf-8") as fh:
            fh.write(toml)
        r = muse("write", "11", "--arm", "C", "--json", "--yes", "--book", book.root)
        assert r.exit_code == 0, r.stderr
        bodies = [rec.json for rec in srv.requests]
    assert as_json(r.stdout)["status"] == "passed" and len(bodies) == 3
    for body in bodies:
        assert not _keys(body, set()) & FORBIDDEN, sorted(_keys(body, set()) & FORBIDDEN)
        messages = body["messages"]
        assert all(m["role"] in ("system", "user") and isinstance(m["content"], str) for m in messages)
    writer = next(b for b in bodies if "text" in _schema(b)["properties"])
    expected = build_context(book, 11).rendered.messages  # the write task, a pure function of the WriterContext
    if kind == "openai":
        sent = [(m["role"], m["content"]) for m in writer["messages"]]
    else:
        sent = [("system", writer["system"])] + [(m["role"], m["content"]) for m in writer["messages"]]
    assert sent == [(m.role, m.content) for m in expected]
    assert KEY not in r.stdout and KEY not in r.stderr


def test_a_tool_mode_provider_is_refused_for_the_writer(tmp_path: Path, muse: Any) -> None:
    book = sample_book(tmp_path / "b", None)
    with (book.root / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write(
            '\n[providers.p]\nkind = "anthropic"\nbase_url = "http://127.0.0.1:9"\nstructured = "tool"\n'
            '\n[roles]\ndefault = "p:claude-test-model-1"\n'
        )
    r = muse("write", "11", "--arm", "C", "--yes", "--book", book.root)
    assert r.exit_code == 2 and "error[WRITER_TOOLS_FORBIDDEN]" in r.stderr


def test_the_claude_cli_writer_runs_without_tools_sessions_or_mcp(
    tmp_path: Path, muse: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_provider_cli, "find_sandbox", lambda platform, path_env: ("none", None))
    monkeypatch.setenv("MUSE_TEST_CLI_KEY", "sk-test-key-for-the-fake")
    fake = install_fake(tmp_path / "bin")
    fake.control(responses=[{"output": draft(requests=[])["output"]}])
    script = {"detector": [detector()], "extractor": [facts()]}
    cli = (
        f'\n[providers.cli]\nkind = "claude-cli"\npath = "{fake.path}"\n'
        f'sha256 = "{hashlib.sha256(fake.path.read_bytes()).hexdigest()}"\nversion = "2.1.211"\n'
        'api_key_env = "MUSE_TEST_CLI_KEY"\nallow_unsandboxed = true\n'  # as on a machine without a sandbox
    )
    roles = f'writer = "cli:{CLI_MODEL}"\ndetector = "s:scripted-model-1"\nextractor = "s:scripted-model-1"\n'
    book = sample_book(tmp_path / "b", script, roles=roles, providers=cli)
    r = muse("write", "11", "--arm", "C", "--json", "--yes", "--book", book.root)
    assert r.exit_code == 0, r.stderr
    (record,) = fake.records()
    argv = record["argv"]
    pairs = {(argv[i], argv[i + 1]) for i in range(len(argv) - 1)}
    assert (
        ("--tools", "") in pairs and ("--mcp-config", EMPTY_MCP_CONFIG) in pairs and ("--setting-sources", "") in pairs
    )
    assert {"--print", "--bare", "--strict-mcp-config", "--no-session-persistence", "--disable-slash-commands"} <= set(
        argv
    )
    assert EMPTY_MCP_CONFIG == '{"mcpServers":{}}'
    title = "刘皇叔北海救孔融"
    assert not any(title in a for a in argv) and title in record["stdin"]  # the prompt goes through stdin only
    assert chapter_text(11)[:20] not in " ".join(argv)
