"""The claude-cli provider against a fake `claude` executable: pin checks, isolation, every result branch."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import stat
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from novelmuse.book import Book, ClaudeCliProviderConfig, find_book
from novelmuse.llm import Message, ModelCallFailed, ModelSession, StructuredResult, Violation, _provider_cli
from novelmuse.llm._provider_cli import (
    EMPTY_MCP_CONFIG,
    FIXED_ENV,
    ClaudeCliProvider,
    build_cli_argv,
    parse_cli_result,
    render_transcript,
)
from novelmuse.llm._sandbox import (
    LINUX_READ_PATHS,
    bwrap_argv,
    find_sandbox,
    sandbox_exec_argv,
    sandbox_exec_profile,
    wrap_command,
)
from novelmuse.llm._types import ProviderError, ProviderRequest
from tests.llm.calls import task_call

FAKE_SOURCE = Path(__file__).with_name("fake_claude.py")
MODEL = "claude-sonnet-4-5-20250929"
PROMPT_MARKER = "PROMPT-MARKER-只在标准输入里-7f3a"


@dataclass
class FakeCli:
    """An installed fake `claude`: its path, sha256, control file and the records of its runs."""

    dir: Path
    path: Path
    sha256: str
    record_dir: Path

    def control(self, *, version: str = "2.1.211 (Claude Code)", responses: list[dict[str, Any]] | None = None) -> None:
        doc = {"version": version, "record_dir": str(self.record_dir), "responses": responses or [{}]}
        (self.dir / "control.json").write_text(json.dumps(doc), encoding="utf-8")

    def records(self) -> list[dict[str, Any]]:
        files = sorted(self.record_dir.glob("call-*.json"), key=lambda p: int(p.stem.split("-")[1]))
        return [json.loads(p.read_text(encoding="utf-8")) for p in files]

    def runs(self) -> int:
        counter = self.dir / "calls.count"
        return int(counter.read_text()) if counter.exists() else 0

    def config(self, **overrides: Any) -> ClaudeCliProviderConfig:
        fields: dict[str, Any] = {
            "kind": "claude-cli",
            "path": str(self.path),
            "sha256": self.sha256,
            "version": "2.1.211",
            "api_key_env": "MUSE_TEST_CLI_KEY",
            "timeout_s": 30,
            "allow_unsandboxed": True,  # these tests run as on a machine without a sandbox (see `no_sandbox`)
        }
        fields.update(overrides)
        return ClaudeCliProviderConfig.model_validate(fields)


def install_fake(directory: Path) -> FakeCli:
    """Copy the fake into `directory` as an executable `claude` whose #! line is this Python."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "claude"
    path.write_text(f"#!{sys.executable} -I\n" + FAKE_SOURCE.read_text(encoding="utf-8"), encoding="utf-8")
    path.chmod(0o755)
    record_dir = directory / "records"
    record_dir.mkdir()
    real = Path(os.path.realpath(path))
    fake = FakeCli(real.parent, real, hashlib.sha256(real.read_bytes()).hexdigest(), record_dir)
    fake.control()
    return fake


@pytest.fixture
def fake(tmp_path: Path) -> FakeCli:
    return install_fake(tmp_path / "bin")


