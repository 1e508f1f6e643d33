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
| display | each read-only command of `DISPLAY`, on the demo's book | `import typer, rich.console` | ≤ 0.5 s |

Three more rows (issue "the first hour", "Display commands fast") put a command beside a script doing the
user's job by hand, without novelmuse (`python -c`); the target is the ratio muse / script, both timed
alternately in the same run (`measure_pair`: the load of a shared machine drifts within a minute):

| row | command | hand-written baseline | target |
|---|---|---|---|
| ÷ bare grep | `muse search Q --before N`, warm | `BARE_GREP` | ≤ 4.2× |
| ÷ bare Aho–Corasick | `muse check --json`, 1,000 rules | `BARE_AHOCORASICK` | ≤ 1.5× |
| ÷ naive YAML | `muse cards show X --as-of N`, 500 cards | `NAIVE_CARD` | ≤ 0.43× |

`BARE_GREP` globs `chapters/*.md`, reads each and keeps the lines containing Q. `BARE_AHOCORASICK` reads each
chapter, builds one `ahocorasick_rs` automaton (the rules engine's library) over the 1,000 phrases of rules.txt
and dumps every overlapping hit of every chapter (phrase index, start, end) as compact JSON. `NAIVE_CARD`
`yaml.safe_load`s every card file, reads the fact cards' rows from the store, and takes the card's attribute
ranges (then its fact states) as of N.

Targets are for the 5M-character book. Growth: the size-dependent rows at 1M and 5M, and their ratio (5.0 =
linear; flagged when above 1.3 × linear).
Bytecode caches are written first (an installed package has them; see `compile_bytecode`).

`--before PYTHON` adds a column: the same muse commands run by another checkout's interpreter (say, a venv of
the code before issue 17: `git worktree add ../before <commit>`, a venv there with its constraints), each on its
own copy of the books, so "before" and "now" come from one machine in one run — absolute seconds differ by up to 1.6×
between machines of the same kind here, ratios do not.
The machine's load average is printed at start and end: on a shared 2-core machine CPU time still rises
with load (caches, frequency), so read the ratios.

    python benchmarks/bench_commands.py [--sizes 1,5] [--runs 3] [--only search,check,cards]
        [--before ../before/.venv/bin/python]

