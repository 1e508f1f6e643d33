"""Shared fixtures: the public-domain corpus, running `muse` in-process and as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

# No per-example deadline (a shared 2-core machine makes timings noisy; pytest-timeout guards against hangs).
# In CI the examples are derandomized so a run is reproducible; locally they vary and keep finding new cases.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
# The long fuzz run (`pytest tests/fuzz --hypothesis-profile=fuzz-nightly`, see tests/fuzz/test_fuzz.py).
settings.register_profile("fuzz-nightly", max_examples=20_000, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_BOOK = ROOT / "examples" / "sanguo"
# The corpus is vendored (corpus/*.txt.xz): a clone alone passes its tests.
from corpus import HONGLOU, SANGUO  # noqa: E402, F401  (re-exported for the tests)


def _outside_checkout_guard() -> list[str]:
    """Record every file opened beside the checkout (e.g. ../shared): the test run may read only the clone.

    An audit hook sees every `open` of the process (tests, fixtures, in-process `muse`); the paths under the
    checkout's parent directory that are not under the checkout itself are collected and fail the session.
    """
    parent = ROOT.parent
    if parent == Path(parent.anchor):  # a clone directly under / has no siblings worth guarding
        return []
    root_prefix, parent_prefix = f"{ROOT}{os.sep}", f"{parent}{os.sep}"
    seen: list[str] = []

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event != "open" or not args or not isinstance(args[0], str | bytes):
            return
        path = os.fsdecode(args[0])
        full = os.path.abspath(path)
        if full.startswith(parent_prefix) and not (full + os.sep).startswith(root_prefix):
            seen.append(full)

    sys.addaudithook(hook)
    return seen


OUTSIDE_READS = _outside_checkout_guard()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if any test opened a file outside the checkout."""
    if OUTSIDE_READS:
        shown = ", ".join(sorted(set(OUTSIDE_READS))[:5])
        print(f"\nerror[OUTSIDE_CHECKOUT]: the tests opened files outside the checkout: {shown}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def book_invariants(request: pytest.FixtureRequest) -> Iterator[None]:
    """After every test that made a book in its `tmp_path`: the invariants of `tests/reliability/invariants.py`
    (integrity, receipts vs vault, no run left running, no receipt pending, no temp debris). A test that leaves a
    book unsettled on purpose is marked `unsettled`."""
    yield
    tmp = request.node.funcargs.get("tmp_path")
    if tmp is None or request.node.get_closest_marker("unsettled") is not None:
        return
    from tests.reliability.invariants import check_book

    for db in sorted(Path(tmp).rglob(".muse/muse.db")):
        problems = check_book(db.parent.parent)
        assert not problems, f"book invariants after the test, {db.parent.parent}: {problems}"


@dataclass
class Result:
    """What a `muse` run printed and returned."""

    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def muse(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Run `muse ARGS…` in-process (fast); returns exit code, stdout and stderr."""
    from novelmuse.cli import main

    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "no-user-config.toml"))

    def run(*args: str | Path, cwd: Path | None = None) -> Result:
        capsys.readouterr()
        if cwd is not None:
            monkeypatch.chdir(cwd)
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return Result(code, out.out, out.err)

    return run


def muse_subprocess(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """Run `muse` as a real subprocess (`python -m novelmuse`)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}
    full_env["MUSE_CONFIG"] = "/nonexistent/novelmuse-user-config.toml"
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "novelmuse", *map(str, args)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)
