"""One error hierarchy with stable string codes, and the one mapping from an outcome to an exit code.

Every user-facing failure is a `MuseError`: the CLI prints it as one line
``error[CODE]: what, where — how to fix`` and exits with its exit code. Codes are stable strings
(``RULES_SYNTAX``, ``MODEL_AUTH``, ``CONTRACT_QUOTE_NOT_UNIQUE``, …) that tests, JSON output and
receipts rely on; the message texts may change.

How a command ended is an `Outcome`; `exit_code(outcome)` is the only place an exit code is decided (the
CLI's errors, usage errors, interruptions and every command's result go through it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

#: How a command ended: everything asked for evaluated and passed; a check found errors (or a gate failed); bad
#: input or usage (nothing changed); a model or gate step failed closed; something asked for was not evaluated
#: (a skipped step); a novelmuse bug; stopped by the user.
Outcome = Literal["ok", "findings", "bad_input", "failed_closed", "not_evaluated", "internal", "interrupted"]

#: Issue 14 will make `not_evaluated` exit 4 (skip is not pass) and move `internal`: a change of this mapping only.
_EXIT_CODES: Final[Mapping[Outcome, int]] = {
    "ok": 0,
    "findings": 1,
    "bad_input": 2,
    "failed_closed": 3,
    "not_evaluated": 0,
    "internal": 4,
    "interrupted": 130,
}


def exit_code(outcome: Outcome) -> int:
    """The process exit code of an outcome (the documented table in the README)."""
    return _EXIT_CODES[outcome]


EXIT_OK: Final = exit_code("ok")
EXIT_FINDINGS: Final = exit_code("findings")  # a check ran and found error-severity findings
EXIT_BAD_INPUT: Final = exit_code("bad_input")  # bad input or usage: nothing was changed
EXIT_FAILED_CLOSED: Final = exit_code("failed_closed")  # a model or gate step failed closed


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
        """The shape used in every --json error document."""
        return {
            "code": self.code,
            "what": self.what,
            "where": self.where,
            "fix": self.fix,
            "exit_code": self.exit_code,
        }


class InputError(MuseError):
    """Bad input or usage (exit 2): a file, a flag or a configuration value is wrong."""

    outcome: Outcome = "bad_input"


class FailedClosed(MuseError):
    """A model or gate step failed closed (exit 3): the result is not ok, never a default value."""

    outcome: Outcome = "failed_closed"
