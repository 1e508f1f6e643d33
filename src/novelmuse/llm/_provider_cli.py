"""The `claude-cli` provider: one isolated, pinned Claude CLI process per attempt (seed 003, 隔离模型进程).

Before every attempt the configured executable is checked against its pin: the path must be absolute
and already resolved (no symlink in it), the file's sha256 must match, and `<path> --version`, run in
the same isolated environment, must report the pinned version. Any mismatch refuses the attempt with
MODEL_CLI_PIN_MISMATCH, which is never retried.

One attempt is one fresh process:

    <path> --print --bare --output-format json --model <full id> --json-schema <schema>
           --tools "" --strict-mcp-config --mcp-config {"mcpServers":{}} --no-session-persistence
           --setting-sources "" --disable-slash-commands --max-turns N --system-prompt <fixed text>
           [--effort E] [--max-budget-usd B]

* `--print` + `--output-format json`: one JSON result document on stdout; `--json-schema` makes the
  CLI return the object in `structured_output` (its `result` text is never used as a fallback).
* `--bare`: no hooks, plugins, auto-memory, CLAUDE.md discovery, keychain reads or background work.
* `--tools ""`: no tools at all; `--strict-mcp-config` with exactly `{"mcpServers":{}}`: no MCP server;
  `--no-session-persistence`: nothing is saved to resume; `--setting-sources ""`: no user, project or
  local settings; `--disable-slash-commands`: no skills.
* `--max-turns` (config, default 3): structured output is delivered through one internal tool turn,
  so 1 would fail every call; the bound keeps a confused run finite.
* `--system-prompt` is a fixed instruction (not content): it replaces the agentic default prompt.
* The prompt — every message, rendered as a transcript — goes through **stdin only**, never argv.
* The CLI's own API retries are turned off (`CLAUDE_CODE_MAX_RETRIES=0`), so one attempt is one request.

Isolation: cwd, HOME and TMPDIR are inside one fresh 0700 directory that is removed afterwards (also
on timeout, error or cancellation). The environment is built from a whitelist (PATH, LANG, LANGUAGE,
LC_*) plus fixed settings and the key, which is read from the configured `api_key_env` (unset →
MODEL_KEY_MISSING, nothing run) and passed as ANTHROPIC_API_KEY, the only credential `--bare` reads;
nothing else is inherited. The key is scrubbed from the CLI's stdout and output text before they leave
the provider (the vault, the receipts' hashes and reports never see it); stderr is kept only as its
size. The process runs in its own session, and a timeout kills the whole process group (MODEL_TIMEOUT;
its cost is unknown, so the policy does not retry it). Any process the CLI left behind in its group is
killed too. The sandbox (bwrap / sandbox-exec / none) is chosen first and recorded on every attempt — in
`ProviderResponse.sandbox`, and on every `ProviderError` raised after the choice (so each receipt, failed or not,
says where the process ran). Without a usable sandbox the CLI is refused (MODEL_SANDBOX_UNAVAILABLE, fail closed)
unless the provider says `allow_unsandboxed = true`; then it runs unconfined and every receipt says sandbox none.

Success needs all of: exit 0, `is_error` false, a normal terminal reason, the resolved model equal to
the requested full id, usage present, and a `structured_output`. Exit ≠ 0 → MODEL_CLI_EXIT and stdout
that is no JSON result document → MODEL_OUTPUT_NOT_JSON (both raised here, cost unknown); the error
flag, the finish, the resolved model (the keys of `modelUsage`) and the usage are reported in the
response for the call policy to judge (MODEL_ERROR_FLAG, MODEL_TRUNCATED, MODEL_MISMATCH,
MODEL_USAGE_MISSING).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..book import ClaudeCliProviderConfig
from ._sandbox import SandboxKind, find_sandbox, probe_bwrap, wrap_command
from ._secrets import scrub, scrub_text
from ._types import Finish, Message, ProviderError, ProviderRequest, ProviderResponse
from ._usage import anthropic_usage, as_int

__all__ = [
    "EMPTY_MCP_CONFIG",
    "SYSTEM_PROMPT",
    "ClaudeCliProvider",
    "IsolatedDir",
    "build_cli_argv",
    "build_env",
    "isolated_dir",
    "parse_cli_result",
    "render_transcript",
]

PIN_MISMATCH = "MODEL_CLI_PIN_MISMATCH"
CLI_KEY_VAR = "ANTHROPIC_API_KEY"
EMPTY_MCP_CONFIG = '{"mcpServers":{}}'

#: Replaces the CLI's agentic default system prompt. Fixed text, so argv never carries content.
SYSTEM_PROMPT = (
    "You are a text-only assistant called by a program. The conversation arrives on standard input as a "
    "transcript with role headers (### SYSTEM, ### USER, ### ASSISTANT). Follow the SYSTEM instructions, answer "
    "the last USER message, and reply only through the structured output the JSON schema defines."
)

#: Settings the isolated process always gets (never inherited): one attempt is exactly one request,
#: and nothing phones home besides the model call.
FIXED_ENV: Mapping[str, str] = {
    "CLAUDE_CODE_MAX_RETRIES": "0",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}
_PASS_ENV = ("PATH", "LANG", "LANGUAGE")
_NORMAL_STOPS = frozenset({"end_turn", "stop_sequence", "tool_use"})
_VERSION_PROBE_MAX_S = 30.0


@dataclass(frozen=True)
class IsolatedDir:
    """One attempt's private directory (0700) and the cwd, HOME and TMPDIR inside it."""

    root: Path
    cwd: Path
    home: Path
    tmp: Path


