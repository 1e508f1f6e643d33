"""Benchmark: what the claude-cli isolation costs per attempt, against a bare spawn of the same executable.

One attempt of the provider = pin check (sha256 of the executable) + a `--version` probe process + a
fresh 0700 directory + the CLI process + process-group cleanup + removal of the directory. The baseline,
measured in the same run, is one bare spawn of the same fake `claude` with the same argv and stdin.
Printed: median milliseconds of each, the ratios, and the isolation steps (pin hash, private directory,
environment) timed on their own, since spawn noise on a shared machine swamps a difference of spawns.
Machines are noisy: read the ratios, not the absolute numbers. Target: an isolated attempt costs at
most 1.5x the two bare spawns it needs (exit 1 otherwise).

    python benchmarks/bench_claude_cli.py [--n 20]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from novelmuse.book import ClaudeCliProviderConfig
from novelmuse.llm import _provider_cli
from novelmuse.llm._provider_cli import (
    ClaudeCliProvider,
    build_cli_argv,
    build_env,
    check_pin_path,
    isolated_dir,
    render_transcript,
)
from novelmuse.llm._types import Message, ProviderRequest

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 1.5  # the isolation (pin, probe bookkeeping, private dir, cleanup) adds at most half again
FAKE = ROOT / "tests" / "llm" / "fake_claude.py"


async def _bare(argv: list[str], stdin: bytes) -> None:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    await proc.communicate(stdin)


def main() -> int:
    """Run the benchmark and print the ratio of an isolated attempt to a bare spawn."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20)
    n = parser.parse_args().n
    # measure the isolation itself: no sandbox, so the figure is comparable on every machine
    _provider_cli.find_sandbox = lambda platform, path_env: ("none", None)  # type: ignore[assignment]
    os.environ.setdefault("MUSE_BENCH_CLI_KEY", "sk-bench")
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "claude"
        exe.write_text(f"#!{sys.executable} -I\n" + FAKE.read_text(encoding="utf-8"), encoding="utf-8")
        exe.chmod(0o755)
        exe = Path(os.path.realpath(exe))
        cfg = ClaudeCliProviderConfig(
            kind="claude-cli",
            path=str(exe),
            sha256=hashlib.sha256(exe.read_bytes()).hexdigest(),
            version="2.1.211",
            api_key_env="MUSE_BENCH_CLI_KEY",
        )
        req = ProviderRequest(
            provider="cli",
            model="claude-bench-model",
            messages=[Message(role="system", content="审稿。"), Message(role="user", content="话说天下大势" * 200)],
            schema_name="Verdict",
            json_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
            max_output_tokens=256,
            timeout_s=60,
        )
        provider = ClaudeCliProvider("cli", cfg, Path(tmp))
        argv = build_cli_argv(str(exe), req, cfg)
        stdin = render_transcript(req.messages).encode()

        async def run() -> tuple[list[float], list[float], list[float]]:
            bare: list[float] = []
            probe: list[float] = []
            full: list[float] = []
            for _ in range(n):  # interleaved, so drift in machine load hits all three alike
                t = time.perf_counter()
                await _bare(argv, stdin)
                bare.append(time.perf_counter() - t)
                t = time.perf_counter()
                await _bare([str(exe), "--version"], b"")
                probe.append(time.perf_counter() - t)
                t = time.perf_counter()
                await provider.send(req)
                full.append(time.perf_counter() - t)
            return bare, probe, full

        bare, probe, full = asyncio.run(run())
        t = time.perf_counter()
        for _ in range(n):
            check_pin_path(cfg)
            with isolated_dir() as where:
                build_env(os.environ, cfg.api_key_env, where)
        steps = (time.perf_counter() - t) * 1000 / n
    b, v, f = (statistics.median(x) * 1000 for x in (bare, probe, full))
    print(f"claude-cli isolation ({n} attempts, fake CLI, no sandbox, {os.cpu_count()} cpus; medians)")
    print(f"  bare spawn of the CLI run:       {b:8.1f} ms")
    print(f"  bare spawn of --version:         {v:8.1f} ms")
    print(f"  isolated attempt (provider):     {f:8.1f} ms   ratio to the bare run {f / b:.2f}x")
    print(f"  ratio to the two bare spawns an attempt needs (probe + run): {f / (b + v):.2f}x")
    print(f"  isolation steps timed directly (pin sha256, 0700 dir create+remove, env): {steps:.2f} ms per attempt")
    ratio = f / (b + v)
    if ratio > TARGET_RATIO:
        print(f"  MISSED target: an isolated attempt should cost at most {TARGET_RATIO}x its two bare spawns")
        return 1
    print(f"  target met: ≤ {TARGET_RATIO}x the two bare spawns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