`--only` runs some groups of rows (startup, display, sync, search, mentions, check, cards; default all); the
search, mentions and check groups need the book, which is built (and, for search and mentions, synced) anyway.
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
#: The hand-written baselines (no novelmuse import): what a user would script to do the command's job.
BARE_GREP = """
import glob, sys
root, query = sys.argv[1], sys.argv[2]
for path in sorted(glob.glob(root + "/chapters/*.md")):
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f.read().splitlines(), 1):
            if query in line:
                print(path, i, line, sep=":")
"""
BARE_AHOCORASICK = """
import glob, json, sys
import ahocorasick_rs
root = sys.argv[1]
with open(root + "/rules.txt", encoding="utf-8") as f:  # 禁止:PHRASE and 疲劳词:PHRASE≤N, one a line
    phrases = [line.partition(":")[2].partition("≤")[0] for line in f.read().splitlines() if line]
ac = ahocorasick_rs.AhoCorasick(phrases)
hits = {}
for path in sorted(glob.glob(root + "/chapters/*.md")):
    with open(path, encoding="utf-8") as f:
        hits[path] = [[p, s, e] for p, s, e in ac.find_matches_as_indexes(f.read(), overlapping=True)]
sys.stdout.write(json.dumps(hits, separators=(",", ":")))  # one string: json.dump's chunked writes cost 2.5x
"""
NAIVE_CARD = """
import glob, json, os, sqlite3, sys
import yaml
root, name, as_of = sys.argv[1], sys.argv[2], int(sys.argv[3])
cards = []
for path in sorted(glob.glob(root + "/cards/*.yaml")):
    with open(path, encoding="utf-8") as f:
        cards.append(yaml.safe_load(f))
card = next(c for c in cards if name in (c["id"], c["name"], *c.get("aliases", [])))
state = {}
for attr, ranges in (card.get("attributes") or {}).items():
    for r in ranges:
        if r["from"] <= as_of and as_of <= r.get("to", as_of):
            state[attr] = r["value"]
db = root + "/.muse/muse.db"  # the fact cards: the newest of each chapter up to N, its state changes applied
if os.path.exists(db):
    newest = {}
    for chapter, output in sqlite3.connect(db).execute(
        "SELECT chapter, output_json FROM fact_cards WHERE chapter <= ? ORDER BY id", (as_of,)
    ):
        newest[chapter] = json.loads(output)
    for chapter in sorted(newest):
        for s in newest[chapter].get("states", []):
            if s["entity"] in (card["id"], card["name"], *card.get("aliases", [])):
                state[s["attribute"]] = s["value"]
print(card["id"], card["name"], state)
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


def measure_pair(command: list[str], baseline: list[str], runs: int) -> tuple[Run, Run]:
    """Best of `runs` of each, the two run alternately: on a shared machine the load drifts within a minute, and
    a ratio of two series taken one after the other measures that drift too."""
    pairs = [(measure(command, 1), measure(baseline, 1)) for _ in range(runs)]
    return min((a for a, _ in pairs), key=lambda r: r.cpu), min((b for _, b in pairs), key=lambda r: r.cpu)


def ratio_row(name: str, command: list[str], baseline: list[str], runs: int, target: float | None) -> Row:
    """A hand-written-baseline row: the command and its baseline timed alternately (`measure_pair`)."""
    now, base = measure_pair(command, baseline, runs)
    return Row(name, now, base, target_ratio=target)


def compile_bytecode(py: str = PY) -> None:
    """Write the bytecode caches of `py`'s novelmuse, as an installed package has them: with
    PYTHONDONTWRITEBYTECODE set (as on this machine) an editable install would otherwise compile every imported
    module from source on every run (~0.03 s of a command)."""
    code = "import compileall, os, novelmuse; compileall.compile_dir(os.path.dirname(novelmuse.__file__), quiet=1)"
    subprocess.run([py, "-c", code], check=True, stdout=subprocess.DEVNULL, env=ENV)


def muse(*args: str | Path, py: str = PY) -> list[str]:
    return [py, "-m", "novelmuse", *map(str, args)]


def bare(code: str, *args: str | Path) -> list[str]:
    return [PY, "-c", code, *map(str, args)]


@dataclass
class Row:
    name: str
    command: Run
    baseline: Run | None
    target_s: float | None = None
    target_mb: float | None = None
    before: Run | None = None  # the same command by --before's interpreter
    target_ratio: float | None = None  # muse / baseline, CPU

    @property
    def ratio(self) -> float | None:
        return self.command.cpu / self.baseline.cpu if self.baseline and self.baseline.cpu else None

    @property
    def met(self) -> bool | None:
        if self.target_s is None and self.target_mb is None and self.target_ratio is None:
            return None
        ratio = self.ratio
        return (
            (self.target_s is None or self.command.cpu <= self.target_s)
            and (self.target_mb is None or self.command.rss_mb <= self.target_mb)
            and (self.target_ratio is None or (ratio is not None and ratio <= self.target_ratio))
        )


def write_rules(root: Path, n: int) -> None:
    phrases = draw_phrases(SANGUO.read_text(encoding="utf-8"), n)
    half = len(phrases) // 2
    lines = [f"禁止:{p}" for p in phrases[:half]] + [f"疲劳词:{p}≤2" for p in phrases[half:]]
    (root / "rules.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@dataclass
class Muse:
    """Runs a muse command by this checkout's interpreter and, with `--before`, by the other one too, each on
    its own copy of the book (their databases differ)."""

    runs: int
    before_py: str | None

    def twin(self, root: Path) -> Path:
        other = root.with_name(root.name + "-before")
        if not other.exists():
            shutil.copytree(root, other, ignore=shutil.ignore_patterns(".muse"))
        return other

    def run(
        self, root: Path | None, *args: str, runs: int | None = None, scratch: bool = False
    ) -> tuple[Run, Run | None]:
        """(now, before) of `muse ARGS [--book ROOT]`; `scratch`: the book's `.muse` is removed before each run."""
        n = self.runs if runs is None else runs

        def one(py: str, book: Path | None) -> Run:
            where = ("--book", str(book)) if book is not None else ()
            return measure(muse(*args, *where, py=py), n, before=book if scratch else None)

        now = one(PY, root)
        if self.before_py is None:
            return now, None
        return now, one(self.before_py, self.twin(root) if root is not None else None)

    def warm(self, root: Path, *args: str) -> None:
        """Run once, untimed, by both interpreters (creates the database, builds the index)."""
        self.run(root, *args, runs=1)


