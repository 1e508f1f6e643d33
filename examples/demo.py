"""A guided tour of `muse` on the bundled sample book (examples/sanguo): `python3 dev.py demo`.

Part 1 runs on the sample book itself with no model configured — hard rules, story memory and a review
whose model steps are honestly `skipped(no model configured)`. Part 2 runs the editorial loop (and a
blind judge panel) on a throw-away copy (default `.demo/sanguo`, recreated each run) whose book.toml adds
the `scripted` provider, then writes chapter 11 from its confirmed fine outline (evidence round, a blocked
draft, its repair): canned answers from examples/demo-script.yaml stand in for a real model, and everything
novelmuse does with them (schema validation, verbatim quote checks, the paragraph splice, the computed
verdict, the detector gate, manifests, receipts) is real.

Each step prints a one-line header, then the command and its output. The demo knows which exit code each
step should give (`muse check` exits 1 when it finds an error, a step skipped for lack of a model exits 4); any
other exit code stops the demo with a message and a non-zero exit. Your user config ($MUSE_CONFIG) is ignored,
so no real model is called.
State is written only to gitignored places: examples/sanguo/.muse and the work directory.

    python examples/demo.py [--workdir DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "sanguo"
SCRIPT = ROOT / "examples" / "demo-script.yaml"
MARKER = "DEMO-COPY.txt"  # only a directory holding this file is ever deleted by the demo

BOOK_TOML_EXTRA = """
# ---- added by examples/demo.py for the demo copy (not in the sample book) ----
# The `scripted` provider serves the canned answers of demo-script.yaml: NOT a real model.
[providers.script]
kind = "scripted"
script = "demo-script.yaml"

[roles]
default = "script:scripted-demo-1"
"""


@dataclass(frozen=True)
class Step:
    """One command of the tour: what it shows, its arguments to `muse`, the exit codes it may give."""

    header: str
    args: tuple[str, ...]
    expect: frozenset[int] = frozenset({0})


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


@contextlib.contextmanager
def exclusive(work: Path) -> Iterator[None]:
    """One demo at a time per work directory: a second run would delete the first one's copy mid-tour.

    POSIX `flock` (released when the process ends, so a killed demo leaves no stale lock); on a platform
    without fcntl the demo runs unlocked.
    """
    with open(work / "demo.lock", "a", encoding="utf-8") as fh:
        try:
            import fcntl
        except ImportError:
            yield
            return
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            sys.exit(f"error[DEMO_BUSY]: another demo is running in {work} — wait for it, or use --workdir DIR")
        yield


def make_copy(work: Path) -> Path:
    """Recreate `work/sanguo`: the sample's chapters, cards, outlines and rules, plus a scripted book.toml."""
    copy = work / "sanguo"
    if copy.exists():
        if not (copy / MARKER).is_file():
            sys.exit(
                f"error[DEMO_DIR_NOT_OURS]: {copy} exists and was not made by the demo — remove it or use --workdir"
            )
        shutil.rmtree(copy)
    copy.mkdir(parents=True)
    (copy / MARKER).write_text("A throw-away copy of examples/sanguo made by examples/demo.py; recreated each run.\n")
    for name in ("chapters", "cards", "outlines"):
        shutil.copytree(SAMPLE / name, copy / name)
    shutil.copy2(SAMPLE / "rules.txt", copy / "rules.txt")
    shutil.copy2(SCRIPT, copy / "demo-script.yaml")
    toml = (SAMPLE / "book.toml").read_text(encoding="utf-8")
    (copy / "book.toml").write_text(toml.rstrip("\n") + "\n" + BOOK_TOML_EXTRA, encoding="utf-8")
    return copy


