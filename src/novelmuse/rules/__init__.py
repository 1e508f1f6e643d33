"""The deterministic hard-rule engine (seed 004): 禁止 / 疲劳词 / 偏好 rules, AI-flavour defaults, chapter length.

Typical use::

    loaded = load_book_rules(book)                # rules.txt over the built-in defaults (+ book.toml length)
    compiled = CompiledRules(loaded.effective)    # the automaton is built once …
    findings = compiled.check_texts(bodies)       # … and reused for every chapter
    report = check_book(book, chapter=3)          # what `muse check` prints

Counting has `str.count` semantics for every phrase; forbidden = error, fatigue above its limit = warning,
length outside book.toml [chapters] = error.
"""

from ._check import (
    CompiledRules,
    Finding,
    LoadedRules,
    check_book,
    load_book_rules,
    numbering_gaps,
    report_findings,
    rules_file_state,
    update_registry,
)
from ._defaults import DefaultRules, load_defaults, parse_defaults
from ._effective import (
    EffectiveRule,
    EffectiveRuleSet,
    LengthLimits,
    RuleOrigin,
    build_effective,
    ensure_usable,
    preferences_block,
)
from ._length import LENGTH_SEVERITY, check_length, length_text
from ._lint import lint_rules, show_rules
from ._match import PhraseMatcher, ScanResult
from ._model import FatigueRule, ForbiddenRule, Preference, RuleProblem, RuleSet, UnparsedLine
from ._parse import decode_rules, parse_rules, read_rules_file
from ._report import (
    CHECK_SCHEMA_VERSION,
    RULES_SCHEMA_VERSION,
    ChapterOut,
    CheckReport,
    FindingOut,
    GapOut,
    Hit,
    LengthOut,
    LintCounts,
    LintReport,
    RegistryOut,
    RulesFileState,
    RulesInfo,
    ShowReport,
    SummaryOut,
)

__all__ = [
    "CHECK_SCHEMA_VERSION",
    "LENGTH_SEVERITY",
    "RULES_SCHEMA_VERSION",
    "ChapterOut",
    "CheckReport",
    "CompiledRules",
    "DefaultRules",
    "EffectiveRule",
    "EffectiveRuleSet",
    "FatigueRule",
    "Finding",
    "FindingOut",
    "ForbiddenRule",
    "GapOut",
    "Hit",
    "LengthLimits",
    "LengthOut",
    "LintCounts",
    "LintReport",
    "LoadedRules",
    "PhraseMatcher",
    "Preference",
    "RegistryOut",
    "RuleOrigin",
    "RuleProblem",
    "RuleSet",
    "RulesFileState",
    "RulesInfo",
    "ScanResult",
    "ShowReport",
    "SummaryOut",
    "UnparsedLine",
    "build_effective",
    "check_book",
    "check_length",
    "decode_rules",
    "ensure_usable",
    "length_text",
    "lint_rules",
    "load_book_rules",
    "load_defaults",
    "numbering_gaps",
    "parse_defaults",
    "parse_rules",
    "preferences_block",
    "read_rules_file",
    "report_findings",
    "rules_file_state",
    "show_rules",
    "update_registry",
]
