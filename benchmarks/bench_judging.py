"""Benchmark: judging — the local report contract and a whole 2+1 panel through the model layer.

Each figure is printed beside a baseline measured in the same run (read the ratios; absolute times are
indicative only):

- contract check of one report (3 full 三国演义 chapters × 8 quality_gate dimensions, every quote
  located exactly once after normalisation, plus coverage counts) — baseline: the same quotes located the
  naive way, re-normalising the candidate text for every quote;
- one whole panel (blind input, leak check, two scripted judges, contract, report, storage, unblinding)
  — baseline: two bare scripted model calls with a trivial schema in the same kind of book, i.e. what the
  model layer costs by itself.

    python benchmarks/bench_judging.py [--panels 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from novelmuse.book import Book, find_book
from novelmuse.judging import (
    Candidate,
    JudgeOutcome,
    JudgeRequest,
    build_blind_item,
    check_report,
    judge_item,
    load_rubric,
    panel_orders,
    quote_hints,
)
from novelmuse.llm import Message, ModelSession
from novelmuse.roles.judge import JudgeReport
from novelmuse.text import locate_quote, split_chapters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from corpus import CACHE as CORPUS  # noqa: E402  (vendored, decompressed into corpus/.cache)
from tests.llm.calls import task_call  # noqa: E402  (the model layer's own test calls)


def chapters(n: int) -> list[str]:
    text = (CORPUS / "sanguo_yanyi.txt").read_text(encoding="utf-8")
    return [c.body.strip() for c in split_chapters(text).chapters[:n]]


def report_for(blind: Any, score: float = 4.0) -> dict[str, Any]:
    scores = []
    for c in blind.candidates:
        hints = quote_hints(c.text, "bench", count=len(blind.dimension_ids))
        for i, d in enumerate(blind.dimension_ids):
            scores.append(
                {
                    "candidateId": c.candidateId,
                    "dimensionId": d,
                    "score": score,
                    "reason": "理由",
                    "candidateQuote": hints[i % len(hints)],
                    "evidenceRefs": [{"type": "candidate", "id": c.candidateId}],
                }
            )
    rankings = [{"dimensionId": d, "order": blind.candidate_ids} for d in blind.dimension_ids]
    return {"scores": scores, "rankings": rankings, "verdicts": []}


def best_of(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_contract() -> None:
    rubric = load_rubric("quality_gate")
    cands = [Candidate(chr(65 + i), t) for i, t in enumerate(chapters(3))]
    item = build_blind_item(item_id="bench", seed="s", rubric=rubric, candidates=cands)
    report = JudgeReport.model_validate(report_for(item.blind))
    assert check_report(report, item.blind, rubric).ok

    def naive() -> None:
        for s in report.scores:
            assert locate_quote(item.blind.text_of(s.candidateId), s.candidateQuote, min_chars=8).ok

    ours = best_of(lambda: check_report(report, item.blind, rubric), 5)
    base = best_of(naive, 5)
    chars = sum(len(c.text) for c in cands)
    print(
        f"contract check, 3 chapters ({chars:,} chars) x 8 dims: {ours * 1000:.1f} ms "
        f"(naive per-quote normalisation {base * 1000:.1f} ms, ratio {ours / base:.2f})"
    )


def write_book(root: Path, entries: list[dict[str, Any]]) -> Book:
    root.mkdir(parents=True)
    (root / "script.yaml").write_text(yaml.safe_dump({"default": entries}, allow_unicode=True), encoding="utf-8")
    (root / "book.toml").write_text(
        '[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n[roles]\ndefault = "s:scripted-model-1"\n',
        encoding="utf-8",
    )
    return find_book(root)


class Tiny(BaseModel):
    ok: bool


async def bare_calls(book: Book, n: int) -> None:
    async with ModelSession.open(book, run_kind="bench") as session:
        for _ in range(n):
            await session.call(task_call(role="judge", schema=Tiny, messages=[Message(role="user", content="ok?")]))


async def judged(book: Book, request: JudgeRequest) -> JudgeOutcome:
    async with ModelSession.open(book, run_kind="bench") as session:
        return await judge_item(book, session, request)


def bench_panel(panels: int, tmp: Path) -> None:
    rubric = load_rubric("quality_gate")
    cands = [Candidate(chr(65 + i), t[:3000]) for i, t in enumerate(chapters(2))]
    panel_times, bare_times = [], []
    for i in range(panels):
        item = build_blind_item(item_id=f"p{i}", seed="s", rubric=rubric, candidates=cands)
        orders = panel_orders(item.blind.candidate_ids)
        entries = [{"output": report_for(item.blind.in_order(orders[k]))} for k in (1, 2)]
        book = write_book(tmp / f"panel{i}", entries)
        t0 = time.perf_counter()
        doc = asyncio.run(judged(book, JudgeRequest("quality_gate", cands, item_id=f"p{i}", seed="s")))
        panel_times.append(time.perf_counter() - t0)
        assert doc.outcome == "stable"
        bare = write_book(tmp / f"bare{i}", [{"output": {"ok": True}}] * 2)
        t0 = time.perf_counter()
        asyncio.run(bare_calls(bare, 2))
        bare_times.append(time.perf_counter() - t0)
    p, b = statistics.median(panel_times), statistics.median(bare_times)
    print(
        f"whole panel (2 judges, 2 candidates x 3,000 chars, scripted): median {p * 1000:.0f} ms "
        f"(two bare scripted calls {b * 1000:.0f} ms, ratio {p / b:.1f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--panels", type=int, default=10)
    args = parser.parse_args(argv)
    bench_contract()
    with tempfile.TemporaryDirectory() as tmp:
        bench_panel(args.panels, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