@pytest.fixture(autouse=True)
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behave as on a machine without bwrap/sandbox-exec (the boundary's argv is tested separately)."""
    monkeypatch.setattr(_provider_cli, "find_sandbox", lambda platform, path_env: ("none", None))
    monkeypatch.setenv("MUSE_TEST_CLI_KEY", "sk-test-key-for-the-fake")


def request(*, timeout_s: float = 30.0, messages: list[Message] | None = None) -> ProviderRequest:
    return ProviderRequest(
        provider="cli",
        model=MODEL,
        messages=messages
        or [
            Message(role="system", content="你是一个严格的编辑。"),
            Message(role="user", content=f"请检查这一段。{PROMPT_MARKER}"),
        ],
        schema_name="Verdict",
        json_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
        max_output_tokens=512,
        timeout_s=timeout_s,
    )


def send(fake: FakeCli, req: ProviderRequest | None = None, **config: Any) -> Any:
    provider = ClaudeCliProvider("cli", fake.config(**config), fake.dir)
    return asyncio.run(provider.send(req or request()))


def send_error(fake: FakeCli, req: ProviderRequest | None = None, **config: Any) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        send(fake, req, **config)
    return info.value


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie left for a non-reaping init counts as dead)."""
    stat_file = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            state = stat_file.read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# ── success and what the process saw ────────────────────────────────────────────────────────────


def test_success_returns_structured_output_and_verified_fields(fake: FakeCli) -> None:
    fake.control(responses=[{"output": {"ok": True, "note": "好"}}])
    resp = send(fake)
    assert json.loads(resp.text) == {"ok": True, "note": "好"}
    assert resp.resolved_model == MODEL
    assert resp.finish == "stop"
    assert resp.is_error is False
    assert resp.usage is not None and (resp.usage.input_tokens, resp.usage.output_tokens) == (120, 30)
    assert resp.sandbox == "none"
    assert resp.extra["exit_code"] == 0 and resp.extra["structured_output"] is True
    assert json.loads(resp.raw)["type"] == "result"
    assert fake.runs() == 1


def test_argv_is_exactly_the_documented_one_and_the_prompt_goes_through_stdin_only(fake: FakeCli) -> None:
    cfg = fake.config(effort="high", max_budget_usd=0.5)
    req = request()
    asyncio.run(ClaudeCliProvider("cli", cfg, fake.dir).send(req))
    (rec,) = fake.records()
    assert rec["argv"] == build_cli_argv(str(fake.path), req, cfg)[1:]
    argv = rec["argv"]
    assert argv[:4] == ["--print", "--bare", "--output-format", "json"]
    assert argv[argv.index("--model") + 1] == MODEL
    assert argv[argv.index("--mcp-config") + 1] == EMPTY_MCP_CONFIG == '{"mcpServers":{}}'
    assert "--strict-mcp-config" in argv and "--no-session-persistence" in argv and "--disable-slash-commands" in argv
    assert argv[argv.index("--tools") + 1] == ""
    assert argv[argv.index("--setting-sources") + 1] == ""
    assert json.loads(argv[argv.index("--json-schema") + 1]) == req.json_schema
    assert argv[argv.index("--effort") + 1] == "high"
    assert argv[argv.index("--max-budget-usd") + 1] == "0.5"
    assert argv[argv.index("--max-turns") + 1] == "3"
    # the prompt (every message) is on stdin and nowhere in argv
    assert all(PROMPT_MARKER not in a and "严格的编辑" not in a for a in argv)
    assert rec["stdin"] == render_transcript(req.messages)
    assert PROMPT_MARKER in rec["stdin"] and "### SYSTEM\n你是一个严格的编辑。" in rec["stdin"]


def test_environment_is_a_whitelist_and_an_inherited_secret_never_reaches_the_process(
    fake: FakeCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_LEAK_TEST", "do-not-leak-4411")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-not-the-configured-one")
    monkeypatch.setenv("MUSE_TEST_CLI_KEY", "sk-configured-key-value")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    send(fake)
    (rec,) = fake.records()
    env = rec["env"]
    assert "SECRET_LEAK_TEST" not in env
    assert "do-not-leak-4411" not in json.dumps(env)
    # the key comes from the configured variable and reaches the CLI as the one name --bare reads;
    # the parent's own ANTHROPIC_API_KEY and the configured variable's name do not pass through
    assert env["ANTHROPIC_API_KEY"] == "sk-configured-key-value"
    assert "sk-not-the-configured-one" not in json.dumps(env)
    assert "MUSE_TEST_CLI_KEY" not in env
    assert env["LC_ALL"] == "C.UTF-8"
    assert env["PATH"] == os.environ["PATH"]
    for key, value in FIXED_ENV.items():
        assert env[key] == value
    allowed = {"PATH", "LANG", "LANGUAGE", "HOME", "TMPDIR", "ANTHROPIC_API_KEY", *FIXED_ENV}
    # the interpreter may add a few of its own (e.g. LC_CTYPE coercion); nothing else is inherited
    extra = {k for k in env if k not in allowed and not k.startswith("LC_")}
    assert extra <= {"PYTHONCOERCECLOCALE"}, extra


def test_cwd_home_and_tmpdir_live_in_a_private_0700_directory_removed_afterwards(fake: FakeCli) -> None:
    send(fake)
    (rec,) = fake.records()
    cwd, home, tmp = Path(rec["cwd"]), Path(rec["home"]), Path(rec["tmpdir"])
    root = cwd.parent
    assert home.parent == root and tmp.parent == root and len({cwd, home, tmp}) == 3
    assert root.name.startswith("muse-claude-")
    assert rec["modes"] == {"cwd": "0o700", "home": "0o700", "tmpdir": "0o700", "parent": "0o700"}
    assert not root.exists()
    assert rec["pgid"] == rec["pid"] == rec["sid"]  # its own session and process group


def test_every_attempt_is_a_fresh_process_in_a_fresh_directory(fake: FakeCli) -> None:
    provider = ClaudeCliProvider("cli", fake.config(), fake.dir)

    async def twice() -> None:
        await provider.send(request())
        await provider.send(request())

    asyncio.run(twice())
    a, b = fake.records()
    assert a["pid"] != b["pid"]
    assert a["cwd"] != b["cwd"]


def test_concurrent_attempts_each_get_their_own_process_and_directory(fake: FakeCli) -> None:
    provider = ClaudeCliProvider("cli", fake.config(), fake.dir)

    async def many() -> list[Any]:
        return await asyncio.gather(*(provider.send(request()) for _ in range(6)))

    responses = asyncio.run(many())
    assert all(json.loads(r.text) == {"ok": True} for r in responses)
    records = fake.records()
    assert len({r["pid"] for r in records}) == len({r["cwd"] for r in records}) == 6
    assert not any(Path(r["cwd"]).parent.exists() for r in records)


# ── the pin: path, sha256, version ──────────────────────────────────────────────────────────────


def test_wrong_sha256_refuses_before_anything_runs(fake: FakeCli) -> None:
    err = send_error(fake, sha256="0" * 64)
    assert err.code == "MODEL_CLI_PIN_MISMATCH"
    assert not err.transient
    assert fake.runs() == 0


def test_a_changed_executable_no_longer_matches_its_pin(fake: FakeCli) -> None:
    cfg = fake.config()
    with fake.path.open("a", encoding="utf-8") as fh:
        fh.write("\n# tampered\n")
    with pytest.raises(ProviderError) as info:
        asyncio.run(ClaudeCliProvider("cli", cfg, fake.dir).send(request()))
    assert info.value.code == "MODEL_CLI_PIN_MISMATCH"
    assert fake.runs() == 0


def test_wrong_version_refuses(fake: FakeCli) -> None:
    fake.control(version="2.1.999 (Claude Code)")
    err = send_error(fake)
    assert err.code == "MODEL_CLI_PIN_MISMATCH"
    assert "2.1.999" in str(err)
    assert fake.runs() == 0


def test_unset_key_variable_refuses_before_anything_runs(fake: FakeCli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MUSE_TEST_CLI_KEY")
    err = send_error(fake)
    assert err.code == "MODEL_KEY_MISSING" and "MUSE_TEST_CLI_KEY" in str(err)
    assert fake.runs() == 0
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-parent")  # no key configured: nothing is required or passed
    send(fake, api_key_env=None)
    (rec,) = fake.records()
    assert "ANTHROPIC_API_KEY" not in rec["env"]


def test_relative_path_refuses(fake: FakeCli) -> None:
    assert send_error(fake, path="bin/claude").code == "MODEL_CLI_PIN_MISMATCH"


def test_a_symlinked_path_refuses_and_names_the_real_file(fake: FakeCli, tmp_path: Path) -> None:
    link = tmp_path / "claude-link"
    link.symlink_to(fake.path)
    err = send_error(fake, path=str(link))
    assert err.code == "MODEL_CLI_PIN_MISMATCH"
    assert str(fake.path) in str(err)
    assert fake.runs() == 0


def test_missing_and_non_executable_files_refuse(fake: FakeCli, tmp_path: Path) -> None:
    assert send_error(fake, path=str(tmp_path / "nope")).code == "MODEL_CLI_PIN_MISMATCH"
    fake.path.chmod(0o644)
    assert send_error(fake).code == "MODEL_CLI_PIN_MISMATCH"


# ── every failure branch ────────────────────────────────────────────────────────────────────────


def test_non_zero_exit_is_model_cli_exit_with_unknown_cost(fake: FakeCli) -> None:
    fake.control(responses=[{"mode": "exit", "exit_code": 7}])
    err = send_error(fake)
    assert err.code == "MODEL_CLI_EXIT"
    assert "7" in str(err)
    assert err.cost_known is False and err.transient is False


def test_error_flag_is_reported_for_the_policy(fake: FakeCli) -> None:
    fake.control(responses=[{"mode": "error_flag"}])
    resp = send(fake)
    assert resp.is_error is True
    assert resp.finish == "error"
    assert resp.text is None


def test_wrong_model_is_reported_as_the_resolved_model(fake: FakeCli) -> None:
    fake.control(responses=[{"model": "claude-haiku-4-5-20251001"}])
    resp = send(fake)
    assert resp.resolved_model == "claude-haiku-4-5-20251001" != MODEL


def test_missing_usage_is_none(fake: FakeCli) -> None:
    fake.control(responses=[{"usage": False}])
    assert send(fake).usage is None
    fake.control(responses=[{"usage": {"input_tokens": 5}}])  # output tokens missing
    assert send(fake).usage is None


def test_invalid_json_is_model_output_not_json(fake: FakeCli) -> None:
    fake.control(responses=[{"mode": "not_json"}])
    err = send_error(fake)
    assert err.code == "MODEL_OUTPUT_NOT_JSON"
    assert err.cost_known is False
    assert err.raw == b"this is not json {"


def test_missing_structured_output_is_no_text(fake: FakeCli) -> None:
    fake.control(responses=[{"mode": "no_structured"}])
    resp = send(fake)
    assert resp.text is None
    assert resp.extra["structured_output"] is False


def test_truncated_and_abnormal_terminal_reasons_are_not_a_normal_finish(fake: FakeCli) -> None:
    fake.control(responses=[{"stop_reason": "max_tokens"}])
    assert send(fake).finish == "length"
    fake.control(responses=[{"subtype": "error_max_turns"}])
    assert send(fake).finish == "other"


def test_timeout_kills_the_whole_process_group_and_removes_the_directory(fake: FakeCli, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    fake.control(responses=[{"mode": "sleep", "sleep_s": 600, "child_pid_file": str(pid_file)}])
    started = time.monotonic()
    err = send_error(fake, request(timeout_s=3.0))  # long enough for the fake to start its child under load
    elapsed = time.monotonic() - started
    assert err.code == "MODEL_TIMEOUT"
    assert err.transient is True and err.cost_known is False  # unknown cost: the policy does not retry
    assert elapsed < 15
    (rec,) = fake.records()
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (_alive(child) or _alive(rec["pid"])):
        time.sleep(0.05)
    assert not _alive(rec["pid"]), "the CLI process survived its timeout"
    assert not _alive(child), "a child in the CLI's process group survived the timeout"
    assert not Path(rec["cwd"]).parent.exists()


def test_cancellation_also_kills_the_group_and_cleans_up(fake: FakeCli, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    fake.control(responses=[{"mode": "sleep", "sleep_s": 600, "child_pid_file": str(pid_file)}])
    provider = ClaudeCliProvider("cli", fake.config(), fake.dir)

    async def cancel_midway() -> None:
        task = asyncio.create_task(provider.send(request()))
        for _ in range(200):
            if pid_file.exists() and pid_file.read_text():
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    (rec,) = fake.records()
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)
    assert not Path(rec["cwd"]).parent.exists()


def test_a_flood_of_output_is_cut_off_and_fails_closed(
    fake: FakeCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_provider_cli, "MAX_STDOUT_BYTES", 1 << 20)
    fake.control(responses=[{"mode": "flood", "blocks": 4096}])  # 256 MiB if nobody stopped it
    started = time.monotonic()
    err = send_error(fake)
    assert err.code == "MODEL_OUTPUT_TOO_LARGE" and err.cost_known is False
    assert time.monotonic() - started < 15
    (rec,) = fake.records()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(rec["pid"]):
        time.sleep(0.05)
    assert not _alive(rec["pid"])
    assert not Path(rec["cwd"]).parent.exists()


def test_a_cli_that_never_reads_a_large_prompt_does_not_deadlock(fake: FakeCli) -> None:
    doc = json.loads((fake.dir / "control.json").read_text())
    (fake.dir / "control.json").write_text(json.dumps({**doc, "skip_stdin": True}), encoding="utf-8")
    big = [Message(role="user", content="话" * 400_000)]  # 1.2 MB, far beyond a pipe buffer
    resp = send(fake, request(messages=big))
    assert json.loads(resp.text) == {"ok": True}
    assert resp.extra["stderr_bytes"] == 0


# ── the sandbox ─────────────────────────────────────────────────────────────────────────────────


def test_without_a_sandbox_the_cli_is_refused_unless_the_book_allows_it(
    fake: FakeCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Isolation fails closed: where no sandbox exists (no bwrap, no sandbox-exec) nothing runs, naming the way out;
    `allow_unsandboxed = true` runs it unconfined, and the receipt says sandbox none."""
    monkeypatch.setattr(_provider_cli, "find_sandbox", lambda platform, path_env: ("none", None))
    assert ClaudeCliProviderConfig.model_fields["allow_unsandboxed"].default is False
    err = send_error(fake, allow_unsandboxed=False)
    assert err.code == "MODEL_SANDBOX_UNAVAILABLE" and "allow_unsandboxed = true" in str(err)
    assert err.sandbox == "none" and fake.runs() == 0
    assert send(fake, allow_unsandboxed=True).sandbox == "none" and fake.runs() == 1
    assert send_error(fake, allow_unsandboxed=True, require_sandbox=True).code == "MODEL_SANDBOX_UNAVAILABLE"