def row(
    name: str,
    timed: tuple[Run, Run | None],
    baseline: Run | None,
    target_s: float | None = None,
    target_mb: float | None = None,
) -> Row:
    now, before = timed
    return Row(name, now, baseline, target_s, target_mb, before)


def startup_rows(tmp: Path, m: Muse) -> list[Row]:
    one = tmp / "one"
    write_book(one, 1)  # the first chapter of 三国演义
    write_rules(one, 20)
    m.warm(one, "check")
    typer_command = measure(bare(BARE_TYPER_COMMAND), m.runs)
    return [
        row("`muse --help`", m.run(None, "--help"), measure(bare(BARE_STARTUP), m.runs), 0.15),
        row("`muse check`, 1-chapter book", m.run(one, "check"), typer_command, 0.15),
        Row("(bare Typer command, check's options)", typer_command, measure(bare(BARE_STARTUP), m.runs)),
    ]


#: The commands that only read and display, timed on the demo's copy of the sample book (its drafts, write runs,
#: reviews and judge panel made by `examples/demo.py`).
DISPLAY = (
    ("outline", "show", "11"),
    ("outline", "lint"),
    ("rubrics",),
    ("replay", "runs"),
    ("gate", "show"),
    ("write", "show", "11"),
    ("drafts",),
    ("status",),
    ("calls",),
)


def display_rows(tmp: Path, m: Muse) -> list[Row]:
    """Every display command as a whole process on the demo's book, against a bare start-up."""
    work = tmp / "demo"
    subprocess.run(
        [PY, str(HERE.parent / "examples" / "demo.py"), "--workdir", str(work)],
        check=True,
        stdout=subprocess.DEVNULL,
        env=ENV,
    )
    book = work / "sanguo"
    startup = measure(bare(BARE_STARTUP), m.runs)
    return [
        row(f"`muse {' '.join(args)}`, demo book", m.run(None if args == ("rubrics",) else book, *args), startup, 0.5)
        for args in DISPLAY
    ]


#: The groups of rows `--only` can choose from.
GROUPS = frozenset({"startup", "display", "sync", "search", "mentions", "check", "cards"})


def size_label(chars: int) -> str:
    return f"{chars / 1_000_000:g}M"


