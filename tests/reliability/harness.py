"""The crash and fault harness (issue 18 item 7): every I/O point of `import`, `sync`, `review`, `judge` and
`vault recover` (of a killed review), crashed and failed on purpose, then the book's invariants checked.

    .venv/bin/python -m tests.reliability.harness            # the full harness (documented in the README)
    .venv/bin/python -m tests.reliability.harness --every 5  # every 5th point only (faster)

For each command, a clean run on a fresh copy of its scenario counts its I/O points (`novelmuse.iopoints`:
each file write, fsync, rename or link, unlink, SQLite commit and model request). Then, at each point in turn:

* **crash** — an exception nothing catches is raised there (`Crash`, a BaseException: no handler of
  novelmuse may swallow it); the process's runs are then treated as dead (their pid is replaced by that of a
  finished process, as if the process had died there), and the next command (`muse vault recover`, or the
  import again when no book was made yet) recovers;
* **kill -9** (a sample of points) — the command runs in a real subprocess that SIGKILLs itself at the point;
* **faults** — an I/O error is raised there instead: ENOSPC and EIO at a write, EIO at an fsync, a rename,
  an unlink and a model request, SQLITE_FULL and SQLITE_IOERR at a commit. The command must end with one
  `error[CODE]` line and exit 2 or 3 (or end as a clean run may: 0, 1, 4 — the write was optional, or the
  step it failed is reported as not evaluated), never a traceback or `error[INTERNAL]` (exit 70).

After each trial and recovery the invariants of `invariants.check_book` must hold: integrity, receipts vs vault,
no run left running, no temp debris, the author's files untouched except those the command writes, and those
whole. Deterministic: the same points, in the same order, every run — no timing, no randomness.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from novelmuse.iopoints import PointKind, hooked

from .invariants import check_book, snapshot

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sanguo"
SCRIPT = ROOT / "examples" / "demo-script.yaml"
SCRIPTED = '\n[providers.script]\nkind = "scripted"\nscript = "demo-script.yaml"\n'
SCRIPTED += '\n[roles]\ndefault = "script:scripted-demo-1"\n'


class Crash(BaseException):
    """The injected crash: not an Exception, so nothing in novelmuse handles it (as nothing handles a kill)."""


@dataclass(frozen=True)
class Scenario:
    """A command on a prepared book: `prepare` fills the template once; `args` names the copy's paths."""

    name: str
    prepare: Callable[[Path], None]
    args: Callable[[Path], list[str]]
    book: Callable[[Path], Path]  # the book directory inside a copy of the template
    writes: Callable[[str], bool] = lambda rel: False  # author files the command's job is to write


def _sample_book(book: Path, *, scripted: bool = True) -> None:
    """The sample book; `scripted`: its models answered by the demo's script (as in `python3 dev.py demo`)."""
    for name in ("chapters", "cards", "outlines"):
        shutil.copytree(SAMPLE / name, book / name)
    shutil.copy2(SAMPLE / "rules.txt", book / "rules.txt")
    toml = (SAMPLE / "book.toml").read_text(encoding="utf-8")
    if scripted:
        shutil.copy2(SCRIPT, book / "demo-script.yaml")
        toml = toml.rstrip("\n") + "\n" + SCRIPTED
    (book / "book.toml").write_text(toml, encoding="utf-8")


def _prepare_import(work: Path) -> None:
    from corpus import SANGUO

    text = Path(SANGUO).read_text(encoding="utf-8")
    (work / "novel.txt").write_text(text[: text.index("第四回")], encoding="utf-8")


def _prepare_recover(work: Path) -> None:
    """A book whose `muse review 2` was killed at its second model request: a dead run, a pending receipt, an open
    lease and its orphan request — what `muse vault recover` must close."""
    _sample_book(work / "book")
    proc = muse_killed(["review", "2", "--book", str(work / "book")], 1, "send")
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def _prepare_judge(work: Path) -> None:
    _sample_book(work / "book")
    shutil.copy2(work / "book" / "chapters" / "0002.md", work / "book" / "a.md")
    code, _out, err = run_muse(["review", "2", "--apply", "--book", str(work / "book")])
    assert code == 0, err
    shutil.copy2(work / "book" / "chapters" / "0002.md", work / "book" / "b.md")