def sample_steps() -> list[Step]:
    """Part 1: the sample book as shipped, no model configured."""
    book = ("--book", _rel(SAMPLE))
    return [
        Step(
            "Hard rules on all ten chapters — exit 1 is expected: chapter 2 contains the forbidden phrase 后宫",
            ("check", *book),
            frozenset({1}),
        ),
        Step(
            "Story memory: register chapters, index paragraphs; no model, so fact cards are reported STALE — exit 4 "
            "is expected: not evaluated (a skip is never exit 0)",
            ("sync", *book),
            frozenset({4}),
        ),
        Step(
            "Foreshadow ledger as of chapter 2 (from the fine outlines, no model needed)",
            ("ledger", "--as-of", "2", *book),
        ),
        Step(
            "Canon card of 关羽, looked up by his alias 云长, as of chapter 5",
            ("cards", "show", "云长", "--as-of", "5", *book),
        ),
        Step("BM25 search over chapters before 5", ("search", "桃园结义", "--before", "5", *book)),
        Step("Where 曹操 (any of his names) is mentioned, per chapter", ("mentions", "曹操", "--before", "11", *book)),
        Step(
            "Review chapter 1 with no model configured — model steps say skipped(no model configured), never passed; "
            "exit 4 is expected: not evaluated",
            ("review", "1", *book),
            frozenset({4}),
        ),
        Step(
            "Fine-outline agent, dry run for chapter 12: its prompt from plan/ and the memory as of chapter 11 — the "
            "entry guard would refuse a real run (no passed Gate A/B receipts for this writer); no model is called",
            ("outline", "draft", "12", "--dry-run", *book),
        ),
        Step(
            "Where the book stands: every problem (forbidden phrase, stale fact cards, unparsed rule line …) with "
            "the next command to run",
            ("status", *book),
        ),
    ]


def scripted_steps(copy: Path) -> list[Step]:
    """Part 2: the editorial loop and a judge panel on the throw-away copy, answered by the scripted provider."""
    book = ("--book", _rel(copy))
    return [
        Step(
            "Review chapter 2 (SCRIPTED answers): rule rewrite of ¶19, consistency review, 7-dim editor, diff, then "
            "the quality gate on the final text (blind judges against the chapter's evidence pack, hard blocks)",
            ("review", "2", "--diff", *book),
        ),
        Step("Every model call with its receipts — provider kind (scripted), tokens, attempts", ("calls", *book)),
        Step("Tokens and cost by role and run — cost unknown: the scripted provider has no price", ("cost", *book)),
        Step(
            "Accept the stored revision into chapters/0002.md — the review resumes (no new review calls), the accept "
            "preflight finds the quality gate's stored decision (no new judge calls), the original is kept as a "
            "revision; the facts step then extracts the fact card of the new file",
            ("review", "2", "--apply", *book),
        ),
        Step(
            "Hard rules on chapter 2 after --apply, and the normalizer's proposal (SCRIPTED) for rules.txt's vague "
            "line 8 — exit 4 is expected: the 后宫 error is gone, but line 8 is not enforced yet (incomplete, "
            "never passed)",
            ("check", "--chapter", "2", "--normalize", *book),
            frozenset({4}),
        ),
        Step(
            "Apply the proposal just shown to rules.txt (the original line is kept above it as a comment)",
            ("rules", "normalize", "--write", *book),
        ),
        Step(
            "Hard rules on chapter 2 again: every rules.txt line is enforced now, and it passes",
            ("check", "--chapter", "2", *book),
        ),
        Step(
            "Blind 2+1 judge panel (SCRIPTED judges), original vs revised chapter 2, against chapter 2's evidence "
            "pack — exit 1 is expected: the original holds the forbidden 后宫, so the rule layer fires its "
            "source_safety hard block, and the gate fails it whatever its scores",
            (
                "judge",
                "--profile",
                "quality_gate",
                "--chapter",
                "2",
                "--item",
                "demo-ch2",
                "--seed",
                "demo",  # fixed, so the canned reports can name the random candidate ids
                _rel(SAMPLE / "chapters" / "0002.md"),
                _rel(copy / "chapters" / "0002.md"),
                *book,
            ),
            frozenset({1}),
        ),
        Step(
            "The HTML report of the copy: every rule hit, review quote, editor evidence and judge quote highlighted "
            "in the text; open the index.html it names in a browser",
            ("report", "--out", _rel(copy.parent / "report"), *book),
        ),
        Step(
            "The book as one EPUB 3 file (TXT and Markdown too; TXT imports back to identical chapter files)",
            ("export", "--format", "epub", "--out", _rel(copy.parent / "sanguo.epub"), "--force", *book),
        ),
        Step(
            "Confirm the fine outline of chapter 11 (已确认细纲): the writer works only from an outline whose sha256 "
            "the author confirmed",
            ("outline", "confirm", "11", *book),
        ),
        Step(
            "Write chapter 11 from its outline (SCRIPTED writer, detector, extractor, judges) with arm C forced — no "
            "Gate B receipt promotes it, so muse write alone would use arm A and say so: the bill first, the manifest "
            "and its evidence round (a hash chain), a draft the detector gate blocks (黄昏 missing, 典韦 undeclared), "
            "its repair — then --apply accepts the draft this run made through the accept preflight (the file, the "
            "manifest rebuilt, the detector, the rules, the quality gate's blind judges) and writes chapters/0011.md",
            ("write", "11", "--arm", "C", "--apply", *book),
        ),
        Step(
            "The author's desk: every draft with its status and the decision on it (accepted by --apply above)",
            ("drafts", *book),
        ),
        Step(
            "The versions of chapter 2 a command replaced (the original, kept when `review 2 --apply` accepted the "
            "revision): `muse revisions restore 2 REV` would put it back",
            ("revisions", "2", *book),
        ),
        Step(
            "Hard rules on the new chapter 11: no error (the fatigue words only warn)",
            ("check", "--chapter", "11", *book),
        ),
    ]


