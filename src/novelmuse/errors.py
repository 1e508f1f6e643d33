"""One error hierarchy with stable string codes, and the one mapping from an outcome to an exit code.

Every user-facing failure is a `MuseError`: the CLI prints it as one line
``error[CODE]: what, where — how to fix`` and exits with its exit code. Codes are stable strings
(``RULES_SYNTAX``, ``MODEL_AUTH``, ``CONTRACT_QUOTE_NOT_UNIQUE``, …) that tests, JSON output and
receipts rely on; the message texts may change.

How a command ended is an `Outcome`; `exit_code(outcome)` is the only place an exit code is decided (the
CLI's errors, usage errors, interruptions and every command's result go through it).

Every code is declared once in the registry `errors.toml` beside this module, with the outcome a command has when
the code is what stopped it, its cause and its fix (`registry()`); the documentation's error reference is generated
from it, and a test fails on a code the source uses that the registry does not declare.
"""

from __future__ import annotations

import functools
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

#: How a command ended: everything asked for evaluated and passed; a check found errors (or a gate failed); bad
#: input or usage (nothing changed); a model or gate step failed closed; something asked for was not evaluated
#: (a skipped step, an unenforced rule line, no model configured); a novelmuse bug; stopped by the user.
Outcome = Literal["ok", "findings", "bad_input", "failed_closed", "not_evaluated", "internal", "interrupted"]

#: Skip is not pass (seed 004: the consistency review that "passed" for months while it was silently skipped):
#: `not_evaluated` has its own code, 4, never 0. A novelmuse bug is 70 (EX_SOFTWARE of sysexits.h: an internal
#: software error), out of the 0–4 range a script compares against.
_EXIT_CODES: Final[Mapping[Outcome, int]] = {
    "ok": 0,
    "findings": 1,
    "bad_input": 2,
    "failed_closed": 3,
    "not_evaluated": 4,
    "internal": 70,
    "interrupted": 130,
}

#: When several things happened in one command, the outcome that decides its exit code: a bug, then a step that
#: failed closed, then findings (something checked and wrong), then something not evaluated, then ok.
_SEVERITY: Final[tuple[Outcome, ...]] = ("internal", "failed_closed", "findings", "not_evaluated", "ok")


def exit_code(outcome: Outcome) -> int:
    """The process exit code of an outcome (the documented table of exit codes)."""
    return _EXIT_CODES[outcome]


def worst(*outcomes: Outcome) -> Outcome:
    """The outcome that decides a command's exit code when its parts ended differently (see `_SEVERITY`):
    findings outrank not_evaluated (a definite error beats an unknown), and anything outranks ok."""
    ranked = [o for o in _SEVERITY if o in outcomes]
    return ranked[0] if ranked else "ok"


EXIT_OK: Final = exit_code("ok")
EXIT_FINDINGS: Final = exit_code("findings")  # a check ran and found error-severity findings
EXIT_BAD_INPUT: Final = exit_code("bad_input")  # bad input or usage: nothing was changed
EXIT_FAILED_CLOSED: Final = exit_code("failed_closed")  # a model or gate step failed closed
EXIT_NOT_EVALUATED: Final = exit_code("not_evaluated")  # something asked for was not evaluated (skip is not pass)


class MuseError(Exception):
    """A failure the user can act on: stable code, what happened, where, and how to fix it."""

    outcome: Outcome = "bad_input"

    def __init__(self, code: str, what: str, where: str = "", fix: str = ""):
        self.code = code
        self.what = what
        self.where = where
        self.fix = fix
        super().__init__(self.render())

    @property
    def exit_code(self) -> int:
        """The exit code of this error's outcome."""
        return exit_code(self.outcome)

    def render(self) -> str:
        """The one-line form the CLI prints."""
        line = f"error[{self.code}]: {self.what}"
        if self.where:
            line += f", {self.where}"
        if self.fix:
            line += f" — {self.fix}"
        return line

    def to_json(self) -> dict[str, object]:
        """The shape used in every --json error document (`message` is the one line printed on stderr)."""
        return {
            "code": self.code,
            "what": self.what,
            "where": self.where,
            "fix": self.fix,
            "exit_code": self.exit_code,
            "message": self.render(),
        }


class InputError(MuseError):
    """Bad input or usage (exit 2): a file, a flag or a configuration value is wrong."""

    outcome: Outcome = "bad_input"


class FailedClosed(MuseError):
    """A model or gate step failed closed (exit 3): the result is not ok, never a default value."""

    outcome: Outcome = "failed_closed"


class NotEvaluated(MuseError):
    """Something asked for cannot be evaluated here (exit 4), e.g. a command whose only step needs a model and no
    model is configured: it is refused before anything runs, and never reads as a pass."""

    outcome: Outcome = "not_evaluated"


#: The areas of the registry, in the order the error reference lists them (key → section title).
AREAS: Final[Mapping[str, str]] = {
    "usage": "The command line",
    "book": "Book projects",
    "files": "Reading files",
    "config": "Configuration",
    "store": "The database",
    "import": "Importing a novel",
    "rules": "Hard rules",
    "memory": "Story memory",
    "models": "Models, calls and the vault",
    "outlines": "Fine outlines, the plan and the fine-outline agent",
    "writer": "The writer and its context",
    "desk": "The author's desk: drafts, decisions, revisions",
    "review": "Review",
    "judging": "Judging and the quality gate",
    "replay": "Replay experiments",
    "gate": "Gates, receipts and the journal",
    "report": "Report and export",
    "studio": "The studio (muse studio)",
}


@dataclass(frozen=True)
class ErrorCode:
    """One registered code: how a command ends when it is what stopped it, its area, cause and fix."""

    code: str
    outcome: Outcome
    area: str
    cause: str
    fix: str

    @property
    def exit_code(self) -> int:
        """The exit code of this code's outcome."""
        return exit_code(self.outcome)


_OUTCOMES: Final = frozenset(typing.get_args(Outcome))


@functools.cache
def registry() -> Mapping[str, ErrorCode]:
    """Every registered code, read once from errors.toml (checked: a known outcome and area, a cause and a fix)."""
    raw = tomllib.loads((Path(__file__).with_name("errors.toml")).read_text(encoding="utf-8"))
    out: dict[str, ErrorCode] = {}
    for code, entry in raw.items():
        outcome, area = entry["exit"], entry["area"]
        if outcome not in _OUTCOMES or area not in AREAS or not entry["cause"] or not entry["fix"] or len(entry) != 4:
            raise ValueError(f"errors.toml: [{code}] needs exit (an outcome), area (of AREAS), cause and fix only")
        out[code] = ErrorCode(code, outcome, area, entry["cause"], entry["fix"])
    return out
