"""The effective rule set: built-in defaults overridden by the book's rules.txt, plus chapter length limits."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from ..text import sha256_json
from ._defaults import DefaultRules
from ._model import Preference, RuleSet, Severity, UnparsedLine

EFFECTIVE_SCHEMA_VERSION = 1


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RuleOrigin(_Frozen):
    """Where a rule came from: the built-in defaults (with their version) or a line of the book's rules file."""

    source: Literal["default", "book"]
    version: int | None = None  # defaults' version
    line: int | None = None  # rules.txt line

    @property
    def label(self) -> str:
        """Human form: ``default v1`` or ``rules.txt line 3``."""
        return f"default v{self.version}" if self.source == "default" else f"rules.txt line {self.line}"


class EffectiveRule(_Frozen):
    """One enforced phrase rule."""

    kind: Literal["forbidden", "fatigue"]
    phrase: str
    limit: int | None  # None for forbidden (any occurrence is an error)
    severity: Severity
    origin: RuleOrigin


class LengthLimits(_Frozen):
    """Chapter length limits from book.toml [chapters], in `text.count_chars` characters; None = not set."""

    min_chars: int | None = None
    max_chars: int | None = None

    @property
    def configured(self) -> bool:
        """True when at least one bound is set (otherwise the length check is skipped, not passed)."""
        return self.min_chars is not None or self.max_chars is not None


class DefaultsInfo(_Frozen):
    version: int
    sha256: str
    rules: int


class EffectiveRuleSet(_Frozen):
    """What `muse check` enforces. `sha256` hashes the canonical JSON of the semantics (see `semantic_doc`)."""

    schema_version: int = EFFECTIVE_SCHEMA_VERSION
    rules: tuple[EffectiveRule, ...]
    preferences: tuple[Preference, ...]
    length: LengthLimits
    defaults: DefaultsInfo
    unparsed: tuple[UnparsedLine, ...]
    sha256: str


def semantic_doc(
    rules: tuple[EffectiveRule, ...], preferences: tuple[Preference, ...], length: LengthLimits, defaults: DefaultsInfo
) -> dict[str, object]:
    """The hashed form: rules sorted by (kind, phrase) with limits, preferences in order, length limits, and the
    defaults file's version and sha256. Line numbers and unparsed lines are left out, so adding a comment or a
    blank line to rules.txt does not change the hash, while any change to what is enforced does."""
    return {
        "schema_version": EFFECTIVE_SCHEMA_VERSION,
        "rules": [
            {"kind": r.kind, "phrase": r.phrase, "limit": r.limit}
            for r in sorted(rules, key=lambda r: (r.kind, r.phrase))
        ],
        "preferences": [p.text for p in preferences],
        "length": {"min_chars": length.min_chars, "max_chars": length.max_chars},
        "defaults": {"version": defaults.version, "sha256": defaults.sha256},
    }


def ensure_usable(ruleset: RuleSet, where: str) -> None:
    """Raise RULES_SYNTAX (first) or RULES_CONTRADICTION when the rule set has errors (exit 2)."""
    for code, fix in (
        ("RULES_SYNTAX", "fix the line (see `muse rules lint`)"),
        ("RULES_CONTRADICTION", "keep one of the two rules (see `muse rules lint`)"),
    ):
        errors = [p for p in ruleset.errors if p.code == code]
        if errors:
            first = errors[0]
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            line = f":{first.lines[-1]}" if first.lines else ""
            raise InputError(code, first.message + more, where + line, fix)


def build_effective(book_rules: RuleSet, defaults: DefaultRules, length: LengthLimits, where: str) -> EffectiveRuleSet:
    """Merge defaults and book rules (the book wins per phrase: forbidding a default fatigue word, or giving it
    another limit, is an override, not a contradiction). Raises if the book's rules have errors."""
    ensure_usable(book_rules, where)
    merged: dict[str, EffectiveRule] = {}
    default_origin = RuleOrigin(source="default", version=defaults.version)
    for phrase, limit in defaults.fatigue:
        merged[phrase] = EffectiveRule(
            kind="fatigue", phrase=phrase, limit=limit, severity="warning", origin=default_origin
        )
    for f in book_rules.forbidden:
        merged[f.phrase] = EffectiveRule(
            kind="forbidden",
            phrase=f.phrase,
            limit=None,
            severity="error",
            origin=RuleOrigin(source="book", line=f.line),
        )
    for g in book_rules.fatigue:
        merged[g.phrase] = EffectiveRule(
            kind="fatigue",
            phrase=g.phrase,
            limit=g.limit,
            severity="warning",
            origin=RuleOrigin(source="book", line=g.line),
        )
    rules = tuple(merged.values())
    info = DefaultsInfo(version=defaults.version, sha256=defaults.sha256, rules=len(defaults.fatigue))
    return EffectiveRuleSet(
        rules=rules,
        preferences=book_rules.preferences,
        length=length,
        defaults=info,
        unparsed=book_rules.unparsed,
        sha256=sha256_json(semantic_doc(rules, book_rules.preferences, length, info)),
    )


def preferences_block(ruleset: RuleSet | EffectiveRuleSet) -> str:
    """The author's preferences (偏好), verbatim, one per line in file order, for injection into writing prompts.

    Empty string when there are none. The text is exactly what follows the colon on each `偏好:` line.
    """
    return "\n".join(p.text for p in ruleset.preferences)
