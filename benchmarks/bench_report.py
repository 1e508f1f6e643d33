"""Benchmark: `muse report` on a 120-chapter book with a review record for every chapter.

The book is the whole of 三国演义 (120 chapters, ~600k characters) imported with `muse import`, with rules that
hit (a forbidden phrase, fatigue words), and for every chapter one stored review — three consistency issues and
seven editor evidence quotes located in the chapter's text, and a stored revision that changes two characters
in one paragraph (so every chapter page carries a character diff) — written through the editorial store API.

Measured, each as a whole process (`python -m novelmuse …`, start-up included), best of --repeat runs:

1. `muse report` — the target: ≤ 5 s whole process, and the overview page ≤ 2 MB;
2. baseline: `muse check --json` on the same book in the same run — the cheapest whole-process command that
   reads and checks every chapter. The ratio says what the report costs beyond that floor.

    python benchmarks/bench_report.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from corpus import CACHE as CORPUS  # noqa: E402  (vendored, decompressed into corpus/.cache)

from novelmuse.book import find_book  # noqa: E402
from novelmuse.editorial import (  # noqa: E402
    ChapterReview,
    ConsistencyRound,
    DimOut,
    EditorRound,
    IssueOut,
    RepairOut,
    StepOutcome,
    UsageOut,
)
from novelmuse.editorial._models import Disagreements, MemorySummary, RevisionOut, RulesSummary  # noqa: E402
from novelmuse.editorial._records import save_review  # noqa: E402
from novelmuse.roles.editor import DIMENSIONS  # noqa: E402
from novelmuse.store import new_id, utc_now  # noqa: E402
from novelmuse.text import locate_quote, sha256_hex, split_paragraphs  # noqa: E402

TARGET_S = 5.0
OVERVIEW_TARGET_BYTES = 2 * 1024 * 1024


def _quotes(body: str, n: int) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for s in body.replace("\n", "。").split("。"):
        s = s.strip().strip("　")
        if len(s) >= 8:
            m = locate_quote(body, s, min_chars=4)
            if m.ok:
                out.append((s, m.start, m.end))
        if len(out) == n:
            break
    return out


def make_book(root: Path) -> None:
    """Import 三国演义 and store a review with a two-character revision for every chapter."""
    env = {**os.environ, "MUSE_CONFIG": str(root / "none.toml")}
    subprocess.run(
        [sys.executable, "-m", "novelmuse", "import", str(CORPUS / "sanguo_yanyi.txt"), "--into", str(root / "b")],
        check=True,
        env=env,
        capture_output=True,
    )
    book_dir = root / "b"
    (book_dir / "rules.txt").write_text("禁止:黄巾\n疲劳词:却说≤1、大怒≤1\n", encoding="utf-8")
    (book_dir / "book.toml").write_text(
        '[book]\ntitle = "三国演义"\nauthor = "罗贯中"\n\n[chapters]\nmin_chars = 3000\nmax_chars = 6000\n',
        encoding="utf-8",
    )
    book = find_book(book_dir)
    for n in book.chapter_numbers():
        ch = book.read_chapter(n)
        raw = ch.path.read_bytes()
        body = ch.body
        quotes = _quotes(body, 10)
        para = max(split_paragraphs(body), key=lambda p: len(p.text))
        at = para.start + len(para.text) // 2
        new_body = body[:at] + "某某" + body[at + 2 :]
        new_bytes = raw[: len(raw) - len(body.encode())] + new_body.encode()
        sha = sha256_hex(body)
        issues = [
            IssueOut(
                severity=sev,
                type="setting",
                quote=q,
                start=a,
                end=b,
                paragraph=0,
                explanation="与前文矛盾",
                fix_hint="改掉",
                open=False,
            )
            for sev, (q, a, b) in zip(("major", "minor", "minor"), quotes[:3], strict=True)
        ]
        dims = [
            DimOut(name=d, score=60 + k * 4, evidence=q, start=a, end=b, neutral=False)
            for k, (d, (q, a, b)) in enumerate(zip(DIMENSIONS, quotes[3:10], strict=True))
        ]
        rev = new_id("rev_")
        doc = ChapterReview(
            record_id=new_id("rvw_"),
            chapter=n,
            title=ch.title,
            chapter_sha256=ch.sha256,
            config_sha256="0" * 64,
            status="finalized",
            error_code=None,
            steps=[
                StepOutcome.passed("rules"),
                StepOutcome.passed("consistency_review"),
                StepOutcome.passed("editor_review"),
            ],
            rules=RulesSummary(
                ruleset_sha256="0" * 64, forbidden=[], fatigue=[], forbidden_remaining=[], preferences_injected=False
            ),
            memory=MemorySummary(
                available=False, note="", card_states=0, active_foreshadows=0, previous_ending_chars=0
            ),
            consistency=[
                ConsistencyRound(
                    round=0, text_sha256=sha, issues=issues, blocking=1, model_passed=False, model_disagrees=False
                )
            ],
            editor=[
                EditorRound(
                    round=0,
                    text_sha256=sha,
                    overall=72,
                    dims=dims,
                    computed_verdict="accept",
                    model_verdict="accept",
                    agrees=True,
                    notes=[],
                )
            ],
            arbiter=[],
            repairs=[
                RepairOut(
                    step="polish",
                    kind="polish",
                    paragraphs=[para.index],
                    before_sha256=sha,
                    after_sha256=sha256_hex(new_body),
                )
            ],
            disagreements=Disagreements(reviewer_pass_flag=0, editor_verdict=0),
            open_issues=0,
            result_sha256=sha256_hex(new_bytes),
            revision=RevisionOut(
                id=rev,
                sha256=sha256_hex(new_bytes),
                path=f".muse/revisions/{n:04d}.{rev}.md",
                base_path=f".muse/revisions/{n:04d}.{rev}.base.md",
                applied=False,
            ),
            usage=UsageOut(calls=2, attempts=2, input_tokens=9000, output_tokens=900, cost=0.004, by_role={}),
        )
        save_review(book.db, doc, None, run_id=None, tasks=[], started_at=utc_now(), revision_text=new_bytes.decode())


def timed(args: list[str], root: Path) -> float:
    env = {**os.environ, "MUSE_CONFIG": str(root / "none.toml")}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "novelmuse", *args], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"`muse {' '.join(args)}` failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="muse-bench-report-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        make_book(root)
        print(
            f"book: 三国演义, 120 chapters, a review + revision per chapter (made in {time.perf_counter() - t0:.1f} s)"
        )
        book = root / "b"
        out = root / "site"
        report = min(timed(["report", "--book", str(book), "--out", str(out)], root) for _ in range(args.repeat))
        check = min(timed(["check", "--book", str(book), "--json"], root) for _ in range(args.repeat))
        overview = (out / "index.html").stat().st_size
        pages = list(out.rglob("*.html"))
        total = sum(p.stat().st_size for p in pages)
        print(
            f"muse report        {report:6.2f} s whole process  (target ≤ {TARGET_S:.0f} s)  {len(pages)} pages, "
            f"{total / 1e6:.1f} MB"
        )
        print(f"muse check --json  {check:6.2f} s whole process  (baseline, same book, same run)")
        print(f"ratio report/check {report / check:6.2f}×")
        print(f"overview page      {overview / 1024:6.0f} KiB  (target ≤ {OVERVIEW_TARGET_BYTES // 1024 // 1024} MB)")
        ok = report <= TARGET_S and overview <= OVERVIEW_TARGET_BYTES
        print("PASS" if ok else "MISSED a target")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