@contextlib.contextmanager
def isolated_dir() -> Iterator[IsolatedDir]:
    """A fresh 0700 directory holding cwd, HOME and TMPDIR; removed on exit, whatever happened."""
    root = Path(tempfile.mkdtemp(prefix="muse-claude-")).resolve()
    try:
        os.chmod(root, 0o700)
        parts = IsolatedDir(root, root / "work", root / "home", root / "tmp")
        for d in (parts.cwd, parts.home, parts.tmp):
            d.mkdir(mode=0o700)
        yield parts
    finally:
        shutil.rmtree(root, ignore_errors=True)


def build_env(parent: Mapping[str, str], api_key_env: str | None, where: IsolatedDir) -> dict[str, str]:
    """The child's whole environment: the whitelist from `parent`, fixed settings, private HOME/TMPDIR.

    The key is read from the configured variable and handed to the CLI as `ANTHROPIC_API_KEY`, the only
    credential `--bare` accepts; a parent's own ANTHROPIC_API_KEY is never passed through by name.
    """
    env = {k: v for k, v in parent.items() if k in _PASS_ENV or k.startswith("LC_")}
    if api_key_env and parent.get(api_key_env):
        env[CLI_KEY_VAR] = parent[api_key_env]
    env.update(FIXED_ENV)
    env["HOME"] = str(where.home)
    env["TMPDIR"] = str(where.tmp)
    env.setdefault("PATH", os.defpath)
    return env


def render_transcript(messages: Sequence[Message]) -> str:
    """Every message as one stdin text with role headers (the CLI takes one prompt, not a chat)."""
    blocks = [f"### {m.role.upper()}\n{m.content}" for m in messages]
    return "\n\n".join(blocks) + "\n"