def test_an_unusable_bwrap_counts_as_no_sandbox(fake: FakeCli, monkeypatch: pytest.MonkeyPatch) -> None:
    """bubblewrap installed but unusable (user namespaces disabled) refuses the run, naming why; nothing is run."""
    monkeypatch.setattr(_provider_cli, "find_sandbox", lambda platform, path_env: ("bwrap", "/nonexistent/bwrap"))
    err = send_error(fake, allow_unsandboxed=False)
    assert err.code == "MODEL_SANDBOX_UNAVAILABLE" and "unusable" in str(err)
    assert err.sandbox == "none" and fake.runs() == 0
    assert send(fake, allow_unsandboxed=True).sandbox == "none"  # said so, and only when the book allows it


def test_find_sandbox_by_platform() -> None:
    def which_all(name: str, path: str | None = None) -> str | None:
        return f"/usr/bin/{name}"

    def which_none(name: str, path: str | None = None) -> str | None:
        return None

    assert find_sandbox("linux", "/usr/bin", which_all) == ("bwrap", "/usr/bin/bwrap")
    assert find_sandbox("linux", "/usr/bin", which_none) == ("none", None)
    assert find_sandbox("darwin", "/usr/bin", which_all) == ("sandbox-exec", "/usr/bin/sandbox-exec")
    assert find_sandbox("win32", None, which_all) == ("none", None)