def size_rows(tmp: Path, chars: int, m: Muse, groups: frozenset[str] = GROUPS) -> list[Row]:
    label = size_label(chars)
    five = chars >= 5_000_000
    root = tmp / f"book{label}"
    n_chapters, _ = write_book(root, chars)
    write_rules(root, 1000)
    fewer = max(1, m.runs - 1)
    rows = []
    if "sync" in groups:
        rows.append(
            row(
                f"`muse sync` from scratch, {label}",
                m.run(root, "sync", runs=fewer, scratch=True),
                measure(bare(BARE_TOKENIZE, root), fewer),
                *((5.0,) if five else ()),
            )
        )
    if groups & {"search", "mentions"}:
        m.warm(root, "sync")  # leaves the index warm for search and mentions
    half = str(n_chapters // 2)
    if "search" in groups:
        search = row(
            f"`muse search` warm, {label}",
            m.run(root, "search", QUERY, "--before", half),
            measure(bare(BARE_SEARCH, root, QUERY, half), m.runs),
            *((0.25,) if five else ()),
        )
        grep = ratio_row(
            f"  ÷ bare grep of the book, {label}",
            muse("search", QUERY, "--before", half, "--book", root),
            bare(BARE_GREP, root, QUERY),
            m.runs,
            4.2 if five else None,
        )
        rows += [search, grep]
    if "mentions" in groups:
        rows.append(
            row(
                f"`muse mentions` warm, {label}",
                m.run(root, "mentions", NAME),
                measure(bare(BARE_MENTIONS, root, NAME), m.runs),
            )
        )
    if "check" not in groups:
        return rows
    big = tmp / f"book{label}-10k"
    shutil.copytree(root, big, ignore=shutil.ignore_patterns(".muse"))
    write_rules(big, 10_000)
    bare_1k = measure(bare(BARE_CHECK, root), m.runs)
    check = row(
        f"`muse check --json` 1,000 rules, {label}",
        m.run(root, "check", "--json"),
        bare_1k,
        *((0.5, 150) if five else ()),
    )
    ac = ratio_row(
        f"  ÷ bare Aho–Corasick pass, {label}",
        muse("check", "--json", "--book", root),
        bare(BARE_AHOCORASICK, root),
        m.runs,
        1.5 if five else None,
    )
    rows += [check, ac]
    rows.append(
        row(
            f"`muse check --json` 10,000 rules, {label}",
            m.run(big, "check", "--json"),
            measure(bare(BARE_CHECK, big), m.runs),
            *((1.5, 300) if five else ()),
        )
    )
    rows.append(
        row(f"`muse check` terminal 1,000 rules, {label}", m.run(root, "check"), bare_1k, *((0.8,) if five else ()))
    )
    return rows


def cards_rows(tmp: Path, m: Muse) -> list[Row]:
    root = tmp / "cards"
    write_cards_book(root)
    card_args = ("角色7", "500")
    measure(bare(BARE_CARD, root, *card_args), 1)  # replays once and stores the per-card cache
    show = ("cards", "show", card_args[0], "--as-of", card_args[1])
    m.warm(root, *show)
    shown = row(
        "`muse cards show X --as-of N`, 500 cards",
        m.run(root, *show),
        measure(bare(BARE_CARD, root, *card_args), m.runs),
        0.3,
    )
    naive = ratio_row(
        "  ÷ naive YAML script (safe_load every card)",
        muse(*show, "--book", root),
        bare(NAIVE_CARD, root, *card_args),
        m.runs,
        0.43,
    )
    return [shown, naive]


def report(rows: list[Row]) -> bool:
    with_before = any(r.before for r in rows)
    head = f"{'before':>9} {'MB':>5} " if with_before else ""
    title = "command (whole process, CPU, best of runs)"
    print(f"\n{title:52} {head}{'muse':>9} {'MB':>5} {'bare':>9} {'ratio':>6}  target")
    ok = True
    for r in rows:
        was = ""
        if with_before:
            was = f"{r.before.cpu:8.3f}s {r.before.rss_mb:5.0f} " if r.before else f"{'—':>9} {'':5} "
        base = f"{r.baseline.cpu:8.3f}s" if r.baseline else f"{'—':>9}"
        ratio = f"{r.ratio:5.2f}x" if r.ratio is not None else f"{'—':>6}"
        target = []
        if r.target_ratio is not None:
            target.append(f"≤ {r.target_ratio:g}x")
        if r.target_s is not None:
            target.append(f"≤ {r.target_s:g} s")
        if r.target_mb is not None:
            target.append(f"≤ {r.target_mb:g} MB")
        mark = {None: "", True: "  met", False: "  MISSED"}[r.met]
        ok &= r.met is not False
        print(
            f"{r.name:52} {was}{r.command.cpu:8.3f}s {r.command.rss_mb:5.0f} {base} {ratio}  {', '.join(target)}{mark}"
        )
    print("(ratio = muse / bare script doing the same work in the same run)")
    if with_before:
        print("(before = the same command by --before's interpreter, on its own copy of the book)")
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
    ap.add_argument("--before", metavar="PYTHON", help="also run every muse command by this interpreter")
    ap.add_argument(
        "--only",
        default=",".join(sorted(GROUPS)),
        help=f"comma-separated groups of rows to run, of: {', '.join(sorted(GROUPS))} (default all)",
    )
    args = ap.parse_args()
    sizes = [int(float(s) * 1_000_000) for s in args.sizes.split(",")]
    groups = frozenset(g.strip() for g in args.only.split(",") if g.strip())
    if groups - GROUPS:
        ap.error(
            f"--only: unknown group(s) {', '.join(sorted(groups - GROUPS))}; choose from {', '.join(sorted(GROUPS))}"
        )
    print(f"bench_commands: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    find_book  # noqa: B018  (the library is importable before anything is timed)
    compile_bytecode()
    if args.before:
        compile_bytecode(args.before)
    m = Muse(args.runs, args.before)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        rows = startup_rows(tmp, m) if "startup" in groups else []
        if "display" in groups:
            rows += display_rows(tmp, m)
        if groups & {"sync", "search", "mentions", "check"}:
            for chars in sizes:
                rows += size_rows(tmp, chars, m, groups)
        if "cards" in groups:
            rows += cards_rows(tmp, m)
    ok = report(rows)
    ok &= growth(rows, sizes)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
