"""Benchmark: every command of issue 17's table as a whole process, beside a bare script doing the same work.

A user runs a command, not an engine: each row is `python -m novelmuse …` in its own process, timed by the
CPU time (user + system) the kernel reports for it (`wait4`), best of `--runs`, with its peak memory. Beside
it, in the same run, a bare script (`python -c …`) that does the same work with the same library calls but
without the CLI (no Typer, no Rich, no pydantic documents) — the ratio is what the command costs around its
work. Books are built by repeating the vendored corpus (三国演义 + 红楼梦) to 1M and 5M characters; rules are
phrases drawn from 三国演义 (half forbidden, half fatigue ≤ 2), as in bench_rules.

| row | command | bare script | target |
|---|---|---|---|
| start-up | `muse --help` | `import typer, rich.console` (the issue's 0.10 s) | ≤ 0.15 s |
| start-up | `muse check` of a 1-chapter book | a bare Typer app running a command with check's options | ≤ 0.15 s |
| search | `muse search Q --before N`, warm | find_book + lint_cards + update_index + SearchIndex.find | ≤ 0.25 s |
| check | `muse check --json`, 1,000 rules | read chapters, CompiledRules.check_texts, dump hits | ≤ 0.5 s, 150 MB |
| check | `muse check --json`, 10,000 rules | the same | ≤ 1.5 s, ≤ 300 MB |
| check | `muse check` (terminal), 1,000 rules | the `--json` bare script | ≤ 0.8 s |
| mentions | `muse mentions NAME`, warm | find_book + lint_cards + update_index + card_mentions | — |
| cards | `muse cards show X --as-of N`, 1,000 chapters × 500 cards | card_view in process | ≤ 0.3 s |
| sync | `muse sync` from scratch (no model) | a bare rjieba pass over every chapter | ≤ 5 s |

Targets are for the 5M-character book. Growth: the size-dependent rows at 1M and 5M, and their ratio (5.0 =
linear; flagged when above 1.3 × linear).
Bytecode caches are written first (an installed package has them; see `compile_bytecode`).
The machine's load average is printed at start and end: on a shared 2-core machine CPU time still rises
with load (caches, frequency), so read the ratios.

    python benchmarks/bench_commands.py [--sizes 1,5] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from novelmuse.book import find_book

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from corpus import SANGUO  # noqa: E402  (vendored, decompressed into corpus/.cache)

from bench_memory import write_book, write_cards_book  # noqa: E402
from bench_rules import draw_phrases  # noqa: E402

PY = sys.executable
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}, "MUSE_CONFIG": "/nonexistent/bench.toml"}
QUERY = "桃园结义"
NAME = "刘备"

BARE_STARTUP = "import typer, rich.console"
BARE_TYPER_COMMAND = """
import sys
from pathlib import Path
from typing import Annotated
import typer
app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
@app.callback()
def root() -> None:
    pass
@app.command("check")
def check(directory: Annotated[Path | None, typer.Argument()] = None,
          book: Annotated[Path | None, typer.Option("--book")] = None,
          chapter: Annotated[int | None, typer.Option("--chapter")] = None,
          range_: Annotated[str | None, typer.Option("--range")] = None,
          json_out: Annotated[bool, typer.Option("--json")] = False,
          pretty: Annotated[bool, typer.Option("--pretty")] = False) -> None:
    pass
app(args=["check"], standalone_mode=False)
"""
BARE_CHECK = """
import json, sys
from pathlib import Path
from novelmuse.book import find_book, read_chapter_file
from novelmuse.rules import CompiledRules, load_book_rules
book = find_book(Path(sys.argv[1]))
bodies = [read_chapter_file(n, p).body for n, p in book.chapter_paths().items()]
found = CompiledRules(load_book_rules(book).effective).check_texts(bodies)
json.dump([[[f.target, f.actual, f.hits()] for f in fs] for fs in found], sys.stdout, ensure_ascii=False,
          separators=(",", ":"))