def test_bwrap_argv_exposes_only_the_runtime_and_the_work_directory() -> None:
    work, cwd = Path("/tmp/muse-claude-x"), Path("/tmp/muse-claude-x/work")
    argv = bwrap_argv(
        "/usr/bin/bwrap", workdir=work, cwd=cwd, read_only=[Path("/opt/claude")], command=["/opt/claude/claude", "-p"]
    )
    assert argv[0] == "/usr/bin/bwrap"
    assert {"--unshare-all", "--share-net", "--die-with-parent", "--new-session"} <= set(argv)
    sep = argv.index("--")
    assert argv[sep + 1 :] == ["/opt/claude/claude", "-p"]
    binds = [tuple(argv[i : i + 3]) for i, a in enumerate(argv[:sep]) if a in ("--bind", "--ro-bind", "--ro-bind-try")]
    writable = [b for b in binds if b[0] == "--bind"]
    assert writable == [("--bind", str(work), str(work))]  # the one writable place
    assert ("--ro-bind", "/opt/claude", "/opt/claude") in binds
    ro = {b[1] for b in binds if b[0] == "--ro-bind-try"}
    assert ro == set(LINUX_READ_PATHS)
    assert "/home" not in ro and "/root" not in ro and "/" not in ro and "/tmp" not in ro
    assert argv[argv.index("--chdir") + 1] == str(cwd)


