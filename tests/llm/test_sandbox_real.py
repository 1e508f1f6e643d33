"""The Claude CLI runs only in a sandbox — proven with the real bubblewrap, not a patched one.

A sandbox is required unless the book says `allow_unsandboxed = true`; with bubblewrap the fake `claude` runs inside
`bwrap`:
it can read the system runtime and write its own fresh directory, and nothing else — not the checkout, not HOME,
not a file beside it, not its own installation directory. `.ci/run` installs bubblewrap when it is missing; on a
machine without it this test skips with the reason shown (under CI=true it fails).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from novelmuse.book import ClaudeCliProviderConfig
from novelmuse.llm._provider_cli import ClaudeCliProvider
from novelmuse.llm._types import Message, ProviderRequest

from ..conftest import ROOT
from ..reports.tools import require

FAKE_SOURCE = Path(__file__).with_name("fake_claude.py")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is the Linux sandbox")
def test_a_fake_cli_cannot_read_or_write_outside_its_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require(shutil.which("bwrap"), "bubblewrap")
    monkeypatch.setenv("MUSE_TEST_CLI_KEY", "sk-sandbox-test")
    # the base interpreter (a venv's python may be a copy living in the checkout, which the sandbox never shows)
    interpreter = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(f"#!{interpreter} -I\n" + FAKE_SOURCE.read_text(encoding="utf-8"), encoding="utf-8")
    exe.chmod(0o755)
    secret = tmp_path / "beside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("nobody inside the sandbox reads this\n", encoding="utf-8")
    outside = tmp_path / "beside" / "written-from-the-sandbox.txt"
    # HOME is probed unless the interpreter lives under it (then bwrap shows the path down to it, and nothing else)
    home = [] if Path(sys.base_prefix).is_relative_to(Path.home()) else [str(Path.home())]
    readable = [str(ROOT / "README.md"), str(secret), *home, "/usr/bin", "."]
    writable = [str(outside), str(bin_dir / "dropped.txt"), "inside.txt"]
    control = {"version": "2.1.211", "responses": [{"probe_paths": readable, "probe_writes": writable}]}
    (bin_dir / "control.json").write_text(json.dumps(control), encoding="utf-8")
    config = ClaudeCliProviderConfig(
        kind="claude-cli",
        path=str(exe),
        sha256=hashlib.sha256(exe.read_bytes()).hexdigest(),
        version="2.1.211",
        api_key_env="MUSE_TEST_CLI_KEY",
        sandbox_read_paths=[sys.base_prefix],  # the interpreter's runtime (read-only), wherever it is installed
    )
    assert config.allow_unsandboxed is False  # the default: a sandbox is required
    provider = ClaudeCliProvider("cli", config, tmp_path)
    request = ProviderRequest(
        provider="cli",
        model="claude-sandbox-check",
        messages=[Message(role="user", content="hi")],
        schema_name="Probe",
        json_schema={"type": "object"},
        max_output_tokens=64,
        timeout_s=60,
    )
    response = asyncio.run(provider.send(request))
    assert response.sandbox == "bwrap"
    seen = json.loads(response.text or "{}")
    assert seen["readable"] == {
        str(ROOT / "README.md"): False,  # the checkout
        str(secret): False,  # a file beside the CLI
        **dict.fromkeys(home, False),
        "/usr/bin": True,  # the system runtime, read-only
        ".": True,  # its own fresh working directory
    }
    assert seen["writable"] == {str(outside): False, str(bin_dir / "dropped.txt"): False, "inside.txt": True}
    assert not outside.exists() and not (bin_dir / "dropped.txt").exists()