"""
BARE_SEARCH = """
import sys
from pathlib import Path
from novelmuse.book import find_book
from novelmuse.memory import SearchIndex, lint_cards, update_index
b = find_book(Path(sys.argv[1]))
cards, _ = lint_cards(b, check_sources=False)
update_index(b, cards)
print(SearchIndex(b, cards).find(sys.argv[2], before=int(sys.argv[3])))
"""
BARE_MENTIONS = """
import sys
from pathlib import Path
from novelmuse.book import find_book
from novelmuse.memory import card_mentions, lint_cards, update_index
b = find_book(Path(sys.argv[1]))
cards, _ = lint_cards(b, check_sources=False)
update_index(b, cards)
print(card_mentions(b.db, cards.require(sys.argv[2])).total)
"""
BARE_CARD = """
import sys
from pathlib import Path
from novelmuse.book import find_book
from novelmuse.memory import card_view
print(card_view(find_book(Path(sys.argv[1])), sys.argv[2], int(sys.argv[3])).state)
"""
BARE_TOKENIZE = """
import sys
from pathlib import Path
import rjieba
from novelmuse.book import find_book, read_chapter_file
book = find_book(Path(sys.argv[1]))
for n, p in book.chapter_paths().items():
    rjieba.cut(read_chapter_file(n, p).body)