def test_sandbox_exec_profile_denies_by_default_and_writes_only_the_work_directory() -> None:
    work = Path('/private/var/folders/x/muse-claude-"q"')
    profile = sandbox_exec_profile(workdir=work, read_only=[Path("/opt/claude")])
    lines = profile.splitlines()
    assert lines[:2] == ["(version 1)", "(deny default)"]
    writes = [ln for ln in lines if "file-write" in ln]
    assert writes[0] == '(allow file-read* file-write* (subpath "/private/var/folders/x/muse-claude-\\"q\\""))'
    assert all("/Users" not in ln for ln in lines)
    assert '(subpath "/opt/claude")' in profile
    argv = sandbox_exec_argv("/usr/bin/sandbox-exec", workdir=work, read_only=[], command=["/c", "--version"])
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[-2:] == ["/c", "--version"]


def test_wrap_command_none_is_the_plain_command() -> None:
    cmd = ["/x/claude", "--version"]
    assert wrap_command("none", None, workdir=Path("/w"), cwd=Path("/w/c"), read_only=[], command=cmd) == cmd
    with pytest.raises(ValueError):
        wrap_command("bwrap", None, workdir=Path("/w"), cwd=Path("/w/c"), read_only=[], command=cmd)


# ── the result parser against a naive oracle ────────────────────────────────────────────────────


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_docs = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["result", "result", "assistant"]),
        "subtype": st.sampled_from(["success", "error_max_turns", "error_during_execution"]),
        "is_error": st.sampled_from([True, False, None, 0, "false"]),
        "stop_reason": st.sampled_from(["end_turn", "max_tokens", "refusal", "tool_use", None, "pause_turn"]),
        "usage": st.fixed_dictionaries(
            {},
            optional={
                "input_tokens": st.sampled_from([0, 12, -1, True, "3", None]),
                "output_tokens": st.sampled_from([0, 7, -2, False, 1.5]),
            },
        ),
        "modelUsage": st.dictionaries(st.sampled_from([MODEL, "claude-haiku-4-5"]), st.just({}), max_size=2),
        "structured_output": _json_values,
    },
)


