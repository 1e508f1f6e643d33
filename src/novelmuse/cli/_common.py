"""Shared CLI plumbing: the --book/--json options, chapter ranges, JSON output, the console, the model session."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer
from pydantic import BaseModel

from ..book import Book, find_book
from ..errors import InputError, Outcome, exit_code
from ..limits import MAX_CHAPTER_NUMBER, MAX_NAME_CHARS, MAX_QUERY_CHARS

if TYPE_CHECKING:
    from rich.console import Console

    from ..llm import Bill, ModelSession, RecoveryReport
    from ..replay import ArmChoice

T = TypeVar("T")


class _LazyConsole:
    """A Rich `Console` built on first use: a command that never prints through Rich (`muse check --json` of a
    book without notes) does not import Rich (~15 ms of its start-up). Attributes, and the `with console:` that
    Rich's `Live` and `Progress` use, go to the one Console it builds."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def _real(self) -> Console:
        console = self._console
        if console is None:
            from rich.console import Console

            console = self._console = Console(**self._options)
        return console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real(), name)

    def __enter__(self) -> Console:
        return self._real().__enter__()

    def __exit__(self, *exc: object) -> None:
        self._real().__exit__(*exc)


#: Human output goes to stdout; progress bars and notes go to stderr so --json stays one document.
console = cast("Console", _LazyConsole(highlight=False, soft_wrap=True))
err_console = cast("Console", _LazyConsole(stderr=True, highlight=False, soft_wrap=True))

BookOpt = Annotated[
    Path | None,
    typer.Option("--book", help="Book directory (default: the nearest parent holding book.toml).", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document to stdout.")]


def open_book(book: Path | None) -> Book:
    """The book named by --book, else the one found upward from the current directory."""
    return find_book(book)


def parse_range(value: str | None) -> tuple[int, int] | None:
    """Parse ``A-B`` (inclusive) — `--range A-B`, or a command's `A-B` argument; a single number N means N-N."""
    if value is None:
        return None
    text = value.strip()
    a, sep, b = text.partition("-")
    try:
        lo = int(a)
        hi = int(b) if sep else lo
    except ValueError:
        raise InputError(
            "USAGE_RANGE", f"the range {value!r} is not A-B", "command line", "write it like 3-10"
        ) from None
    if lo < 0 or hi < lo:
        raise InputError("USAGE_RANGE", f"the range {value!r} is empty or negative", "command line", "use A-B, A ≤ B")
    if hi > MAX_CHAPTER_NUMBER:
        raise InputError(
            "USAGE_RANGE",
            f"the range {value!r} ends over the cap of {MAX_CHAPTER_NUMBER:,} for chapter numbers",
            "command line",
            f"use chapter numbers 0–{MAX_CHAPTER_NUMBER:,}",
        )
    return lo, hi


def chapter_span(value: str, usage: str) -> list[int]:
    """A chapter argument that may be a range: ``12`` → [12], ``89-100`` → [89 … 100] (USAGE_RANGE otherwise)."""
    text = value.strip()
    if "-" not in text:
        try:
            number = int(text)
        except ValueError:
            raise InputError("USAGE", f"{value!r} is not a chapter number or A-B", "command line", usage) from None
        if not 0 <= number <= MAX_CHAPTER_NUMBER:
            shown = text if len(text) <= 20 else f"{text[:20]}… ({len(text)} digits)"
            raise InputError(
                "USAGE",
                f"chapter {shown} is over the cap of {MAX_CHAPTER_NUMBER:,} for chapter numbers",
                "command line",
                usage,
            )
        return [number]
    span = parse_range(text)
    assert span is not None
    return list(range(span[0], span[1] + 1))


def capped_text(limit: int, what: str) -> Callable[[str | None], str | None]:
    """A Typer callback refusing text longer than `limit` characters, or text that is not valid UTF-8 (bytes
    the terminal's encoding could not decode reach Python as lone surrogates): a usage error naming the cap or
    the encoding, without echoing the text back."""

    def check(value: str | None) -> str | None:
        if value is None:
            return value
        if len(value) > limit:
            raise typer.BadParameter(f"the {what} is {len(value):,} characters, over the cap of {limit:,}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise typer.BadParameter(
                f"the {what} is not valid UTF-8 (an undecodable byte at character {exc.start + 1})"
            ) from None
        return value

    return check


#: Caps for command-line values (novelmuse.limits): a chapter number, a --before bound (one past the last
#: chapter), a card name or alias, a search query.
CHAPTER_MAX = MAX_CHAPTER_NUMBER
BEFORE_MAX = MAX_CHAPTER_NUMBER + 1
name_cap = capped_text(MAX_NAME_CHARS, "name")
query_cap = capped_text(MAX_QUERY_CHARS, "query")


def emit_json(doc: BaseModel | dict[str, Any] | list[Any], outcome: Outcome | None = None) -> None:
    """Print one JSON document (a pydantic model or plain data) to stdout.

    With `outcome` (how the command ends), the document also says so, explicitly: ``"exit": {"outcome":
    "not_evaluated", "code": 4}`` — a script reading the JSON sees a skip as a skip, never as ``ok``."""
    if outcome is not None:
        data = doc.model_dump(mode="json") if isinstance(doc, BaseModel) else dict(doc)
        doc = {**data, "exit": {"outcome": outcome, "code": exit_code(outcome)}}
    if isinstance(doc, BaseModel):
        sys.stdout.write(doc.model_dump_json(indent=2))
    else:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2))
    sys.stdout.write("\n")
    sys.stdout.flush()