def run(step: Step, number: int, total: int, env: dict[str, str]) -> int:
    """Print the header and the command, run `muse` with the same interpreter, return its exit code."""
    print(f"\n==> [{number}/{total}] {step.header}", flush=True)
    print("$ muse " + " ".join(step.args), flush=True)
    return subprocess.call([sys.executable, "-m", "novelmuse", *step.args], cwd=ROOT, env=env)


def main(argv: list[str] | None = None) -> int:
    """Run the tour; 0 when every step gave its expected exit code."""
    parser = argparse.ArgumentParser(description="A guided tour of muse on examples/sanguo.")
    parser.add_argument("--workdir", type=Path, default=ROOT / ".demo", help="where the throw-away copy goes")
    args = parser.parse_args(argv)
    work: Path = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}
    env["MUSE_CONFIG"] = str(work / "no-user-config.toml")  # does not exist: the user's models stay out
    env.setdefault("PYTHONIOENCODING", "utf-8")
    if not sys.stdout.isatty():
        env.setdefault("COLUMNS", "120")  # piped output: tables as wide as a usual terminal

    with exclusive(work):
        return _tour(work, env)


def _tour(work: Path, env: dict[str, str]) -> int:
    """Both parts, in order; stops at the first unexpected exit code."""
    copy = make_copy(work)
    print(
        "novelmuse demo: a guided tour of `muse` on the sample book (the first ten chapters of 三国演义).\n"
        "No real model is called: your user config ($MUSE_CONFIG or ~/.config/novelmuse/config.toml) is ignored.",
        flush=True,
    )
    parts = [
        (
            f"PART 1 — the sample book {_rel(SAMPLE)} as shipped, NO model configured",
            sample_steps(),
        ),
        (
            f"PART 2 — the editorial loop WITH a model: a throw-away copy in {_rel(copy)} whose book.toml adds\n"
            f"the `scripted` provider. Its answers are canned (examples/demo-script.yaml), NOT a real model;\n"
            "the checks novelmuse applies to them are the real ones.",
            scripted_steps(copy),
        ),
    ]
    total = sum(len(steps) for _, steps in parts)
    number = 0
    for banner, steps in parts:
        print("\n" + "=" * 100 + "\n" + banner + "\n" + "=" * 100, flush=True)
        for step in steps:
            number += 1
            rc = run(step, number, total, env)
            if rc not in step.expect:
                want = " or ".join(map(str, sorted(step.expect)))
                print(
                    f"\ndemo stopped: step {number} `muse {' '.join(step.args)}` exited {rc}, expected {want}",
                    file=sys.stderr,
                    flush=True,
                )
                return rc or 1
    print(
        f"\n==> demo finished: {total} steps, every exit code as expected. The sample book's files are unchanged "
        f"(its state is in {_rel(SAMPLE / '.muse')}, gitignored); the revised chapter 2 is "
        f"{_rel(copy / 'chapters' / '0002.md')}, the written chapter 11 {_rel(copy / 'chapters' / '0011.md')}.",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