def _oracle_success(doc: dict[str, Any]) -> bool:
    """A plain restatement of the success rule, for comparison with the parser's fields."""
    usage = doc.get("usage") or {}

    def good(v: Any) -> bool:
        return type(v) is int and v >= 0

    return (
        doc.get("type") == "result"
        and doc.get("is_error") is False
        and doc.get("subtype") == "success"
        and doc.get("stop_reason") in ("end_turn", "stop_sequence", "tool_use")
        and list(doc.get("modelUsage") or {}) == [MODEL]
        and good(usage.get("input_tokens"))
        and good(usage.get("output_tokens"))
        and doc.get("structured_output") is not None
    )


@settings(max_examples=300, deadline=None)
@given(_docs)
def test_parser_agrees_with_the_success_oracle(doc: dict[str, Any]) -> None:
    raw = json.dumps(doc).encode()
    if doc.get("type") != "result":
        with pytest.raises(ProviderError) as info:
            parse_cli_result(raw, sandbox="none")
        assert info.value.code == "MODEL_OUTPUT_NOT_JSON"
        return
    resp = parse_cli_result(raw, sandbox="none")
    ok = (
        resp.is_error is False
        and resp.finish == "stop"
        and resp.resolved_model == MODEL
        and resp.usage is not None
        and resp.text is not None
    )
    assert ok == _oracle_success(doc)
    if resp.text is not None:
        assert json.loads(resp.text) == doc["structured_output"]


def test_a_verbose_message_array_needs_exactly_one_result() -> None:
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 4},
        "modelUsage": {MODEL: {}},
        "structured_output": {"ok": True},
    }
    init = {"type": "system", "subtype": "init", "model": MODEL}
    resp = parse_cli_result(json.dumps([init, result]).encode(), sandbox="none")
    assert json.loads(resp.text or "") == {"ok": True} and resp.finish == "stop"
    for doc in ([init], [init, result, result], {"subtype": "success"}):
        with pytest.raises(ProviderError) as info:
            parse_cli_result(json.dumps(doc).encode(), sandbox="none")
        assert info.value.code == "MODEL_OUTPUT_NOT_JSON"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_parser_never_crashes_on_arbitrary_bytes(data: bytes) -> None:
    try:
        parse_cli_result(data, sandbox="none")
    except ProviderError as exc:
        assert exc.code == "MODEL_OUTPUT_NOT_JSON"


def test_fake_is_installed_executable(fake: FakeCli) -> None:
    mode = stat.S_IMODE(fake.path.stat().st_mode)
    assert mode & 0o111
    assert fake.path.read_text().startswith(f"#!{sys.executable}")
    assert shutil.which("claude", path=str(fake.dir)) == str(fake.path)


# ── end to end: a book whose role runs on the pinned fake CLI, through ModelSession ─────────────


class Verdict(BaseModel):
    ok: bool
    note: str


def needs_note(v: Verdict) -> list[Violation]:
    return [] if v.note else [Violation("CONTRACT_NOTE_EMPTY", "note must say why")]


def cli_book(fake: FakeCli, root: Path, **config: Any) -> Book:
    """A book whose every role goes to the fake CLI, pinned by its real sha256 (computed here)."""
    root.mkdir(parents=True, exist_ok=True)
    lines = [
        "[providers.cli]",
        'kind = "claude-cli"',
        f'path = "{fake.path}"',
        f'sha256 = "{hashlib.sha256(fake.path.read_bytes()).hexdigest()}"',
        'version = "2.1.211"',
        'api_key_env = "MUSE_TEST_CLI_KEY"',
        *(f"{k} = {json.dumps(v)}" for k, v in {"allow_unsandboxed": True, **config}.items()),
        "",
        "[roles]",
        f'default = "cli:{MODEL}"',
    ]
    (root / "book.toml").write_text('[book]\ntitle = "测试"\n\n' + "\n".join(lines) + "\n", encoding="utf-8")
    return find_book(root)


def call_verdict(book: Book) -> tuple[StructuredResult[Verdict] | ModelCallFailed, str]:
    async def go() -> tuple[StructuredResult[Verdict] | ModelCallFailed, str]:
        async with ModelSession.open(book, run_kind="test") as session:
            try:
                result: StructuredResult[Verdict] | ModelCallFailed = await session.call(
                    task_call(
                        role="reviewer",
                        schema=Verdict,
                        messages=[
                            Message(role="system", content="审稿。"),
                            Message(role="user", content=PROMPT_MARKER),
                        ],
                        contracts=[needs_note],
                        prompt_sha256="a" * 64,
                    )
                )
            except ModelCallFailed as exc:
                result = exc
            return result, session.run_id

    return asyncio.run(go())


