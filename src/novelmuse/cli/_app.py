"""The Typer application and the registry of its commands, whose modules are imported only when they run.

Each command module registers its commands on `app` when imported (as a plain Typer module would). `COMMANDS`
names every top-level command, the module(s) that register it and its one-line help, so `muse --help` lists
every command without importing any command module, and `muse check` imports only `_cmd_check` and what that
uses (not the model SDKs, numpy or the service packages of other commands). `tests/cli/test_startup.py` keeps
the registry in step with the modules (same names, same one-line help).
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer
import typer.core
import typer.main
from typer._click import Command, Context  # the Click that Typer vendors

from .. import __version__
from ..errors import exit_code

#: name → (its one-line help, as `muse --help` shows it: the help's first sentence; the module(s) registering
#: it). One entry per command, listed in this order; a new command module adds its lines here.
COMMANDS: dict[str, tuple[str, ...]] = {
    "init": ("Create a book project: book.toml, rules.txt, chapters/, outlines/, cards/ and .gitignore.", "_cmd_book"),
    "import": (
        "Split a novel into chapters/NNNN.md by its heading lines (第N章 / 第N回 / 第N节 / Chapter N).",
        "_cmd_book",
    ),
    "check": (
        "Check chapters against the hard rules (rules.txt over the built-in AI-flavour defaults) and the chapter"
        " length limits of book.toml.",
        "_cmd_check",
    ),
    "judge": ("Score candidates with a blind 2+1 judge panel.", "_cmd_judge"),
    "judge-summary": (
        "Aggregate stored judge panels per rubric version: per-arm means (general dimensions across chapters, scene"
        " dimensions within one scene type), B−A and C−A deltas, and judge reliability.",
        "_cmd_judge",
    ),
    "rubrics": (
        "List the registered rubrics (profile, id, version, sha256); each is loaded and hash-checked.",
        "_cmd_judge",
    ),
    "ledger": (
        "The foreshadow ledger (伏笔账本): planted, unresolved items as of a chapter, with age and overdue flag.",
        "_cmd_memory",
    ),
    "search": (
        "BM25 search of earlier chapters: chapters ranked as whole documents (heading included), each with its best"
        " paragraph chunk; --json also lists the k best chunks.",
        "_cmd_memory",
    ),
    "mentions": (
        "Where a card is named (any of its names), per chapter, and the last chapter before N.",
        "_cmd_memory",
    ),
    "sync": (
        "Bring memory up to date after manual edits: re-index changed chapters, re-extract or mark stale facts.",
        "_cmd_memory",
    ),
    "calls": ("List model calls and their receipts (one per attempt), oldest first.", "_cmd_models"),
    "cost": ("Sum tokens and cost by role and by run (an unknown cost is shown as unknown, never 0).", "_cmd_models"),
    "report": (
        "Write a self-contained static HTML report: every chapter with each rule hit, review quote, editor evidence"
        " and judge quote highlighted at its stored offsets; reviews, revisions (character diffs), the foreshadow"
        " ledger, cards as of any chapter, judge panels, cost.",
        "_cmd_report",
    ),
    "status": (
        "One screen: chapters and gaps, what is stale (registry, index, fact cards), review and gate states, overdue"
        " foreshadows, unenforced rules lines, spend vs budget — and the next command for each problem.",
        "_cmd_report",
    ),
    "studio": (
        "Serve the book as a local web app and open it in the browser: the desk, chapters with every finding"
        " highlighted, outlines (lint, confirm), the story memory as of any chapter, spend, experiments.",
        "_cmd_studio",
    ),
    "export": (
        "Export the book as one file: chapter headings as imported, the text exactly as in the chapter files.",
        "_cmd_report",
    ),
    "review": (
        "Review chapters: hard rules, consistency review with bounded repair, the 7-dimension editor, the arbiter —"
        " then, with a judge model configured, the quality gate on each final text (blind judges against the"
        " chapter's evidence pack, hard blocks from the rule layer; every decision stored, see `muse judge-summary`).",
        "_cmd_review",
    ),
    "write": (
        "Write chapter N from its confirmed fine outline — a draft for your decision: writer (with evidence rounds),"
        " the detector gate, at most two repairs.",
        "_cmd_write",
    ),
    "drafts": (
        "The author's desk: drafts a model made for the book wait here for your decision — accept, revise, reject.",
        "_cmd_desk",
    ),
    "revisions": (
        "Every version of a chapter, outline, card, plan or rules file a command replaced, kept and restorable.",
        "_cmd_desk",
    ),
    "context": (
        "Build chapter N's writer context and manifest (no model call): `muse context N [--arm A|B|C]`.",
        "_cmd_writing",
    ),
    "replay": (
        "Replay experiments: pre-registered sets, A/B/C arms, blind oracle panels (then `muse gate evaluate`).",
        "_cmd_replay",
    ),
    "gate": ("Gate receipts: the signing key, and the CAS journal of gate reports and signed receipts.", "_cmd_gate"),
    "plan": ("The book's plan (大纲 and 设定, plan/): lint it; draft it from a premise (the plan agent).", "_cmd_plan"),
    "cards": ("Canon cards: list them, create one, show a card as of a chapter, validate all cards.", "_cmd_memory"),
    "facts": ("Fact cards (事实卡) of finalised chapters.", "_cmd_memory"),
    "vault": ("The raw model vault (.muse/vault).", "_cmd_models"),
    "models": ("Check the configured models.", "_cmd_models_check"),
    "rules": (
        "Hard rules (禁止 / 疲劳词 / 偏好): lint rules.txt, show the effective rule set.",
        "_cmd_rules",
        "_cmd_rules_normalize",
    ),
    "outline": (
        "Fine outlines (细纲): show with constraint ids, lint against cards and ledger, confirm.",
        "_cmd_writing",
        "_cmd_outline_draft",
    ),
}


class _Registered(typer.core.TyperCommand):
    """A command known from `COMMANDS` only (name and one-line help): what `muse --help` lists."""


class LazyGroup(typer.core.TyperGroup):
    """The root group: lists the registry, imports a command's module(s) only when that command runs."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        built = dict(self.commands)  # `version`, and any command whose module was imported already (tests)
        self.commands = {name: cmd for name, cmd in built.items() if name not in COMMANDS}
        for name, (short_help, *_modules) in COMMANDS.items():  # listed in the registry's order, loaded or not
            self.commands[name] = built.get(name) or _Registered(name, help=short_help)

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[str | None, Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name is not None and isinstance(command, _Registered):
            command = self.commands[name] = load_command(name)
        return name, command, rest


def load_command(name: str) -> Command:
    """Import the module(s) of registered command `name` and build its Click command (or group)."""
    for module in COMMANDS[name][1:]:
        importlib.import_module(f"{__package__}.{module}")
    command = typer.main.get_command(app)
    assert isinstance(command, typer.core.TyperGroup)
    return command.commands[name]


app = typer.Typer(
    name="muse",
    help=(
        "novelmuse — an AI editorial room for long Chinese web novels.\n\n"
        "\b\nExit codes (every command):\n"
        "  0    done: everything asked for was evaluated and passed\n"
        "  1    a check ran and found errors, or a quality gate failed\n"
        "  2    bad input or usage; nothing was changed\n"
        "  3    a model or gate step failed closed\n"
        "  4    not evaluated: a step was skipped (no model configured, an unenforced rules.txt line, …)"
        " — skip is never 0\n"
        "  70   a novelmuse bug (error[INTERNAL]; rerun with MUSE_DEBUG=1)\n"
        "  130  interrupted (Ctrl-C); rerun to resume"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=LazyGroup,
)


def _print_version(ctx: typer.Context, value: bool) -> None:
    if value:
        typer.echo(f"muse {__version__}")
        ctx.exit(exit_code("ok"))  # before any command runs: nothing else to do


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print the novelmuse version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    """novelmuse — an AI editorial room for long Chinese web novels."""


@app.command()
def version() -> None:
    """Print the novelmuse version."""
    typer.echo(__version__)