def in_session(book: Book, run_kind: str, work: Callable[[ModelSession], Awaitable[T]]) -> T:
    """Run a command's service in the one model session (one run, one budget, one deadline) the command owns.

    The session is opened here — the only place the CLI opens one — and closed when `work` ends: the run (if
    any model was asked) ends ok, failed, or interrupted (Ctrl-C).
    """

    import asyncio

    from ..llm import ModelSession  # here, not at import: commands without a model never load the model layer

    async def run() -> T:
        async with ModelSession.open(book, run_kind=run_kind) as session:
            try:
                return await work(session)
            finally:
                if session.started:
                    _say_recovered(session.recovery)

    return asyncio.run(run())


def _say_recovered(report: RecoveryReport) -> None:
    """Tell (on stderr) that this run's start closed what a killed run left in flight: a request sent again is
    never sent silently, and its first sending's cost is unknown, not zero."""
    if report.interrupted_attempts or report.interrupted_runs:
        print(
            f"note: {len(report.interrupted_runs)} earlier run(s) had died ({', '.join(report.interrupted_runs)}); "
            f"{report.interrupted_attempts} model request(s) they had in flight are recorded as interrupted, cost "
            "unknown (the provider may have billed them) — this run asked anew; see `muse calls` and `muse cost`",
            file=sys.stderr,
        )


def say_before(lines: list[str], *, json_out: bool) -> None:
    """What a command says before its first model call (its bill, what it resumes): on stdout with the rest of its
    output, on stderr under --json (stdout is then one JSON document)."""
    for line in lines:
        (err_console if json_out else console).print(line, markup=False, soft_wrap=True)


YesOpt = Annotated[
    bool, typer.Option("--yes", "-y", help="Start even when the bill is above [budget] confirm_above (no question).")
]


def confirm_bill(book: Book, bill: Bill | None, *, yes: bool, json_out: bool, command: str) -> None:
    """After the bill is printed, before the first call: a worst case above `[budget] confirm_above` (a charged
    model without a price counts as above) asks in a terminal and is refused elsewhere (BILL_NOT_CONFIRMED, exit
    2) unless `--yes`. Nothing is asked when the models cost nothing (scripted, local) or no call is planned."""
    threshold = book.config.budget.confirm_above
    if bill is None or bill.empty or threshold is None or yes:
        return
    from ..llm import cost_to_confirm

    cost = cost_to_confirm(bill, book.config.role_costs_nothing)
    if cost is not None and cost <= threshold:
        return
    amount = "unknown (a model that may charge has no price)" if cost is None else f"up to {cost:.4f}"
    what = f"this run's worst-case cost is {amount}, above [budget] confirm_above = {threshold:g}"
    if not json_out and sys.stdin.isatty() and err_console.is_terminal:
        if typer.confirm(f"{what}. Start?", default=False, err=True):
            return
        raise InputError("BILL_NOT_CONFIRMED", f"{what}; you declined", command, "nothing was sent")
    raise InputError(
        "BILL_NOT_CONFIRMED",
        f"{what}, and there is no terminal to ask",
        command,
        "read the bill above, then run it again with --yes (or raise [budget] confirm_above in book.toml)",
    )


def step_line(text: str) -> None:
    """One line per long step on stderr where there is no terminal (a log, CI) — a terminal has the progress bar."""
    if not err_console.is_terminal:
        err_console.print(text, markup=False, soft_wrap=True, highlight=False)


def finish(outcome: Outcome) -> None:
    """End the command with its outcome's exit code (`errors.exit_code`); a 0 just returns."""
    code = exit_code(outcome)
    if code:
        raise typer.Exit(code)


def chapter_target(value: str, word: str, usage: str) -> int:
    """The chapter number of a `muse CMD N|word …` target that is not `word` (USAGE naming both forms)."""
    if not value.isdigit() or int(value) > MAX_CHAPTER_NUMBER:
        raise InputError(
            "USAGE",
            f"{value!r} is neither a chapter number (0–{MAX_CHAPTER_NUMBER}) nor `{word}`",
            "command line",
            usage,
        )
    return int(value)


# The replay services some non-replay commands call, imported when first called: loading replay (the gates, the
# journal, the writer configuration's code pins) costs about half a second, which a display command (`muse outline
# show`, `muse drafts`, `muse write show`) must not pay. Tests replace these names on the command modules.


def outline_admission_problems(book: Book, text: str) -> list[str]:
    """`replay.outline_admission_problems`: why a drafted outline's admission no longer holds ([] when it does)."""
    from ..replay import outline_admission_problems as check

    return check(book, text)


def promoted_arm(book: Book, force: str | None = None) -> ArmChoice:
    """`replay.promoted_arm`: the arm `muse write` uses, and why."""
    from ..replay import promoted_arm as choose

    return choose(book, force=force)


def writer_config_sha256(book: Book) -> str:
    """`replay.writer_config_sha256`: the writer configuration a receipt must have been earned by."""
    from ..replay import writer_config_sha256 as config

    return config(book)