def receipt_rows(book: Book) -> list[sqlite3.Row]:
    conn = sqlite3.connect(book.db_path)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM receipts ORDER BY call_id, attempt").fetchall()
    finally:
        conn.close()


@pytest.fixture
def isolated_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "no-user-config.toml"))


@pytest.mark.usefixtures("isolated_user_config")
def test_end_to_end_structured_call_through_the_pinned_cli(fake: FakeCli, tmp_path: Path) -> None:
    fake.control(responses=[{"output": {"ok": True, "note": "无矛盾"}}])
    book = cli_book(fake, tmp_path / "book")
    result, _ = call_verdict(book)
    assert isinstance(result, StructuredResult)
    assert result.value == Verdict(ok=True, note="无矛盾")
    (row,) = receipt_rows(book)
    assert row["provider_kind"] == "claude-cli"
    assert row["sandbox"] == "none"
    assert row["outcome"] == "ok"
    assert row["requested_model"] == row["resolved_model"] == MODEL
    assert (row["input_tokens"], row["output_tokens"]) == (120, 30)


@pytest.mark.usefixtures("isolated_user_config")
def test_every_receipt_records_the_sandbox_failed_attempts_too(fake: FakeCli, tmp_path: Path) -> None:
    """Where no sandbox exists the run says so in every receipt — a failed attempt's as well as an accepted one."""
    fake.control(responses=[{"mode": "exit", "exit_code": 2}])
    book = cli_book(fake, tmp_path / "book")
    result, _ = call_verdict(book)
    assert isinstance(result, ModelCallFailed) and result.code == "MODEL_CLI_EXIT"
    assert [(r["outcome"], r["error_code"], r["sandbox"]) for r in receipt_rows(book)] == [
        ("failed", "MODEL_CLI_EXIT", "none")
    ]


@pytest.mark.usefixtures("isolated_user_config")
def test_end_to_end_contract_correction_goes_through_stdin_as_a_second_fresh_process(
    fake: FakeCli, tmp_path: Path
) -> None:
    fake.control(responses=[{"output": {"ok": True, "note": ""}}, {"output": {"ok": True, "note": "改好了"}}])
    book = cli_book(fake, tmp_path / "book")
    result, _ = call_verdict(book)
    assert isinstance(result, StructuredResult)
    assert result.value.note == "改好了"
    rows = receipt_rows(book)
    assert [(r["attempt"], r["outcome"], r["error_code"]) for r in rows] == [
        (1, "failed", "CONTRACT_NOTE_EMPTY"),
        (2, "ok", None),
    ]
    first, second = fake.records()
    assert first["pid"] != second["pid"]
    assert "### ASSISTANT" in second["stdin"] and "CONTRACT_NOTE_EMPTY" in second["stdin"]
    assert all("CONTRACT_NOTE_EMPTY" not in a for a in second["argv"])


@pytest.mark.usefixtures("isolated_user_config")
@pytest.mark.parametrize(
    ("response", "code"),
    [
        ({"model": "claude-haiku-4-5-20251001"}, "MODEL_MISMATCH"),
        ({"usage": False}, "MODEL_USAGE_MISSING"),
        ({"mode": "error_flag"}, "MODEL_ERROR_FLAG"),
        ({"mode": "exit", "exit_code": 2}, "MODEL_CLI_EXIT"),
        ({"mode": "not_json"}, "MODEL_OUTPUT_NOT_JSON"),
    ],
)
def test_end_to_end_failures_are_never_retried(
    fake: FakeCli, tmp_path: Path, response: dict[str, Any], code: str
) -> None:
    fake.control(responses=[response, {"output": {"ok": True, "note": "不该被用到"}}])
    book = cli_book(fake, tmp_path / "book")
    result, _ = call_verdict(book)
    assert isinstance(result, ModelCallFailed)
    assert result.code == code
    assert fake.runs() == 1
    (row,) = receipt_rows(book)
    assert row["error_code"] == code and row["provider_kind"] == "claude-cli"


@pytest.mark.usefixtures("isolated_user_config")
def test_end_to_end_pin_mismatch_fails_closed_without_running(fake: FakeCli, tmp_path: Path) -> None:
    book = cli_book(fake, tmp_path / "book")
    fake.control(version="2.0.0 (Claude Code)")
    result, _ = call_verdict(book)
    assert isinstance(result, ModelCallFailed)
    assert result.code == "MODEL_CLI_PIN_MISMATCH"
    assert result.exit_code == 3
    assert "'2.0.0'" in result.what and "'2.1.211'" in result.what  # the user learns which part of the pin differs
    assert fake.runs() == 0
    assert [r["error_code"] for r in receipt_rows(book)] == ["MODEL_CLI_PIN_MISMATCH"]


