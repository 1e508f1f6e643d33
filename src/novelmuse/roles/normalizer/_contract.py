"""The normalizer's contract: deterministic checks of a proposal against the lines it was given.

Every check yields a `Violation` whose detail names the line and the phrase, so the correction
message tells the model exactly what to fix (details go to the correction message and the vault only).

- CONTRACT_LINE_UNKNOWN / CONTRACT_LINE_DUPLICATE / CONTRACT_LINE_MISSING: every line given is answered
  exactly once, and no other line is.
- CONTRACT_PHRASE_EMPTY: a rule without words.
- CONTRACT_PHRASE_NOT_IN_LINE: the phrase does not occur verbatim (code point by code point, the way
  the rule engine matches) in the original line.
- CONTRACT_RULE_SHAPE: a fatigue word without a limit (or outside 0..MAX_LIMIT), or a limit on a
  forbidden phrase or preference.
- CONTRACT_RULE_UNPARSEABLE: the rule's rendered line (`render_rule`) does not parse back, through the
  deterministic parser, to exactly that rule (e.g. the phrase holds a separator such as 、 or a #).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping

from ...llm import Violation
from ...rules import parse_rules
from .schema import NormalizerOutput, ProposedRule

MAX_LIMIT = 1000
#: What a forbidden or fatigue phrase may not hold: the parser's item separators, whitespace, comment
#: marks and limit operators (a preference is free text and may hold separators).
_NOT_IN_PHRASE = re.compile(r"[、，,；;#＃\s]|<=|＜＝|≤|≦|⩽")


def render_rule(rule: ProposedRule) -> str:
    """The rule as one rules.txt line in the deterministic syntax (禁止: / 疲劳词:…≤N / 偏好:)."""
    if rule.kind == "forbidden":
        return f"禁止:{rule.phrase}"
    if rule.kind == "fatigue":
        return f"疲劳词:{rule.phrase}≤{rule.limit}"
    return f"偏好:{rule.phrase}"


def round_trips(rule: ProposedRule) -> bool:
    """Whether `render_rule(rule)` parses back to exactly this one rule, with no problem at all.

    Forbidden and fatigue phrases must also be clean words (no separator, whitespace, ``#`` or limit
    operator), so a phrase never depends on how the parser happens to split an odd item.
    """
    if rule.kind != "preference" and _NOT_IN_PHRASE.search(rule.phrase):
        return False
    parsed = parse_rules(render_rule(rule))
    if parsed.problems or parsed.unparsed:
        return False
    if rule.kind == "forbidden":
        return [r.phrase for r in parsed.forbidden] == [rule.phrase] and not parsed.fatigue and not parsed.preferences
    if rule.kind == "fatigue":
        return [(r.phrase, r.limit) for r in parsed.fatigue] == [(rule.phrase, rule.limit)] and not (
            parsed.forbidden or parsed.preferences
        )
    return [p.text for p in parsed.preferences] == [rule.phrase] and not (parsed.forbidden or parsed.fatigue)


def _rule_violations(n: int, original: str, rule: ProposedRule) -> list[Violation]:
    where = f"line {n}"
    if not rule.phrase.strip():
        return [Violation("CONTRACT_PHRASE_EMPTY", f"{where}: a {rule.kind} rule has an empty phrase")]
    out: list[Violation] = []
    if rule.phrase not in original:
        out.append(
            Violation(
                "CONTRACT_PHRASE_NOT_IN_LINE",
                f"{where}: phrase {rule.phrase!r} does not occur verbatim in the original line {original!r}; "
                "copy the words exactly as written there",
            )
        )
    if rule.kind == "fatigue":
        if rule.limit is None or not 0 <= rule.limit <= MAX_LIMIT:
            out.append(
                Violation(
                    "CONTRACT_RULE_SHAPE",
                    f"{where}: fatigue word {rule.phrase!r} needs a limit between 0 and {MAX_LIMIT} (got {rule.limit})",
                )
            )
    elif rule.limit is not None:
        out.append(Violation("CONTRACT_RULE_SHAPE", f"{where}: a {rule.kind} rule takes no limit (set limit to null)"))
    if not out and not round_trips(rule):
        out.append(
            Violation(
                "CONTRACT_RULE_UNPARSEABLE",
                f"{where}: {render_rule(rule)!r} is not one clean rule for the parser; the phrase must not contain "
                "separators (、，,；; or spaces), ≤, or #",
            )
        )
    return out


def normalizer_contract(lines: Mapping[int, str]) -> Callable[[NormalizerOutput], list[Violation]]:
    """The contract for a call that was given `lines` (line number → original text)."""

    def check(output: NormalizerOutput) -> list[Violation]:
        violations: list[Violation] = []
        counts = Counter(p.line for p in output.proposals)
        for n, c in sorted(counts.items()):
            if n not in lines:
                violations.append(Violation("CONTRACT_LINE_UNKNOWN", f"line {n} was not among the lines given"))
            elif c > 1:
                violations.append(Violation("CONTRACT_LINE_DUPLICATE", f"line {n} is answered {c} times; answer once"))
        # one violation per missing line, so the call's diagnostics count the missing lines (codes and counts)
        violations.extend(
            Violation("CONTRACT_LINE_MISSING", f"line {n} has no proposal (give it an empty rules list)")
            for n in sorted(set(lines) - set(counts))
        )
        for proposal in output.proposals:
            original = lines.get(proposal.line)
            if original is None:
                continue
            for rule in proposal.rules:
                violations.extend(_rule_violations(proposal.line, original, rule))
        return violations

    return check