SCENARIOS = [
    Scenario(
        "import",
        _prepare_import,
        lambda w: ["import", str(w / "novel.txt"), "--into", str(w / "book")],
        lambda w: w / "book",
        writes=lambda rel: rel in ("book.toml", "rules.txt", ".gitignore") or rel.startswith("chapters/"),
    ),
    Scenario(
        "sync",
        lambda w: _sample_book(w / "book", scripted=False),
        lambda w: ["sync", "--book", str(w / "book")],
        lambda w: w / "book",
    ),
    Scenario(
        "review",
        lambda w: _sample_book(w / "book"),
        lambda w: ["review", "2", "--book", str(w / "book")],
        lambda w: w / "book",
    ),
    Scenario(
        "recover", _prepare_recover, lambda w: ["vault", "recover", "--book", str(w / "book")], lambda w: w / "book"
    ),
    Scenario(
        "judge",
        _prepare_judge,
        lambda w: [
            "judge",
            "--profile",
            "quality_gate",
            "--chapter",
            "2",
            "--item",
            "demo-ch2",
            "--seed",
            "demo",
            str(w / "book" / "a.md"),
            str(w / "book" / "b.md"),
            "--book",
            str(w / "book"),
        ],
        lambda w: w / "book",
    ),
]

#: fault → (the point kinds it applies to, the exception it raises)
FAULTS: dict[str, tuple[tuple[PointKind, ...], Callable[[], BaseException]]] = {
    "ENOSPC": (("write",), lambda: OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))),
    "EIO": (("write", "fsync", "rename", "unlink", "send"), lambda: OSError(errno.EIO, os.strerror(errno.EIO))),
    "SQLITE_FULL": (("commit",), lambda: _sqlite_error(13, "SQLITE_FULL", "database or disk is full")),
    "SQLITE_IOERR": (("commit",), lambda: _sqlite_error(10, "SQLITE_IOERR", "disk I/O error")),
}


def _sqlite_error(code: int, name: str, message: str) -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError(message)
    exc.sqlite_errorcode = code  # type: ignore[attr-defined]  # as SQLite's C layer sets it
    exc.sqlite_errorname = name  # type: ignore[attr-defined]
    return exc


def run_muse(args: list[str], hook: Callable[[PointKind, str], None] | None = None) -> tuple[int, str, str]:
    """`muse ARGS` in this process (with `hook` on the I/O points); exit code, stdout, stderr."""
    from novelmuse.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        hooked(hook) if hook is not None else contextlib.nullcontext(),
    ):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


