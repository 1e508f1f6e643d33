"""Benchmark: the editorial loop's own overhead and the cost of a resumed run, with baselines from the same run.

A book of the first N chapters of 三国演义 (default 30), every role served by the scripted provider (no
network, no model time), each chapter answered "no issues" by the reviewer and "accept" by the editor.

1. loop: `review_chapters` over all chapters (rules, memory context, reviewer + editor calls with quote
   contracts, records, revisions) — baseline: the same 2·N calls of the same role tasks (rendered, with their
   quote contracts) made directly through `ModelSession.call`, nothing else. The difference is the loop's
   overhead per chapter (the model layer's own receipts and vault writes are in both).
2. resume: the same range again, where every chapter is found reviewed at its sha256 and configuration —
   baseline: reading and hashing every chapter file (the least a resume must do).

Targets: loop overhead ≤ 25 ms per chapter on top of the bare calls; a resumed run ≤ 50 ms per chapter.
Machine noise is large on a shared 2-core box; the figures are the best of --repeat runs.

    python benchmarks/bench_editorial.py [--chapters 30] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import yaml

from novelmuse.book import Book, find_book
from novelmuse.editorial import ReviewRun, review_chapters
from novelmuse.llm import ModelSession
from novelmuse.memory import MemoryContext
from novelmuse.roles import editor, reviewer
from novelmuse.roles.editor import DIMENSIONS
from novelmuse.text import locate_quote, sha256_hex, split_chapters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from corpus import CACHE as CORPUS  # noqa: E402  (vendored, decompressed into corpus/.cache)

OVERHEAD_TARGET_MS = 25.0
RESUME_TARGET_MS = 50.0


def _evidence(body: str) -> list[str]:
    out: list[str] = []
    for s in body.replace("\n", "。").split("。"):
        s = s.strip().strip("　")
        if len(s) >= 8 and locate_quote(body, s, min_chars=4).ok:
            out.append(s)
        if len(out) == 7:
            break
    return out


def make_book(root: Path, n: int) -> list[str]:
    split = split_chapters((CORPUS / "sanguo_yanyi.txt").read_text(encoding="utf-8"))
    (root / "chapters").mkdir(parents=True)
    bodies = []
    reviewer, editor = [], []
    for part in split.chapters[:n]:
        body = part.body
        (root / "chapters" / f"{part.number:04d}.md").write_text(
            f"# {part.heading_line.heading.text}\n{body}", encoding="utf-8"
        )
        bodies.append(body)
        match = f"【第{part.number}回 ·"
        dims = {d: {"score": 80, "evidence": q} for d, q in zip(DIMENSIONS, _evidence(body), strict=True)}
        reviewer.append({"output": {"issues": [], "passed": True}, "match": match})
        editor.append({"output": {"overall": 80, "dims": dims, "verdict": "accept", "notes": []}, "match": match})
    script = {"reviewer": reviewer * 8, "editor": editor * 8}  # enough for every repeat of loop and baseline
    (root / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    (root / "book.toml").write_text(
        '[book]\ntitle = "bench"\n[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n'
        # reviewer and editor only: no extractor, so the facts step is skipped(no model configured) and the
        # comparison stays 2 calls per chapter on both sides
        '[roles]\nreviewer = "s:scripted-model-1"\neditor = "s:scripted-model-1"\n',
        encoding="utf-8",
    )
    return bodies


async def bare_calls(root: Path, n: int) -> None:
    """The baseline: the same reviewer and editor tasks (rendered, with their quote contracts), straight through
    ModelSession."""
    book = find_book(root)
    no_memory = MemoryContext(False, "bench")
    async with ModelSession.open(book, run_kind="bench") as session:
        for number in range(1, n + 1):
            text = book.read_chapter(number).body
            unit = book.heading_unit  # the prompts name the chapter the book's way (第N回), as the loop's do
            await session.call(reviewer.REVIEW.render(reviewer.ReviewRequest(number, "", text, no_memory, unit)))
            request = editor.EditorRequest(number, "", text, "", [], False, 3, unit)
            await session.call(editor.REVIEW.render(request))


async def reviewed(book: Book, numbers: list[int]) -> ReviewRun:
    async with ModelSession.open(book, run_kind="review") as session:
        return await review_chapters(book, session, numbers)


def timed(fn: object) -> float:
    t0 = time.perf_counter()
    asyncio.run(fn) if asyncio.iscoroutine(fn) else fn()  # type: ignore[operator]
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chapters", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    n = args.chapters
    loop_s, bare_s, resume_s, hash_s = [], [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "book"
            make_book(root, n)
            bare_s.append(timed(bare_calls(root, n)))
            book = find_book(root)
            numbers = book.chapter_numbers()
            t0 = time.perf_counter()
            run = asyncio.run(reviewed(book, numbers))
            loop_s.append(time.perf_counter() - t0)
            assert run.summary.finalized == n, run.summary
            t0 = time.perf_counter()
            again = asyncio.run(reviewed(find_book(root), numbers))
            resume_s.append(time.perf_counter() - t0)
            assert again.summary.resumed == n, again.summary
            t0 = time.perf_counter()
            for p in book.chapter_paths().values():
                sha256_hex(p.read_bytes())
            hash_s.append(time.perf_counter() - t0)
    loop, bare, resume, hashing = min(loop_s), min(bare_s), min(resume_s), min(hash_s)
    overhead_ms = (loop - bare) / n * 1000
    resume_ms = resume / n * 1000
    print(f"chapters: {n} of 三国演义, scripted provider (2 calls per chapter)")
    print(f"loop      {loop:8.3f} s   bare calls {bare:8.3f} s   ratio {loop / bare:5.2f}x")
    print(f"          overhead {overhead_ms:7.2f} ms/chapter (target ≤ {OVERHEAD_TARGET_MS:.0f})")
    print(f"resume    {resume:8.3f} s   read+hash  {hashing:8.3f} s   ratio {resume / max(hashing, 1e-9):7.1f}x")
    print(f"          {resume_ms:7.2f} ms/chapter (target ≤ {RESUME_TARGET_MS:.0f})")
    ok = overhead_ms <= OVERHEAD_TARGET_MS and resume_ms <= RESUME_TARGET_MS
    print("targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
