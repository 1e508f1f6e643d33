"""Benchmark: `muse drafts accept` — the author's desk confirming a draft into the book.

A copy of the sample book (ten chapters of 三国演义, outline 11 confirmed) holds a passed draft of chapter 11
(the novel's own chapter, 5,730 characters), written beforehand by `muse write 11` with the scripted provider. Each
trial takes a fresh copy of that book and times, as whole processes (what the author waits for):

- `muse drafts accept ID --without-gate` — no model: the preflight (the file, the context rebuilt and its
  manifest compared, the detector report on exactly this text, the rules), then the chapter file written through
  the revision store with its decision row;
- **baseline**, side by side on the same book: `muse check --chapter 11` of the chapter just written.

Target: accept ≤ 1.5× the check. The figure is the median over `--runs` trials (best of the trials printed too).

    python benchmarks/bench_accept.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.writing.write_helpers import detector, draft, facts, sample_book  # noqa: E402

TARGET = 1.5
NO_JUDGE = 'writer = "s:scripted-model-1"\ndetector = "s:scripted-model-1"\nextractor = "s:scripted-model-1"\n'


def _muse(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "MUSE_CONFIG": "/nonexistent/novelmuse-user-config.toml"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "novelmuse", *args], capture_output=True, text=True, env=env)
    return time.perf_counter() - t0, proc


def _template(work: Path) -> tuple[Path, str]:
    """The sample book with a passed draft of chapter 11 on the desk; (the book, the draft's short id)."""
    script = {"writer": [draft(requests=[])], "detector": [detector()], "extractor": [facts()]}
    book = sample_book(work / "template", script, roles=NO_JUDGE)
    _, proc = _muse("write", "11", "--arm", "C", "--json", "--book", str(book.root))
    if proc.returncode != 0:
        sys.exit(f"bench_accept: the scripted write failed: {proc.stderr}")
    doc = json.loads(proc.stdout)
    from novelmuse.writing import short_id

    return book.root, short_id(doc["final_draft_id"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-accept-") as tmp:
        work = Path(tmp)
        template, short = _template(work)
        accept_s: list[float] = []
        check_s: list[float] = []
        for k in range(args.runs):
            book = work / f"trial-{k}"
            shutil.copytree(template, book, symlinks=True)
            t_accept, proc = _muse("drafts", "accept", short, "--without-gate", "--book", str(book))
            if proc.returncode != 0:
                sys.exit(f"bench_accept: accept failed: {proc.stderr}")
            t_check, proc = _muse("check", "--chapter", "11", "--book", str(book))
            if proc.returncode not in (0, 1, 4):  # 4: rules.txt line 8 is not enforced (the sample says so)
                sys.exit(f"bench_accept: check failed: {proc.stderr}")
            accept_s.append(t_accept)
            check_s.append(t_check)
    accept, check = statistics.median(accept_s), statistics.median(check_s)
    ratio = accept / check
    print(f"machine: {os.cpu_count()} core(s), load average {os.getloadavg()[0]:.2f}; {args.runs} trial(s)")
    print(f"muse drafts accept (no model, --without-gate): median {accept:.3f} s, best {min(accept_s):.3f} s")
    print(f"muse check --chapter 11 (baseline):             median {check:.3f} s, best {min(check_s):.3f} s")
    verdict = "ok" if ratio <= TARGET else "MISSED"
    print(f"accept / check = {ratio:.2f}× (target ≤ {TARGET}×): {verdict}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
