"""Benchmark: the writer context (issue 10) — build the WriterContext and manifest of chapter 100 of 三国演义.

The book is the whole vendored 三国演义 (120 chapters, ~600k characters), imported like `muse import`, with
cards for the outline's characters and a confirmed version-2 outline of chapter 100. The retrieval index is
built once beforehand (a warm index, as after `muse sync`). Then, each `--runs` times:

- **novelmuse** (target: p95 ≤ 150 ms): `build_and_save(book, 100)` — the whole of `muse context 100` after
  start-up: confirmation check, cards, index freshness, memory replayed through 99, the plan, the four-chapter
  window, card-located readback (arm C), the budget, the render, the leak guard, the manifest written to
  `.muse/manifests/` and the store;
- **naive baseline**: what a context builder without an index does — read every chapter before 100 and scan
  each for every name and alias of the outline's entities (every occurrence's offset).

Arms A (generic BM25) and B (card-only) are printed for information (A's first build loads the index and
builds its isolated BM25 model; the warm figure reuses the open index).

    python benchmarks/bench_context.py [--runs 30]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

from novelmuse.book import Book, find_book, import_novel
from novelmuse.memory import SearchIndex, load_cards, update_index
from novelmuse.writing import build_and_save, build_context, confirm_outline

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from corpus import SANGUO  # noqa: E402  (vendored)

TARGET_P95_S = 0.150
CHAPTER = 100

CARDS = {
    "zhuge-liang": ("诸葛亮", ["孔明", "卧龙", "诸葛孔明", "武侯"], "{value: alive, from: 36}"),
    "sima-yi": ("司马懿", ["仲达", "司马仲达"], "{value: alive, from: 39}"),
    "cao-zhen": ("曹真", ["子丹"], "{value: alive, from: 60}"),
    "liu-bei": ("刘备", ["玄德", "刘玄德", "刘皇叔"], "{value: alive, from: 1, to: 84}\n    - {value: dead, from: 85}"),
    "guan-yu": ("关羽", ["云长", "关公", "关云长"], "{value: alive, from: 1, to: 76}\n    - {value: dead, from: 77}"),
    "zhao-yun": ("赵云", ["子龙", "赵子龙"], "{value: alive, from: 7}"),
    "wei-yan": ("魏延", ["文长"], "{value: alive, from: 41}"),
    "cao-rui": ("曹叡", ["魏主"], "{value: alive, from: 91}"),
}

OUTLINE = """\
version: 2
chapter: 100
title: 汉兵劫寨破曹真　武侯斗阵辱仲达
scene_type: battle
goal: 孔明料曹真劫寨反劫之，与司马懿斗阵取胜，终因粮尽与谗言退兵
hard_events:
  - {id: E1, text: 曹真约司马懿劫蜀寨, result: 孔明预设伏兵，魏兵大败}
  - {id: E2, text: 孔明与司马懿斗阵, result: 司马懿阵法被破，魏将受辱而回}
  - {id: E3, text: 魏国行反间，后主听谗召孔明, result: 孔明班师回成都}
beats:
  - {id: B1, text: 曹真羞愤成病}
  - {id: B2, text: 孔明作书辱曹真}
foreshadows:
  - {op: plant, id: F-rumor, description: 苟安之谗使后主召回孔明, payoff_chapter: 101}
hook: 孔明班师，司马懿另有所谋
new_settings:
  - {id: S1, kind: state, text: 曹真病重, entities: [曹真]}
time_anchors:
  - {id: T1, text: 建兴八年秋, marker: 秋}
entities: [诸葛亮, 司马懿, 曹真, 魏延, 赵云]
"""


def _book(root: Path) -> Book:
    root.mkdir(parents=True)
    (root / "book.toml").write_text('[book]\ntitle = "三国演义"\n\n[writing]\nfact_cards = "optional"\n')
    import_novel(SANGUO, root)
    (root / "cards").mkdir(exist_ok=True)
    for cid, (name, aliases, status) in CARDS.items():
        (root / "cards" / f"{cid}.yaml").write_text(
            f"id: {cid}\ntype: character\nname: {name}\naliases: [{', '.join(aliases)}]\n"
            f"attributes:\n  status:\n    - {status}\n",
            encoding="utf-8",
        )
    (root / "outlines").mkdir(exist_ok=True)
    (root / "outlines" / f"{CHAPTER:04d}.yaml").write_text(OUTLINE, encoding="utf-8")
    book = find_book(root)
    confirm_outline(book, CHAPTER)
    return book


def _naive(book: Book) -> int:
    """Read every chapter before N and find every occurrence of every entity name and alias."""
    names = [n for name, aliases, _ in CARDS.values() for n in (name, *aliases)]
    hits = 0
    for n, path in book.chapter_paths().items():
        if n >= CHAPTER:
            continue
        text = path.read_text(encoding="utf-8")
        for name in names:
            i = text.find(name)
            while i >= 0:
                hits += 1
                i = text.find(name, i + len(name))
    return hits


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        book = _book(Path(tmp) / "sanguo")
        cards = load_cards(book)
        update_index(book, cards)
        print(f"setup: 三国演义 imported and indexed in {time.perf_counter() - t0:.1f} s")
        build_and_save(book, CHAPTER)  # first build: warms the OS cache and the imports
        ours: list[float] = []
        naive: list[float] = []
        for _ in range(args.runs):
            t = time.perf_counter()
            doc = build_and_save(book, CHAPTER)
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            hits = _naive(book)
            naive.append(time.perf_counter() - t)
        m = doc.manifest
        print(
            f"chapter {CHAPTER}: {len(m.spans)} excerpt(s), {len(m.facts)} fact line(s), window "
            f"{[p.chapter for p in m.prior_chapters]}, manifest {doc.manifest_sha256[:16]}…; "
            f"naive found {hits} mentions"
        )
        p_ours, p_naive = _p95(ours), _p95(naive)
        print(f"context + manifest (arm C), p95 of {args.runs}: {_ms(p_ours)}  (median {_ms(statistics.median(ours))})")
        print(f"naive read-and-scan baseline, p95:        {_ms(p_naive)}  (median {_ms(statistics.median(naive))})")
        print(f"ratio naive / novelmuse (p95): {p_naive / p_ours:.2f}x")
        t = time.perf_counter()
        index = SearchIndex(book, cards)
        build_context(book, CHAPTER, arm="A", search=index)
        cold_a = time.perf_counter() - t
        warm_a = []
        for _ in range(5):
            t = time.perf_counter()
            build_context(book, CHAPTER, arm="A", search=index)
            warm_a.append(time.perf_counter() - t)
        b_runs = []
        for _ in range(5):
            t = time.perf_counter()
            build_context(book, CHAPTER, arm="B")
            b_runs.append(time.perf_counter() - t)
        print(
            f"(info) arm A: first build {_ms(cold_a)} (index load + isolated BM25 model), "
            f"then {_ms(statistics.median(warm_a))}; arm B: {_ms(statistics.median(b_runs))}"
        )
        ok = p_ours <= TARGET_P95_S
        print(f"target p95 ≤ {TARGET_P95_S * 1000:.0f} ms: {'met' if ok else 'MISSED'}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