def build_cli_argv(path: str, request: ProviderRequest, config: ClaudeCliProviderConfig) -> list[str]:
    """The exact argv of one attempt (see the module docstring for why each flag is there)."""
    schema = json.dumps(request.json_schema, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    argv = [
        path,
        "--print",
        "--bare",
        "--output-format",
        "json",
        "--model",
        request.model,
        "--json-schema",
        schema,
        "--tools",
        "",
        "--strict-mcp-config",
        "--mcp-config",
        EMPTY_MCP_CONFIG,
        "--no-session-persistence",
        "--setting-sources",
        "",
        "--disable-slash-commands",
        "--max-turns",
        str(config.max_turns),
        "--system-prompt",
        SYSTEM_PROMPT,
    ]
    if config.effort:
        argv += ["--effort", config.effort]
    if config.max_budget_usd is not None:
        argv += ["--max-budget-usd", f"{config.max_budget_usd:g}"]
    return argv


def _resolved_model(doc: Mapping[str, Any]) -> str | None:
    """The model(s) the CLI says it used: the keys of `modelUsage` (several → joined, never a match)."""
    usage = doc.get("modelUsage")
    if not isinstance(usage, dict) or not usage:
        return None
    return ",".join(sorted(str(k) for k in usage))


def _finish(doc: Mapping[str, Any], is_error: bool) -> Finish:
    if doc.get("subtype") != "success":
        return "error" if is_error else "other"
    stop = doc.get("stop_reason")
    if stop == "max_tokens":
        return "length"
    if stop == "refusal":
        return "filtered"
    if stop in _NORMAL_STOPS:
        return "stop"
    return "other"


def parse_cli_result(stdout: bytes, *, sandbox: SandboxKind) -> ProviderResponse:
    """Turn the CLI's JSON result document into a response; stdout that is not one → MODEL_OUTPUT_NOT_JSON.

    The document is one object with ``"type": "result"``. A verbose CLI prints an array of every
    message instead; then exactly one element must be the result (none or several → not JSON).
    """
    try:
        doc = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        doc = None
    if isinstance(doc, list):
        results = [d for d in doc if isinstance(d, dict) and d.get("type") == "result"]
        doc = results[0] if len(results) == 1 else None
    if not isinstance(doc, dict) or doc.get("type") != "result":
        raise ProviderError(
            "MODEL_OUTPUT_NOT_JSON",
            "the Claude CLI printed no JSON result document",
            cost_known=False,
            raw=stdout,
        )
    is_error = doc.get("is_error") is not False  # success needs an explicit false
    structured = doc.get("structured_output")
    text = None if structured is None else json.dumps(structured, ensure_ascii=False)
    cost = doc.get("total_cost_usd")
    extra: dict[str, Any] = {
        "exit_code": 0,
        "subtype": doc.get("subtype") if isinstance(doc.get("subtype"), str) else None,
        "stop_reason": doc.get("stop_reason") if isinstance(doc.get("stop_reason"), str) else None,
        "num_turns": as_int(doc.get("num_turns")),
        "structured_output": structured is not None,
        # The CLI's own cost figure is recorded beside ours, never used (cost comes from the price table).
        "cli_reported_cost_usd": cost if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    }
    return ProviderResponse(
        text=text,
        raw=stdout,
        resolved_model=_resolved_model(doc),
        finish=_finish(doc, is_error),
        usage=anthropic_usage(doc.get("usage")),
        is_error=is_error,
        sandbox=sandbox,
        extra=extra,
    )


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_pin_path(config: ClaudeCliProviderConfig) -> Path:
    """The pinned executable after checking path and sha256 (MODEL_CLI_PIN_MISMATCH otherwise).

    The configured path must be absolute and already resolved: a symlink (anywhere in the path) could
    be re-pointed between the check and the run, so it is refused with the resolved path to pin instead.
    """
    raw = config.path
    if not os.path.isabs(raw):
        raise ProviderError(PIN_MISMATCH, f"claude-cli path {raw!r} is not absolute")
    path = Path(os.path.normpath(raw))
    real = Path(os.path.realpath(path))
    if real != path:
        raise ProviderError(PIN_MISMATCH, f"claude-cli path {raw} goes through a symlink; pin {real} instead")
    if not real.is_file():
        raise ProviderError(PIN_MISMATCH, f"claude-cli path {raw} is not a file")
    if not os.access(real, os.X_OK):
        raise ProviderError(PIN_MISMATCH, f"claude-cli path {raw} is not executable")
    try:
        digest = _sha256_file(real)
    except OSError as exc:
        raise ProviderError(PIN_MISMATCH, f"cannot read claude-cli at {raw} ({exc.strerror})") from exc
    if digest != config.sha256.strip().lower():
        raise ProviderError(PIN_MISMATCH, f"sha256 of {raw} is {digest}, not the pinned {config.sha256}")
    return real


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class _Timeout(Exception):
    pass


class _TooLarge(Exception):
    pass


#: Bounds on what one attempt may print; beyond them the process group is killed and the attempt fails
#: closed (a structured answer is far smaller; a flood is a broken or hostile CLI).
MAX_STDOUT_BYTES = 32 * 1024 * 1024
MAX_STDERR_BYTES = 1024 * 1024
#: How long the cleanup waits for a killed group's pipes to close and its exit to be reported.
_CLEANUP_WAIT_S = 10.0


async def _drain(stream: asyncio.StreamReader | None, limit: int) -> bytes:
    if stream is None:
        return b""
    buf = bytearray()
    while chunk := await stream.read(65536):
        buf += chunk
        if len(buf) > limit:
            raise _TooLarge()
    return bytes(buf)


async def _discard(stream: asyncio.StreamReader | None) -> None:
    if stream is not None:
        while await stream.read(1 << 16):
            pass


async def _feed(writer: asyncio.StreamWriter | None, data: bytes) -> None:
    if writer is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a CLI may exit without reading all
        writer.write(data)
        await writer.drain()
        writer.close()


async def run_isolated(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, stdin: bytes, timeout_s: float
) -> tuple[int, bytes, bytes]:
    """Run one process in its own session; on timeout, a flood or cancellation kill its whole process group.

    stdin is written while stdout and stderr are read (no pipe deadlock), each read is bounded
    (MAX_STDOUT_BYTES / MAX_STDERR_BYTES → `_TooLarge`), and the whole run by `timeout_s` → `_Timeout`.
    """
    loop = asyncio.get_running_loop()
    # create_subprocess_exec, except that the transport stays in hand so the cleanup can close it (see below)
    transport, protocol = await loop.subprocess_exec(
        lambda: asyncio.subprocess.SubprocessStreamProtocol(limit=1 << 16, loop=loop),
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
        close_fds=True,
    )
    proc = asyncio.subprocess.Process(transport, protocol, loop)
    pgid = proc.pid  # a new session's leader: its pid is the process group id
    try:

        async def everything() -> tuple[bytes, bytes]:
            try:
                async with asyncio.TaskGroup() as tg:  # one failing read cancels the others
                    tg.create_task(_feed(proc.stdin, stdin))
                    out = tg.create_task(_drain(proc.stdout, MAX_STDOUT_BYTES))
                    err = tg.create_task(_drain(proc.stderr, MAX_STDERR_BYTES))
                    tg.create_task(proc.wait())
            except BaseExceptionGroup as group:
                if group.subgroup(_TooLarge) is not None:
                    raise _TooLarge() from None
                raise
            return out.result(), err.result()

        try:
            out, err = await asyncio.wait_for(everything(), timeout_s)
        except TimeoutError:
            raise _Timeout() from None
        return proc.returncode if proc.returncode is not None else -1, out, err
    finally:
        _kill_group(pgid)  # the timed-out process, or anything a finished one left running in its group
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        # Python 3.11's wait() also waits for the pipes to close, and a pipe whose reader stopped early (a
        # flood) is paused: read the dead group's leftovers to EOF, discarding them, so wait() can return.
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(_discard(proc.stdout), _discard(proc.stderr), proc.wait()), _CLEANUP_WAIT_S
                )
        finally:
            # The transport closes itself only once both pipes reached EOF and the exit was reported. A process
            # that left the group (its own session) can hold the pipes open past the bound, and a second
            # cancellation ends the wait early: close it here, on the live loop. Left open, it would outlive the
            # loop (asyncio.run closes it) and its __del__ would fail later with "Event loop is closed".
            transport.close()


