"""One error hierarchy with stable string codes.

Every user-facing failure is a `MuseError`: the CLI prints it as one line
``error[CODE]: what, where — how to fix`` and exits with its exit code. Codes are stable strings
(``RULES_SYNTAX``, ``MODEL_AUTH``, ``CONTRACT_QUOTE_NOT_UNIQUE``, …) that tests, JSON output and
receipts rely on; the message texts may change.
"""

from __future__ import annotations

from typing import Final

EXIT_OK: Final = 0
EXIT_FINDINGS: Final = 1  # a check ran and found error-severity findings
EXIT_BAD_INPUT: Final = 2  # bad input or usage: nothing was changed
EXIT_FAILED_CLOSED: Final = 3  # a model or gate step failed closed


class MuseError(Exception):
    """A failure the user can act on: stable code, what happened, where, and how to fix it."""

    exit_code: int = EXIT_BAD_INPUT

    def __init__(self, code: str, what: str, where: str = "", fix: str = "", *, exit_code: int | None = None):
        self.code = code
        self.what = what
        self.where = where
        self.fix = fix
        if exit_code is not None:
            self.exit_code = exit_code
        super().__init__(self.render())

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

    exit_code = EXIT_BAD_INPUT


class FailedClosed(MuseError):
    """A model or gate step failed closed (exit 3): the result is not ok, never a default value."""

    exit_code = EXIT_FAILED_CLOSED
