"""The deterministic hard-rule engine (seed 004): 禁止 / 疲劳词 / 偏好 rules, AI-flavour defaults, chapter length.

Typical use::

    loaded = load_book_rules(book)                # rules.txt over the built-in defaults (+ book.toml length)
    compiled = CompiledRules(loaded.effective)    # the automaton is built once …
    findings = compiled.check_texts(bodies)       # … and reused for every chapter
    report = check_book(book, chapter=3)          # what `muse check` prints

Counting has `str.count` semantics for every phrase; forbidden = error, fatigue above its limit = warning,
length outside book.toml [chapters] = error.

The quality gate's hard blocks (seed 000: source_safety, output_compliance, static_contract) are computed here too:
``hard_blocks(text, rules, prior_texts=…, outline=…)`` → `HardBlockReport`.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # the public API; each name is imported from its module on first use (see novelmuse._lazy)
    from ._check import (
        BookCheck,
        ChapterCheck,
        CompiledRules,
        Finding,
        LoadedRules,
        chapter_findings,
        check_book,
        check_chapters,
        collector_paused,
        flat_hits,
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
    from ._hardblocks import (
        COPY_RUN_CHARS,
        HARD_BLOCK_NAMES,
        SENTENCE_ENDS,
        BlockFinding,
        BlockResult,
        BlockState,
        HardBlockName,
        HardBlockReport,
        MetaText,
        copied_runs,
        hard_blocks,
        load_meta_text,
        output_compliance,
        source_safety,
        static_contract,
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

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "CHECK_SCHEMA_VERSION",
    "COPY_RUN_CHARS",
    "HARD_BLOCK_NAMES",
    "LENGTH_SEVERITY",
    "RULES_SCHEMA_VERSION",
    "SENTENCE_ENDS",
    "BlockFinding",
    "BlockResult",
    "BlockState",
    "BookCheck",
    "ChapterCheck",
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
    "HardBlockName",
    "HardBlockReport",
    "Hit",
    "LengthLimits",
    "LengthOut",
    "LintCounts",
    "LintReport",
    "LoadedRules",
    "MetaText",
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
    "chapter_findings",
    "check_book",
    "check_chapters",
    "check_length",
    "collector_paused",
    "copied_runs",
    "decode_rules",
    "ensure_usable",
    "flat_hits",
    "hard_blocks",
    "length_text",
    "lint_rules",
    "load_book_rules",
    "load_defaults",
    "load_meta_text",
    "numbering_gaps",
    "output_compliance",
    "parse_defaults",
    "parse_rules",
    "preferences_block",
    "read_rules_file",
    "report_findings",
    "rules_file_state",
    "show_rules",
    "source_safety",
    "static_contract",
    "update_registry",
]
