"""The built-in fatigue words (AI flavour), read from the versioned data file `data/ai_flavour.toml`."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import InputError
from ..text import sha256_hex

DEFAULTS_FILE = "ai_flavour.toml"
#: Characters a rules.txt line could not express inside a phrase (so a book can always override a default).
_NOT_IN_PHRASE = frozenset("、，,；;#＃≤≦⩽<＜")


class _DefaultsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(ge=1)
    fatigue: dict[str, int]

    @field_validator("fatigue")
    @classmethod
    def _phrases_valid(cls, value: dict[str, int]) -> dict[str, int]:
        for phrase, limit in value.items():
            if not phrase or any(ch.isspace() or ch in _NOT_IN_PHRASE for ch in phrase):
                raise ValueError(f"phrase {phrase!r} is empty or holds whitespace, a separator, # or a limit sign")
            if limit < 0:
                raise ValueError(f"limit of {phrase!r} is negative")
        return value


@dataclass(frozen=True)
class DefaultRules:
    """The built-in rules: version and sha256 of the data file, and its fatigue words in file order."""

    version: int
    sha256: str
    fatigue: tuple[tuple[str, int], ...]


def parse_defaults(data: bytes, where: str = DEFAULTS_FILE) -> DefaultRules:
    """Validate a defaults file's bytes (TOML: `version`, table `[fatigue]` of phrase = limit)."""
    try:
        raw = tomllib.loads(data.decode("utf-8"))
        model = _DefaultsFile.model_validate(raw)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise InputError(
            "RULES_DEFAULTS_INVALID", f"the built-in rules file is invalid ({exc})", where, "reinstall novelmuse"
        ) from exc
    return DefaultRules(model.version, sha256_hex(data), tuple(model.fatigue.items()))


@cache
def load_defaults() -> DefaultRules:
    """The packaged defaults (read once per process)."""
    data = (resources.files("novelmuse.rules") / "data" / DEFAULTS_FILE).read_bytes()
    return parse_defaults(data)
