"""Benchmark: a stretch of the book — the loop's own overhead, and concurrent fact-card extraction.

1. **Loop overhead.** `muse write 11-20 --auto` (one process: ten chapters written, checked, accepted and their fact
   cards extracted) against the **baseline** of the same work done by hand on a fresh copy of the same book: for
   each chapter, `muse write N`, `muse drafts accept ID` and `muse sync` — thirty processes. The models answer at
   once from a loopback OpenAI-compatible server in this process (threads; the figure is the commands' CPU, user +
   system, of the child processes, so the server's own work is not counted). Target: ≤ 1.0× the baseline.
2. **Concurrent extraction.** `muse sync` of a book of 100 chapters without fact cards, the extractor behind a
   loopback server answering after 200 ms (its own process), `[calls] concurrency = 8`: wall time of the
   extraction against the **baseline** of 100 / 8 sequential waves of 200 ms sleeps (measured here). Target: ≤ 2×.

    python benchmarks/bench_stretch.py [--chapters 100] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.llm.loopback import LoopbackServer  # noqa: E402
from tests.replay.honest import chapter_body  # noqa: E402
from tests.writing.stretch_models import KEY_ENV, StretchModels, stretch_book  # noqa: E402

from _loopback import BenchServer  # noqa: E402

LOOP_TARGET = 1.0
SYNC_TARGET = 2.0
KEY = "sk-bench-stretch-0123456789"


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _muse(*args: str | Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run one `muse` process; (its CPU seconds, the result)."""
    env = {**os.environ, "MUSE_CONFIG": "/nonexistent/novelmuse-user-config.toml", KEY_ENV: KEY}
    before = _children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "novelmuse", *map(str, args)], env=env, capture_output=True, text=True, check=False
    )
    return _children_cpu() - before, done


def _ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(done.args[3:])} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return done


def loop_overhead(work: Path) -> float:
    """(stretch CPU) / (thirty single commands' CPU), both printed."""
    models = StretchModels()
    with LoopbackServer("openai", responder=models) as srv:
        by_hand = stretch_book(work / "by-hand", srv.base_url, last=20)
        one_run = stretch_book(work / "one-run", srv.base_url, last=20)
        for book in (by_hand, one_run):  # chapters 1–10's fact cards first, outside the figures
            models.root = book.root
            _ok(_muse("sync", "--yes", "--book", book.root)[1])
        models.root = by_hand.root
        single = 0.0
        for n in range(11, 21):
            cpu, done = _muse("write", n, "--yes", "--json", "--book", by_hand.root)
            draft = json.loads(_ok(done).stdout)["final_draft_id"]
            single += cpu
            cpu, done = _muse("drafts", "accept", draft, "--book", by_hand.root)
            single += cpu
            _ok(done)
            cpu, done = _muse("sync", "--yes", "--book", by_hand.root)
            single += cpu
            _ok(done)
        models.root = one_run.root
        stretch, done = _muse("write", "11-20", "--auto", "--yes", "--json", "--book", one_run.root)
        assert json.loads(_ok(done).stdout)["status"] == "finished"
    for n in range(11, 21):  # the same book both ways
        a = (by_hand.root / "chapters" / f"{n:04d}.md").read_bytes()
        assert a == (one_run.root / "chapters" / f"{n:04d}.md").read_bytes(), n
    ratio = stretch / single
    print(f"write 11-20 --auto: {stretch:.2f} s CPU in one process")
    print(f"baseline: 10 × (write N + drafts accept + sync): {single:.2f} s CPU in 30 processes")
    print(f"ratio {ratio:.2f}× (target ≤ {LOOP_TARGET}×)")
    return ratio


def _sync_book(root: Path, base_url: str, chapters: int, concurrency: int) -> None:
    root.mkdir(parents=True)
    (root / "chapters").mkdir()
    for n in range(1, chapters + 1):
        (root / "chapters" / f"{n:04d}.md").write_text(f"# 第{n}回\n{chapter_body(n)}\n", encoding="utf-8")
    (root / "book.toml").write_text(
        '[book]\ntitle = "bench"\n\n'
        f"[calls]\nconcurrency = {concurrency}\n\n"
        f'[providers.s]\nkind = "openai"\nbase_url = "{base_url}"\napi_key_env = "{KEY_ENV}"\ntransport = "http"\n'
        f"max_concurrency = {concurrency}\n\n"
        '[roles]\nextractor = "s:bench-extractor"\n',
        encoding="utf-8",
    )


async def _waves(calls: int, width: int, delay: float) -> float:
    t0 = time.perf_counter()
    for _ in range(math.ceil(calls / width)):
        await asyncio.gather(*(asyncio.sleep(delay) for _ in range(width)))
    return time.perf_counter() - t0


def concurrent_extraction(work: Path, chapters: int, width: int = 8, delay: float = 0.2) -> float:
    """(sync's extraction wall time) / (the waves baseline), both printed."""
    empty = {"events": [], "foreshadows": [], "relations": [], "states": []}
    with BenchServer(delay, empty) as srv:
        root = work / "sync"
        _sync_book(root, srv.base_url, chapters, width)
        _muse("sync", "--no-extract", "--book", root)  # the index first (exit 4: facts left stale): extraction timed
        t0 = time.perf_counter()
        _, done = _muse("sync", "--yes", "--json", "--book", root)
        wall = time.perf_counter() - t0
        doc = json.loads(_ok(done).stdout)
        assert doc["facts_step"] == "passed" and len(doc["facts_extracted"]) == chapters, doc["facts_step"]
        t0 = time.perf_counter()
        _muse("cost", "--book", root)  # the process around the calls: start-up, index check, replay
        startup = time.perf_counter() - t0
    baseline = asyncio.run(_waves(chapters, width, delay))
    ratio = (wall - startup) / baseline
    print(f"sync: {chapters} extraction calls at {delay * 1000:.0f} ms, concurrency {width}: {wall:.2f} s wall")
    print(f"  (a muse process that calls nothing: {startup:.2f} s; extraction {wall - startup:.2f} s)")
    waves = math.ceil(chapters / width)
    print(f"baseline: {waves} sequential waves of {width} × {delay * 1000:.0f} ms: {baseline:.2f} s")
    print(f"ratio {ratio:.2f}× (target ≤ {SYNC_TARGET}×)")
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapters", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="40 chapters for the extraction figure")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} core(s), load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-stretch-") as tmp:
        work = Path(tmp)
        loop = loop_overhead(work)
        shutil.rmtree(work / "by-hand", ignore_errors=True)
        sync = concurrent_extraction(work, 40 if args.quick else args.chapters)
    missed = [name for name, got, target in (("loop", loop, LOOP_TARGET), ("sync", sync, SYNC_TARGET)) if got > target]
    if missed:
        print(f"MISSED: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