@dataclass
class Tally:
    """What the harness did and found."""

    crash_points: int = 0
    kills: int = 0
    faults: int = 0
    violations: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The summary line the documented command prints."""
        return (
            f"crash points {self.crash_points}, faults {self.faults}, invariant violations {len(self.violations)}"
            f" (kill -9 at {self.kills} of the points)"
        )


class Trials:
    """One scenario's template (prepared once), its clean run's points, and fresh copies for each trial."""

    def __init__(self, scenario: Scenario, base: Path):
        self.scenario = scenario
        self.base = base
        self.template = base / "template"
        self.template.mkdir(parents=True)
        scenario.prepare(self.template)
        self.before = snapshot(scenario.book(self.template))
        clean = self.fresh("clean")
        points: list[tuple[PointKind, str]] = []
        code, _out, err = run_muse(scenario.args(clean), lambda kind, target: points.append((kind, target)))
        if code not in (0, 1, 4):  # done, findings, or a step not evaluated
            raise RuntimeError(f"{scenario.name}: the clean run failed ({code}): {err.strip()[-300:]}")
        self.points = points
        self.whole = snapshot(scenario.book(clean))

    @contextlib.contextmanager
    def copy(self, label: str) -> Iterator[Path]:
        """A fresh copy of the template, removed afterwards."""
        work = self.fresh(label)
        try:
            yield work
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def fresh(self, label: str) -> Path:
        work = self.base / label
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(self.template, work, symlinks=True)
        return work

    def check(self, work: Path, what: str) -> list[str]:
        """Recover (the next command), then the invariants; violations are prefixed with `what`."""
        book = self.scenario.book(work)
        # the next command: a recovery pass, or (no book yet: an import killed before book.toml) the same again
        again = not (book / "book.toml").is_file()
        args = self.scenario.args(work) if again else ["vault", "recover", "--book", str(book)]
        code, _out, err = run_muse(args)
        if code != 0:
            return [f"{what}: the next command failed ({code}): {err.strip()[-200:]}"]
        found = check_book(book, before=self.before, may_write=self.scenario.writes, whole=self.whole)
        return [f"{what}: {problem}" for problem in found]

    def crash_at(self, index: int) -> list[str]:
        """Raise `Crash` at point `index`; the process is then taken for dead; recover; check."""
        seen = iter(range(len(self.points) + 1_000_000))

        def hook(kind: PointKind, target: str) -> None:
            if next(seen) == index:
                raise Crash(kind)

        with self.copy(f"crash{index}") as work:
            with contextlib.suppress(Crash):
                run_muse(self.scenario.args(work), hook)
            _bury_this_process(self.scenario.book(work))
            return self.check(work, f"{self.scenario.name} crash at #{index} {self.points[index][0]}")

    def fault_at(self, index: int, fault: str) -> list[str]:
        """Raise `fault` at point `index`: a clear error (or success), never a traceback; recover; check."""
        seen = iter(range(len(self.points) + 1_000_000))
        make = FAULTS[fault][1]

        def hook(kind: PointKind, target: str) -> None:
            if next(seen) == index:
                raise make()

        what = f"{self.scenario.name} {fault} at #{index} {self.points[index][0]}"
        with self.copy(f"fault{index}") as work:
            code, _out, err = run_muse(self.scenario.args(work), hook)
            problems = []
            lines = [ln for ln in err.splitlines() if ln.startswith("error[")]
            if code not in (0, 1, 2, 3, 4) or "error[INTERNAL]" in err or "Traceback" in err:
                problems.append(f"{what}: exit {code}: {err.strip()[-300:]}")
            elif code in (2, 3) and not lines:
                problems.append(f"{what}: exit {code} without an error[CODE] line")
            _bury_this_process(self.scenario.book(work))
            return problems + self.check(work, what)

    def kill_at(self, index: int) -> list[str] | None:
        """Run the command in a subprocess that SIGKILLs itself at point `index`; recover; check. None when the
        run ended before that point (a point that depends on timing: the file-hash cache's racy-mtime rule)."""
        with self.copy(f"kill{index}") as work:
            proc = muse_killed(self.scenario.args(work), index)
            what = f"{self.scenario.name} kill -9 at #{index} {self.points[index][0]}"
            if proc.returncode in (0, 1, 4):
                return None
            if proc.returncode != -signal.SIGKILL:
                return [f"{what}: exit {proc.returncode} before the point: {proc.stderr.strip()[-300:]}"]
            return self.check(work, what)


def muse_killed(args: list[str], index: int, kind: str | None = None) -> subprocess.CompletedProcess[str]:
    """`muse ARGS` in a subprocess that SIGKILLs itself at its `index`-th I/O point (0-based; of `kind` only,
    when given)."""
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path[:0] = [{str(ROOT / "src")!r}, {str(ROOT)!r}]
        from novelmuse.cli import main
        from novelmuse.iopoints import hooked
        seen = [0]
        def hook(kind, target):
            if {kind!r} not in (None, kind):
                return
            if seen[0] == {index}:
                os.kill(os.getpid(), signal.SIGKILL)
            seen[0] += 1
        with hooked(hook):
            main(sys.argv[1:])
        """
    )
    env = {**os.environ, "MUSE_CONFIG": os.environ.get("MUSE_CONFIG", "/nonexistent/novelmuse-user-config.toml")}
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=300)


_DEAD_PID: list[int] = []


def _dead_pid() -> int:
    """The pid of a process that has finished (started once): what an in-process crash's runs are given."""
    if not _DEAD_PID:
        proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        _DEAD_PID.append(int(proc.stdout))
    return _DEAD_PID[0]


def _bury_this_process(book: Path) -> None:
    """After an in-process crash, make this process's runs still `running` those of a dead one (a real crash ends
    the process; this one goes on to the next trial). Their leases need no change: recovery closes a dead run
    first, and a lease of a run that no longer runs is judged crashed whatever its pid."""
    db = book / ".muse" / "muse.db"
    if not db.exists():
        return
    conn = sqlite3.connect(db)
    try:
        conn.execute("UPDATE runs SET pid = ? WHERE status = 'running' AND pid = ?", (_dead_pid(), os.getpid()))
        conn.commit()
    except sqlite3.OperationalError:
        pass  # a database the crash left without the runs table (before its migrations committed)
    finally:
        conn.close()


def select(count: int, every: int) -> list[int]:
    """Every `every`-th point index, always including the first and the last (the bounded in-suite sample)."""
    picked = set(range(0, count, max(1, every)))
    if count:
        picked |= {count - 1}
    return sorted(picked)


def kill_sample(points: list[tuple[PointKind, str]], per_kind: int = 1) -> list[int]:
    """The points where kill -9 is tried: the first `per_kind` of each kind, and the last point."""
    chosen: list[int] = []
    counts: dict[str, int] = {}
    for i, (kind, _target) in enumerate(points):
        if counts.get(kind, 0) < per_kind:
            chosen.append(i)
            counts[kind] = counts.get(kind, 0) + 1
    if points and len(points) - 1 not in chosen:
        chosen.append(len(points) - 1)
    return chosen


def run_harness(base: Path, *, every: int = 1, kills_per_kind: int = 1, names: list[str] | None = None) -> Tally:
    """Run the harness over the scenarios (all, or `names`) in `base`; return the tally."""
    tally = Tally()
    os.environ["MUSE_CONFIG"] = str(base / "no-user-config.toml")
    for scenario in SCENARIOS:
        if names and scenario.name not in names:
            continue
        trials = Trials(scenario, base / scenario.name)
        for index in select(len(trials.points), every):
            tally.violations += trials.crash_at(index)
            tally.crash_points += 1
            kind = trials.points[index][0]
            for fault, (kinds, _make) in FAULTS.items():
                if kind in kinds:
                    tally.violations += trials.fault_at(index, fault)
                    tally.faults += 1
        for index in kill_sample(trials.points, kills_per_kind):
            found = trials.kill_at(index)
            if found is not None:
                tally.violations += found
                tally.kills += 1
    return tally


def main(argv: list[str] | None = None) -> int:
    """The documented command: prints `crash points N, faults M, invariant violations V` (exit 1 if V > 0)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--every", type=int, default=1, help="crash and fault at every N-th point only")
    parser.add_argument("--kills-per-kind", type=int, default=2, help="kill -9 at the first K points of each kind")
    parser.add_argument("scenarios", nargs="*", help="import, sync, review, judge (default: all)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="muse-harness-") as tmp:
        tally = run_harness(Path(tmp), every=args.every, kills_per_kind=args.kills_per_kind, names=args.scenarios)
    for violation in tally.violations:
        print(violation)
    print(tally.line())
    return 1 if tally.violations else 0


if __name__ == "__main__":
    sys.exit(main())