"""


@dataclass
class Run:
    cpu: float  # seconds, user + system, best of the runs
    rss_mb: float  # peak resident set of that best run


def measure(args: list[str], runs: int, cwd: Path | None = None, before: Path | None = None) -> Run:
    """Best of `runs` whole-process CPU times of `args` (and that run's peak memory). `before`: a book whose
    `.muse` is removed before each run (from scratch)."""
    best = Run(float("inf"), 0.0)
    for _ in range(runs):
        if before is not None:
            shutil.rmtree(before / ".muse", ignore_errors=True)
        proc = subprocess.Popen(args, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        # 1: a check found errors (the rules here are made to hit); 4: `muse sync` without a model leaves the fact
        # cards stale (not evaluated) — the index, which is what is timed, is built either way
        if proc.returncode not in (0, 1, 4):
            raise SystemExit(f"{' '.join(map(str, args))} exited {proc.returncode}: {err.decode()[-2000:]}")
        cpu = usage.ru_utime + usage.ru_stime
        if cpu < best.cpu:
            best = Run(cpu, usage.ru_maxrss / 1024)
    return best


def compile_bytecode() -> None:
    """Write novelmuse's bytecode caches, as an installed package has them: with PYTHONDONTWRITEBYTECODE set
    (as on this machine) an editable install would otherwise compile every imported module from source on every
    run (~0.03 s of a command)."""
    package = Path(find_book.__code__.co_filename).parent.parent
    subprocess.run([PY, "-m", "compileall", "-q", str(package)], check=True, stdout=subprocess.DEVNULL)


def muse(*args: str | Path) -> list[str]:
    return [PY, "-m", "novelmuse", *map(str, args)]


def bare(code: str, *args: str | Path) -> list[str]:
    return [PY, "-c", code, *map(str, args)]


@dataclass
class Row:
    name: str
    command: Run
    baseline: Run | None
    target_s: float | None = None
    target_mb: float | None = None

    @property
    def met(self) -> bool | None:
        if self.target_s is None and self.target_mb is None:
            return None
        return (self.target_s is None or self.command.cpu <= self.target_s) and (
            self.target_mb is None or self.command.rss_mb <= self.target_mb
        )


def write_rules(root: Path, n: int) -> None:
    phrases = draw_phrases(SANGUO.read_text(encoding="utf-8"), n)
    half = len(phrases) // 2
    lines = [f"禁止:{p}" for p in phrases[:half]] + [f"疲劳词:{p}≤2" for p in phrases[half:]]
    (root / "rules.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def startup_rows(tmp: Path, runs: int) -> list[Row]:
    one = tmp / "one"
    write_book(one, 1)  # the first chapter of 三国演义
    write_rules(one, 20)
    measure(muse("check", "--book", one), 1)  # creates the database once
    typer_command = measure(bare(BARE_TYPER_COMMAND), runs)
    return [
        Row("`muse --help`", measure(muse("--help"), runs), measure(bare(BARE_STARTUP), runs), 0.15),
        Row("`muse check`, 1-chapter book", measure(muse("check", "--book", one), runs), typer_command, 0.15),
        Row("(bare Typer command, check's options)", typer_command, measure(bare(BARE_STARTUP), runs)),
    ]


def size_label(chars: int) -> str:
    return f"{chars / 1_000_000:g}M"


def size_rows(tmp: Path, chars: int, runs: int) -> list[Row]:
    label = size_label(chars)
    root = tmp / f"book{label}"
    n_chapters, _ = write_book(root, chars)
    write_rules(root, 1000)
    big = tmp / f"book{label}-10k"
    shutil.copytree(root, big)
    write_rules(big, 10_000)
    five = chars >= 5_000_000
    rows = [
        Row(
            f"`muse sync` from scratch, {label}",
            measure(muse("sync", "--book", root), max(1, runs - 1), before=root),
            measure(bare(BARE_TOKENIZE, root), max(1, runs - 1)),
            5.0 if five else None,
        )
    ]
    measure(muse("sync", "--book", root), 1)  # leaves the index warm for search and mentions
    half = str(n_chapters // 2)
    rows.append(
        Row(
            f"`muse search` warm, {label}",
            measure(muse("search", QUERY, "--before", half, "--book", root), runs),
            measure(bare(BARE_SEARCH, root, QUERY, half), runs),
            0.25,
        )
    )
    rows.append(
        Row(
            f"`muse mentions` warm, {label}",
            measure(muse("mentions", NAME, "--book", root), runs),
            measure(bare(BARE_MENTIONS, root, NAME), runs),
        )
    )
    json_1k = measure(muse("check", "--json", "--book", root), runs)
    bare_1k = measure(bare(BARE_CHECK, root), runs)
    rows.append(Row(f"`muse check --json` 1,000 rules, {label}", json_1k, bare_1k, *((0.5, 150) if five else ())))
    rows.append(
        Row(
            f"`muse check --json` 10,000 rules, {label}",
            measure(muse("check", "--json", "--book", big), runs),
            measure(bare(BARE_CHECK, big), runs),
            *((1.5, 300) if five else ()),
        )
    )
    rows.append(
        Row(
            f"`muse check` terminal 1,000 rules, {label}",
            measure(muse("check", "--book", root), runs),
            bare_1k,
            0.8 if five else None,
        )
    )
    return rows


def cards_rows(tmp: Path, runs: int) -> list[Row]:
    root = tmp / "cards"
    write_cards_book(root)
    card_args = ("角色7", "500")
    measure(bare(BARE_CARD, root, *card_args), 1)  # replays once and stores the per-card cache
    return [
        Row(
            "`muse cards show X --as-of N`, 500 cards",
            measure(muse("cards", "show", card_args[0], "--as-of", card_args[1], "--book", root), runs),
            measure(bare(BARE_CARD, root, *card_args), runs),
            0.3,
        )
    ]


def report(rows: list[Row]) -> bool:
    print(f"\n{'command (whole process, CPU, best of runs)':52} {'muse':>9} {'MB':>5} {'bare':>9} {'ratio':>6}  target")
    ok = True
    for r in rows:
        base = f"{r.baseline.cpu:8.3f}s" if r.baseline else f"{'—':>9}"
        ratio = f"{r.command.cpu / r.baseline.cpu:5.1f}x" if r.baseline and r.baseline.cpu else f"{'—':>6}"
        target = []
        if r.target_s is not None:
            target.append(f"≤ {r.target_s:g} s")
        if r.target_mb is not None:
            target.append(f"≤ {r.target_mb:g} MB")
        mark = {None: "", True: "  met", False: "  MISSED"}[r.met]
        ok &= r.met is not False
        print(f"{r.name:52} {r.command.cpu:8.3f}s {r.command.rss_mb:5.0f} {base} {ratio}  {', '.join(target)}{mark}")
    print("(ratio = muse / bare script doing the same work in the same run)")
    return ok


def growth(rows: list[Row], sizes: list[int]) -> bool:
    if len(sizes) < 2:
        return True
    lo, hi = size_label(sizes[0]), size_label(sizes[-1])
    linear = sizes[-1] / sizes[0]
    print(f"\ngrowth {lo} → {hi} (linear = {linear:.1f}x):")
    ok = True
    by_name = {r.name: r for r in rows}
    for r in rows:
        if not r.name.endswith(f", {lo}"):
            continue
        other = by_name.get(r.name[: -len(lo)] + hi)
        if other is None:
            continue
        g = other.command.cpu / r.command.cpu
        flag = "" if g <= 1.3 * linear else "  MORE THAN LINEAR"
        ok &= not flag
        print(f"  {r.name[: -len(lo) - 2]:48} {g:5.1f}x{flag}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,5", help="book sizes in millions of characters (default 1,5)")
    ap.add_argument("--runs", type=int, default=3, help="runs per command; the best is kept (default 3)")
    args = ap.parse_args()
    sizes = [int(float(s) * 1_000_000) for s in args.sizes.split(",")]
    print(f"bench_commands: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    find_book  # noqa: B018  (the library is importable before anything is timed)
    compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        rows = startup_rows(tmp, args.runs)
        for chars in sizes:
            rows += size_rows(tmp, chars, args.runs)
        rows += cards_rows(tmp, args.runs)
    ok = report(rows)
    ok &= growth(rows, sizes)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
