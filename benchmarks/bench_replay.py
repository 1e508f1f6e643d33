"""Benchmark: replay experiments (issue 12) — the orchestrator's own cost, concurrency under model latency, and
the GateInputBuilder.

The book: the sample (三国演义 1–10) with `--items` confirmed outlines — chapter 11's fine outline copied to
chapters 11, 12, … (each its own foreshadow id) — registered as one writer set. Every item is a frozen replay
from chapters 1–10. The models are an in-process fake answering by role from what it is sent (the writer with
the real chapter 11, the detector with a verdict per constraint id, each judge with a contract-valid report on
its blind input); per sample 3 calls (writer, then detector and extractor concurrently), per item 2 judges.

1. **Orchestration overhead per sample** (target ≤ 50 ms, in process CPU time: the machine is shared): 30
   items × 3 arms with a zero-latency fake, at concurrency 1. **Baseline**: the same work by hand — every
   context built, `write_chapter` per sample and `judge_item` per item (with the same leak guard) in one
   session; no plan, no run/sample/panel rows, no resume bookkeeping. Overhead = (orchestrated − by hand)
   / samples.
2. **Concurrency** (issue target: `--items` 100 at concurrency 16 within 2× one sample's chain): every model
   call waits `--latency` (200 ms). Printed: one item's chain alone (its 3 samples and panel), the whole set at
   concurrency 16, the serial baseline (concurrency 1, measured on `--serial-items` items and scaled), and the
   ideal bound (the calls' latency spread over 16 slots).
3. **Gate input for the 300 samples of (2)** (target ≤ 1 s, process CPU time): `build_gate_input`, every
   artefact re-hashed.
   **Baseline**: the same builder re-reading and re-hashing the item's panel report for every sample instead of
   once per item.

    python benchmarks/bench_replay.py [--items 100] [--latency 0.2] [--serial-items 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from novelmuse.book import Book, find_book
from novelmuse.judging import Candidate, JudgeRequest, LeakGuard, Target, hidden_card_ids, judge_item
from novelmuse.llm import ModelSession
from novelmuse.replay import RegisteredSet, _builder, build_gate_input, run_replay
from novelmuse.replay._orchestrator import strategy_words
from novelmuse.replay._stored import final_candidate
from novelmuse.writing import build_context, write_chapter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.replay import replay_helpers as helpers  # noqa: E402

TARGET_OVERHEAD_S = 0.050
TARGET_GATE_INPUT_S = 1.0
TARGET_CONCURRENCY_RATIO = 2.0
ARMS = ["A", "B", "C"]
_PLANT = re.compile(r"F-plant:F-xuzhou\d*")


BenchFake = helpers.ManyOutlinesFake


def make_book(root: Path, items: int) -> tuple[Book, RegisteredSet]:
    """The sample book with `items` confirmed outlines (chapters 11, 12, …) registered as one set."""
    return helpers.many_items(root, items)


def orchestrated(
    book: Book, doc: RegisteredSet, concurrency: int, delay: float = 0.0, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, str]:
    """Seconds (by `clock`) of one run of the set, and its run id."""
    fake = BenchFake(delay_s=delay)
    start = clock()
    out = asyncio.run(run_replay(book, doc, ARMS, concurrency=concurrency, providers={"s": fake}))  # type: ignore[arg-type]
    elapsed = clock() - start
    assert out.ok, [s.code for s in out.samples if s.code] + [p.code for p in out.panels if p.code]
    return elapsed, out.run_id


def by_hand(book: Book, doc: RegisteredSet) -> float:
    """CPU seconds of the same samples and panels without the orchestrator (serial, one session)."""

    async def work() -> None:
        async with ModelSession.open(book, run_kind="bench", providers={"s": BenchFake()}) as session:  # type: ignore[dict-item]
            for item in doc.items:
                builds = {arm: build_context(book, item.chapter, arm=arm) for arm in ARMS}
                candidates = []
                for arm in ARMS:
                    written = await write_chapter(
                        book,
                        session,
                        item.chapter,
                        arm=arm,
                        build=builds[arm],
                        shadow=True,
                        resume="never",
                        origin="replay",
                    )
                    candidates.append(Candidate(arm, final_candidate(book, written)[1]))
                outline = builds["A"].inputs.outline
                request = JudgeRequest(
                    profile="writer_replay",
                    candidates=candidates,
                    item_id=item.item_id,
                    seed="bench",
                    scene_type=item.scene_type,
                    outline=outline,
                    assertions=[Target(a.id, a.text) for a in item.assertions],
                    constraints=[Target(i.id, i.text) for i in outline.items() if i.hard],
                    guard=LeakGuard(  # the orchestrator's guard (judging's cost, not the orchestrator's)
                        arm_names=["A", "B", "C"],
                        strategy_names=strategy_words(),
                        card_ids=hidden_card_ids(book),
                        secrets=[doc.sha256, *(b.manifest_sha256 for b in builds.values())],
                    ),
                    unknown_verdicts=True,
                )
                await judge_item(book, session, request)

    start = time.process_time()
    asyncio.run(work())
    return time.process_time() - start


def gate_input_time(book: Book, run_id: str, naive: bool) -> float:
    original = _builder._Panels.of
    if naive:
        _builder._Panels.of = lambda self, item_id: self._load(item_id)  # type: ignore[method-assign]
    try:
        start = time.process_time()
        build_gate_input(book, run_id)
        return time.process_time() - start
    finally:
        _builder._Panels.of = original  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100, help="items for figures 2 and 3 (default 100)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call in figure 2")
    parser.add_argument("--serial-items", type=int, default=4, help="items of the serial baseline (scaled)")
    args = parser.parse_args(argv)
    os.environ["MUSE_CONFIG"] = "/nonexistent/novelmuse-bench-user-config.toml"
    print(f"machine: {os.cpu_count()} core(s), load average {os.getloadavg()[0]:.2f}")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        base, doc = make_book(Path(tmp) / "thirty", 30)
        hand_book = Path(tmp) / "hand"
        shutil.copytree(base.root, hand_book)
        samples = len(doc.items) * len(ARMS)
        t_run, _ = orchestrated(base, doc, 1, clock=time.process_time)
        t_hand = by_hand(find_book(hand_book), doc)
        overhead = (t_run - t_hand) / samples
        print(f"1. orchestration overhead, {len(doc.items)} items × 3 arms, zero-latency models, concurrency 1")
        print(
            f"  orchestrated {t_run:.2f} s CPU; by hand {t_hand:.2f} s CPU "
            f"({t_hand / samples * 1000:.0f} ms per sample)"
        )
        print(f"  overhead {overhead * 1000:.1f} ms per sample; target ≤ {TARGET_OVERHEAD_S * 1000:.0f} ms")
        ok &= overhead <= TARGET_OVERHEAD_S

        big, big_doc = make_book(Path(tmp) / "big", args.items)
        one, one_doc = make_book(Path(tmp) / "one", 1)
        serial_book, serial_doc = make_book(Path(tmp) / "serial", args.serial_items)
        t_chain, _ = orchestrated(one, one_doc, 16, args.latency)
        t_all, run_id = orchestrated(big, big_doc, 16, args.latency)
        t_serial, _ = orchestrated(serial_book, serial_doc, 1, args.latency)
        serial = t_serial / args.serial_items * args.items
        calls = args.items * (len(ARMS) * 3 + 2)
        ideal = calls * args.latency / 16
        print(f"2. {args.items} items × 3 arms, every call {args.latency * 1000:.0f} ms, concurrency 16")
        print(
            f"  one item's chain alone: {t_chain:.2f} s; the whole set: {t_all:.2f} s ({t_all / t_chain:.1f}× a chain)"
        )
        print(f"  serial baseline (concurrency 1, scaled from {args.serial_items} items): {serial:.1f} s; speed-up "
              f"{serial / t_all:.1f}×; the calls' latency alone over 16 slots: {ideal:.1f} s")  # fmt: skip
        ok &= t_all <= TARGET_CONCURRENCY_RATIO * t_chain

        fast = min(gate_input_time(big, run_id, False) for _ in range(3))
        slow = min(gate_input_time(big, run_id, True) for _ in range(3))
        n = len(build_gate_input(big, run_id).samples)
        print(f"3. gate input for {n} samples (every artefact re-hashed)")
        print(f"  builder {fast * 1000:.0f} ms CPU (target ≤ {TARGET_GATE_INPUT_S * 1000:.0f} ms); panel re-read per "
              f"sample {slow * 1000:.0f} ms; ratio {slow / fast:.1f}×")  # fmt: skip
        ok &= fast <= TARGET_GATE_INPUT_S
    print("targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
