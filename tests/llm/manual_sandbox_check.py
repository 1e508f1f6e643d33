"""Manual check (not collected by pytest): the claude-cli provider under a real sandbox on this machine.

The test suite must pass on machines without bubblewrap, so the real bwrap / sandbox-exec run lives here,
to be run by hand where the tool is installed (`apt-get install bubblewrap`):

    .venv/bin/python tests/llm/manual_sandbox_check.py

It installs the fake `claude` with a system interpreter (`/usr/bin/python3`, visible inside the sandbox),
requires a sandbox, runs one attempt that answers normally and one that reports which paths the process
can read, then one that times out. Exit 0 when the sandbox held: the run succeeded with sandbox != "none",
the repository and HOME were unreadable, the system runtime was readable, and the timeout was enforced.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from novelmuse.book import ClaudeCliProviderConfig
from novelmuse.llm._provider_cli import ClaudeCliProvider
from novelmuse.llm._types import Message, ProviderError, ProviderRequest

REPO = Path(__file__).resolve().parents[2]
INTERPRETER = "/usr/bin/python3"


def main() -> int:
    """Run the three attempts and print what the sandbox allowed."""
    os.environ.setdefault("MUSE_MANUAL_CLI_KEY", "sk-manual-check")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(os.path.realpath(tmp))
        exe = d / "claude"
        exe.write_text(f"#!{INTERPRETER} -I\n" + (Path(__file__).with_name("fake_claude.py")).read_text("utf-8"))
        exe.chmod(0o755)
        cfg = ClaudeCliProviderConfig(
            kind="claude-cli",
            path=str(exe),
            sha256=hashlib.sha256(exe.read_bytes()).hexdigest(),
            version="2.1.211",
            api_key_env="MUSE_MANUAL_CLI_KEY",
            require_sandbox=True,
        )
        provider = ClaudeCliProvider("cli", cfg, d)

        def req(timeout_s: float = 30) -> ProviderRequest:
            return ProviderRequest(
                provider="cli",
                model="claude-manual-check",
                messages=[Message(role="user", content="hi")],
                schema_name="X",
                json_schema={"type": "object"},
                max_output_tokens=16,
                timeout_s=timeout_s,
            )

        def control(response: dict[str, object]) -> None:
            (d / "control.json").write_text(json.dumps({"version": "2.1.211", "responses": [response]}), "utf-8")

        control({"output": {"ok": True}})
        first = asyncio.run(provider.send(req()))
        print(f"sandbox: {first.sandbox}; answer: {first.text}")
        probes = [str(REPO / "README.md"), str(Path.home()), "/etc/passwd", "/usr/bin"]
        control({"probe_paths": probes})
        readable = json.loads(asyncio.run(provider.send(req())).text or "{}")["readable"]
        print("readable inside the sandbox:", readable)
        control({"mode": "sleep", "sleep_s": 600, "child_pid_file": str(d / "child.pid")})
        t = time.monotonic()
        try:
            asyncio.run(provider.send(req(timeout_s=2)))
            timed_out = False
        except ProviderError as exc:
            timed_out = exc.code == "MODEL_TIMEOUT"
        print(f"timeout enforced: {timed_out} after {time.monotonic() - t:.1f} s")
    held = (
        first.sandbox not in (None, "none")
        and not readable[probes[0]]
        and not readable[probes[1]]
        and readable["/usr/bin"]
        and timed_out
    )
    print("sandbox held" if held else "sandbox did NOT hold")
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
