#!/usr/bin/env python3
"""Set up a local virtual environment and run the demo or the whole test suite.

    python3 dev.py demo    # install, then a guided tour of muse on the bundled sample book
    python3 dev.py test    # install, then ruff + mypy + the documentation site (mkdocs --strict) + pytest
    python3 dev.py bench   # install, then every benchmark under benchmarks/
    python3 dev.py harness # install, then the crash and fault harness (tests/reliability/harness.py)

Only the standard library is used here, so this works on a fresh clone with Python >= 3.11.
The install is pinned by constraints.txt and skipped when nothing it depends on has changed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".novelmuse-install"


def _run(*args: str | Path, env: dict[str, str] | None = None) -> int:
    print("+", " ".join(str(a) for a in args), flush=True)
    return subprocess.call([str(a) for a in args], cwd=ROOT, env=env)


def _install_fingerprint() -> str:
    h = hashlib.sha256()
    for name in ("pyproject.toml", "constraints.txt"):
        h.update((ROOT / name).read_bytes())
    return h.hexdigest()


def ensure_venv() -> None:
    """Create .venv and install novelmuse with its pinned dependencies, once per change of pins."""
    if sys.version_info < (3, 11):  # noqa: UP036 — dev.py itself may be run by an older python3
        sys.exit(f"error[PYTHON_VERSION]: Python {sys.version.split()[0]} found — novelmuse needs Python >= 3.11")
    if not (BIN / "python").exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    fingerprint = _install_fingerprint()
    if STAMP.exists() and STAMP.read_text() == fingerprint:
        return
    pip = [BIN / "python", "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    rc = _run(*pip, "-c", ROOT / "constraints.txt", "-e", f"{ROOT}[dev]")
    if rc != 0:
        sys.exit(f"error[INSTALL]: pip install failed (exit {rc}) — check the network access to PyPI and retry")
    STAMP.write_text(fingerprint)


def demo() -> int:
    """Run the guided tour examples/demo.py (sample book, then a scripted-model copy in .demo/)."""
    return _run(BIN / "python", ROOT / "examples" / "demo.py", *sys.argv[2:])


def test() -> int:
    py = BIN / "python"
    code = ("src", "tests", "benchmarks", "examples", "corpus", "docs", "dev.py")
    with tempfile.TemporaryDirectory(prefix="novelmuse-site-") as site:
        for step in (
            (py, "-m", "ruff", "check", *code),
            (py, "-m", "ruff", "format", "--check", *code),
            (py, "-m", "mypy"),
            # the documentation site: a broken link, a missing page or anchor, or a generated reference that cannot
            # be built fails here (tests/docs/ checks the built pages further)
            (py, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", site),
            (py, "-m", "pytest", *sys.argv[2:]),
        ):
            rc = _run(*step, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
            if rc != 0:
                return rc
    return 0


def bench() -> int:
    return _run(BIN / "python", ROOT / "benchmarks" / "run_all.py", *sys.argv[2:])


def harness() -> int:
    return _run(BIN / "python", "-m", "tests.reliability.harness", *sys.argv[2:])


def main() -> int:
    commands = {"demo": demo, "test": test, "bench": bench, "harness": harness}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    ensure_venv()
    return commands[sys.argv[1]]()


if __name__ == "__main__":
    sys.exit(main())