class ClaudeCliProvider:
    """The isolated Claude CLI as a `Provider`: one pinned, sandboxed, fresh process per attempt."""

    kind = "claude-cli"

    def __init__(self, name: str, config: ClaudeCliProviderConfig, book_root: Path):
        self.name = name
        self.config = config
        self.book_root = book_root
        self.max_concurrency = config.max_concurrency
        self._sandbox: tuple[SandboxKind, str | None, bool] | None = None

    async def _choose_sandbox(self, env: Mapping[str, str], where: IsolatedDir) -> tuple[SandboxKind, str | None]:
        """The sandbox this machine offers (probed once: bwrap may exist but be unusable)."""
        if self._sandbox is None:
            kind, tool = find_sandbox(sys.platform, env.get("PATH"))
            installed = kind == "bwrap"  # bubblewrap found (it may still be unusable)
            if kind == "bwrap" and (
                tool is None or not await asyncio.to_thread(probe_bwrap, tool, where.tmp, dict(env))
            ):
                kind, tool = "none", None
            self._sandbox = (kind, tool, installed)
        kind, tool, installed = self._sandbox
        allowed = self.config.allow_unsandboxed and not self.config.require_sandbox
        if kind == "none" and not allowed:
            found = (
                "bubblewrap is installed but unusable (user namespaces disabled?)"
                if installed
                else ("neither bwrap (Linux) nor sandbox-exec (macOS) is available")
            )
            error = ProviderError(
                "MODEL_SANDBOX_UNAVAILABLE",
                f"the CLI runs only in a sandbox, and {found}; install bubblewrap, or set allow_unsandboxed = true "
                "in the provider to run it unconfined (its receipts then say sandbox none)",
            )
            error.sandbox = "none"
            raise error
        return kind, tool

    def _read_only(self, exe: Path) -> list[Path]:
        """What the sandbox shows read-only besides the system runtime: the CLI's directory and the
        configured `sandbox_read_paths` (relative ones are relative to the book root), all resolved."""
        extra = [Path(os.path.realpath(self.book_root / p)) for p in self.config.sandbox_read_paths]
        return [exe.parent, *extra]

    def _sandboxed(
        self, exe: Path, kind: SandboxKind, tool: str | None, where: IsolatedDir, command: list[str]
    ) -> list[str]:
        """`command` wrapped in the chosen sandbox over the isolated directory — the pin's version probe and
        the real call run under exactly the same confinement."""
        return wrap_command(
            kind, tool, workdir=where.root, cwd=where.cwd, read_only=self._read_only(exe), command=command
        )

    async def _probe_version(
        self, exe: Path, kind: SandboxKind, tool: str | None, env: Mapping[str, str], where: IsolatedDir
    ) -> None:
        argv = self._sandboxed(exe, kind, tool, where, [str(exe), "--version"])
        try:
            rc, out, _ = await run_isolated(
                argv, env=env, cwd=where.cwd, stdin=b"", timeout_s=min(self.config.timeout_s, _VERSION_PROBE_MAX_S)
            )
        except _Timeout:
            raise ProviderError(PIN_MISMATCH, "`claude --version` timed out") from None
        except _TooLarge:
            raise ProviderError(PIN_MISMATCH, "`claude --version` printed far too much") from None
        except OSError as exc:
            raise ProviderError(PIN_MISMATCH, f"cannot run {exe} ({exc.strerror})") from exc
        words = out.decode("utf-8", "replace").split()
        reported = words[0] if words else ""
        if rc != 0 or reported != self.config.version:
            raise ProviderError(
                PIN_MISMATCH,
                f"`claude --version` reported {reported or '(nothing)'!r} (exit {rc}), not the pinned "
                f"{self.config.version!r}",
            )

    async def send(self, request: ProviderRequest) -> ProviderResponse:
        """One attempt: choose the sandbox, verify the pin, then run the CLI once in a fresh isolated directory; a
        failure after the sandbox was chosen says which one (its receipt records it)."""
        with isolated_dir() as where:
            env = build_env(os.environ, self.config.api_key_env, where)
            kind, tool = await self._choose_sandbox(env, where)
            try:
                return await self._run(request, where, env, kind, tool)
            except ProviderError as exc:
                exc.sandbox = kind
                raise

    async def _run(
        self, request: ProviderRequest, where: IsolatedDir, env: Mapping[str, str], kind: SandboxKind, tool: str | None
    ) -> ProviderResponse:
        """The attempt in its isolated directory, under the chosen sandbox: key, pin, version probe, the run."""
        key_env = self.config.api_key_env
        if key_env and not os.environ.get(key_env):
            raise ProviderError(
                "MODEL_KEY_MISSING",
                f"the environment variable {key_env} (api_key_env of [providers.{self.name}]) is unset",
            )
        exe = await asyncio.to_thread(check_pin_path, self.config)  # hashing a large binary: off the loop
        await self._probe_version(exe, kind, tool, env, where)
        argv = self._sandboxed(exe, kind, tool, where, build_cli_argv(str(exe), request, self.config))
        stdin = render_transcript(request.messages).encode("utf-8")
        try:
            rc, out, err = await run_isolated(
                argv, env=env, cwd=where.cwd, stdin=stdin, timeout_s=request.timeout_s or self.config.timeout_s
            )
        except _Timeout:
            raise ProviderError(
                "MODEL_TIMEOUT",
                f"the Claude CLI did not finish within {request.timeout_s or self.config.timeout_s:g} s",
                transient=True,
                cost_known=False,
            ) from None
        except _TooLarge:
            raise ProviderError(
                "MODEL_OUTPUT_TOO_LARGE",
                f"the Claude CLI printed more than {MAX_STDOUT_BYTES} bytes (or {MAX_STDERR_BYTES} on stderr)",
                cost_known=False,
            ) from None
        except OSError as exc:
            raise ProviderError("MODEL_CLI_SPAWN", f"cannot start {exe} ({exc.strerror})") from exc
        # The CLI holds the key, so its stdout may echo it (an error text, a confused model): scrubbed before the
        # raw bytes or the output text leave the provider, as the HTTP providers do. Parsed first, scrubbed after.
        secret = os.environ.get(key_env) if key_env else None
        if rc != 0:
            raise ProviderError(
                "MODEL_CLI_EXIT", f"the Claude CLI exited with {rc}", cost_known=False, raw=scrub(out, secret)
            )
        try:
            response = parse_cli_result(out, sandbox=kind)
        except ProviderError as exc:
            exc.raw = scrub(exc.raw, secret)
            raise
        response.raw = scrub(response.raw, secret)
        response.text = scrub_text(response.text, secret)
        response.extra["stderr_bytes"] = len(err)  # its size only: stderr may echo content
        return response

    async def aclose(self) -> None:
        """Nothing is held between attempts (every attempt is its own process and directory)."""
        return None