@pytest.mark.usefixtures("isolated_user_config")
def test_end_to_end_key_never_reaches_database_vault_or_output(
    fake: FakeCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "sk-ant-secret-value-93c1f"
    monkeypatch.setenv("MUSE_TEST_CLI_KEY", secret)
    fake.control(responses=[{"output": {"ok": False, "note": "有问题"}}])
    book = cli_book(fake, tmp_path / "book")
    result, _ = call_verdict(book)
    assert isinstance(result, StructuredResult)
    (rec,) = fake.records()
    assert rec["env"]["ANTHROPIC_API_KEY"] == secret  # the CLI got its key…
    for path in book.state_dir.rglob("*"):  # …and nothing novelmuse keeps contains it
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    out = capsys.readouterr()
    assert secret not in out.out and secret not in out.err


@pytest.mark.parametrize(
    ("response", "outcome"),
    [({}, "accepted"), ({"mode": "error_flag"}, "MODEL_ERROR_FLAG"), ({"mode": "exit"}, "MODEL_CLI_EXIT"),
     ({"mode": "not_json"}, "MODEL_OUTPUT_NOT_JSON")],
    ids=["accepted", "error-flag", "exit", "not-json"],
)  # fmt: skip
def test_a_key_the_cli_echoes_back_is_scrubbed_before_anything_keeps_it(
    fake: FakeCli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    response: dict[str, Any],
    outcome: str,
) -> None:
    secret = "sk-ant-secret-value-echoed-5d2e"
    monkeypatch.setenv("MUSE_TEST_CLI_KEY", secret)
    fake.control(responses=[{**response, "echo_key": True}])
    book = cli_book(fake, tmp_path / "book")
    result, _ = call_verdict(book)
    if outcome == "accepted":
        assert isinstance(result, StructuredResult)
        assert secret not in result.value.note and "[REDACTED]" in result.value.note
    else:
        assert isinstance(result, ModelCallFailed) and result.code == outcome
        assert secret not in str(result) and secret not in json.dumps(result.diagnostics)
    for path in book.state_dir.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    out = capsys.readouterr()
    assert secret not in out.out and secret not in out.err


def test_sandbox_read_paths_are_resolved_against_the_book_root(fake: FakeCli, tmp_path: Path) -> None:
    (tmp_path / "runtime").mkdir()
    cfg = fake.config(sandbox_read_paths=["runtime", "/opt/node"])
    provider = ClaudeCliProvider("cli", cfg, tmp_path)
    assert provider._read_only(fake.path) == [fake.path.parent, (tmp_path / "runtime").resolve(), Path("/opt/node")]


# ── the asyncio transport never outlives its event loop ─────────────────────────────────────────

_ESCAPEE = (
    "import subprocess, sys, time\n"
    "p = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"  # leaves the group, keeps stdout open
    "open(sys.argv[1], 'w').write(str(p.pid))\n"
    "time.sleep(60)\n"
)


@pytest.mark.parametrize("second_cancel", [False, True], ids=["cleanup-bound-expires", "cancelled-during-cleanup"])
def test_the_subprocess_transport_is_closed_before_run_isolated_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second_cancel: bool
) -> None:
    """A process outside the killed group can hold the pipes open, so the cleanup wait may end (bound or a second
    cancellation) before the transport closes itself; left open, it outlives asyncio.run's loop and its __del__
    fails later, in whichever test the garbage collector happens to run ("Event loop is closed")."""
    monkeypatch.setattr(_provider_cli, "_CLEANUP_WAIT_S", 0.5)
    pid_file = tmp_path / "escapee.pid"
    argv = [sys.executable, "-c", _ESCAPEE, str(pid_file)]
    unraisable: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(f"{u.exc_type.__name__}: {u.exc_value}"))

    async def go() -> None:
        run = asyncio.create_task(
            _provider_cli.run_isolated(argv, env=dict(os.environ), cwd=tmp_path, stdin=b"", timeout_s=30)
        )
        for _ in range(400):
            if pid_file.exists() and pid_file.read_text():
                break
            await asyncio.sleep(0.025)
        run.cancel()
        if second_cancel:
            await asyncio.sleep(0.1)  # now inside the cleanup, waiting for pipes the escapee holds open
            run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            asyncio.run(go())
            gc.collect()
    finally:
        if pid_file.exists() and pid_file.read_text():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert unraisable == []
    assert [str(w.message) for w in caught if "unclosed transport" in str(w.message)] == []
