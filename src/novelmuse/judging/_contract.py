"""The judge report contract, checked locally whatever the model claims.

The checker recomputes the expected cartesian products itself (candidates × dimensions for scores,
dimensions for rankings, candidates × assertions/constraints for verdicts) from the blind input, and
counts, per array: entries *missing* (an expected key with no entry), *duplicate* (entries beyond the
first for one key) and *out-of-range* (an entry whose key is not in the expected product — an unknown id).
Score values outside the scale or off its step are counted apart. Every problem is one `Finding`
(stable code + detail); the detail goes only into the correction message, diagnostics keep codes and counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..roles.judge import JudgeReport
from ..text import locate_quote, normalize_for_match
from ._blind import QUOTE_MIN_CHARS, BlindInput
from ._leak import LeakGuard
from ._rubrics import Rubric


@dataclass(frozen=True)
class Finding:
    """One contract problem: a stable code and a human detail (for the correction only)."""

    code: str
    detail: str


@dataclass(frozen=True)
class ArrayCounts:
    """Coverage of one array against its expected product."""

    expected: int
    entries: int  # entries the report gave (including duplicates and unknown ids)
    missing: int
    duplicate: int
    out_of_range: int

    def to_json(self) -> dict[str, int]:
        """Counts only (safe for diagnostics)."""
        return {
            "expected": self.expected,
            "entries": self.entries,
            "missing": self.missing,
            "duplicate": self.duplicate,
            "out_of_range": self.out_of_range,
        }


@dataclass
class ContractResult:
    """The outcome of checking one report: findings, counts per array and the located quotes."""

    findings: list[Finding]
    scores: ArrayCounts
    rankings: ArrayCounts
    verdicts: ArrayCounts
    score_value_out_of_range: int = 0
    score_off_step: int = 0
    rankings_incomplete: int = 0
    verdict_value_invalid: int = 0
    #: (candidateId, dimensionId) → (start, end) of the quote in that candidate's text.
    quotes: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.findings

    def count_summary(self) -> dict[str, object]:
        """Array counts and missing/duplicate/out-of-range counts per array: what a failure may record."""
        return {
            "scores": self.scores.to_json(),
            "rankings": self.rankings.to_json(),
            "verdicts": self.verdicts.to_json(),
            "score_value_out_of_range": self.score_value_out_of_range,
            "score_off_step": self.score_off_step,
            "rankings_incomplete": self.rankings_incomplete,
            "verdict_value_invalid": self.verdict_value_invalid,
        }

    def code_counts(self) -> dict[str, int]:
        """Finding code → count: what diagnostics may record (never the details)."""
        return dict(sorted(Counter(f.code for f in self.findings).items()))


def _coverage(keys: Iterable[tuple[str, ...]], expected: Sequence[tuple[str, ...]]) -> tuple[ArrayCounts, set[int]]:
    """Counts for `keys` against `expected`, and the indexes of entries that are first for an expected key."""
    expected_set = set(expected)
    seen: set[tuple[str, ...]] = set()
    firsts: set[int] = set()
    duplicate = out_of_range = 0
    for i, key in enumerate(keys):
        if key not in expected_set:
            out_of_range += 1
        elif key in seen:
            duplicate += 1
        else:
            seen.add(key)
            firsts.add(i)
    missing = len(expected_set - seen)
    entries = len(firsts) + duplicate + out_of_range
    return ArrayCounts(len(expected_set), entries, missing, duplicate, out_of_range), firsts


#: The evidence types that name an item of the structured standard a fine outline is compared against.
_STANDARD = ("fine_outline", "oracle_assertion")


def _summary_findings(reason: str, cited: list[str], where: str) -> list[Finding]:
    """A structured evidence summary (seed 000 细纲回放): the score cites at least one reference item of the
    standard, and its reason names every cited item by its id — so the summary says what it compared."""
    if not cited:
        return [
            Finding(
                "CONTRACT_EVIDENCE_SUMMARY",
                f"{where}: cite the reference items you compared against (evidenceRefs of type fine_outline or "
                "oracle_assertion)",
            )
        ]
    return [
        Finding("CONTRACT_EVIDENCE_SUMMARY", f"{where}: the reason must name the cited reference item {i}")
        for i in dict.fromkeys(cited)
        if i not in reason
    ]


_LEAK_DETAIL = (
    "the reason contains a word this blind panel keeps hidden (a label the judge was never shown); "
    "rewrite it, naming candidates only by their candidateId"
)


def check_report(
    report: JudgeReport, blind: BlindInput, rubric: Rubric, *, guard: LeakGuard | None = None
) -> ContractResult:
    """Check one judge report against the blind input it answered and the rubric's scale.

    With `guard`, every reason is also checked for the panel's hidden tokens (arm and strategy names, card
    ids, manifest lines, secrets): a report names candidates only by their random ids before unblinding
    (CONTRACT_REPORT_LEAK; the detail never repeats the token).
    """
    cids, dids, tids = blind.candidate_ids, blind.dimension_ids, blind.target_ids
    findings: list[Finding] = []
    context_ids = {c.id for c in blind.context}
    known_ids = set(cids) | set(dids) | set(tids) | {t.id for t in blind.fineOutline} | context_ids
    evidence_ids = {
        "candidate": set(cids),
        "fine_outline": {t.id for t in blind.fineOutline},
        "oracle_assertion": set(tids),
        "judge_inference": known_ids,
        "context": context_ids,
    }
    allowed_types = set(blind.policy.evidenceTypes)  # `context` only when the input carries an evidence pack
    texts = {c.candidateId: normalize_for_match(c.text) for c in blind.candidates}

    # Scores: candidates × dimensions.
    score_keys = [(s.candidateId, s.dimensionId) for s in report.scores]
    expected_scores = [(c, d) for c in cids for d in dids]
    score_counts, firsts = _coverage(score_keys, expected_scores)
    present = {score_keys[i] for i in firsts}
    expected_score_set = set(expected_scores)
    for c, d in expected_scores:
        if (c, d) not in present:
            findings.append(Finding("CONTRACT_SCORE_MISSING", f"no score for candidate {c} on dimension {d}"))
    value_oor = off_step = 0
    quotes: dict[tuple[str, str], tuple[int, int]] = {}
    for i, s in enumerate(report.scores):
        where = f"score for candidate {s.candidateId} on dimension {s.dimensionId}"
        key = score_keys[i]
        if key not in expected_score_set:
            findings.append(Finding("CONTRACT_SCORE_UNKNOWN_ID", f"{where}: unknown candidate or dimension id"))
            continue
        if i not in firsts:
            findings.append(Finding("CONTRACT_SCORE_DUPLICATE", f"{where}: given more than once"))
            continue
        if not rubric.scale.contains(s.score):
            value_oor += 1
            findings.append(
                Finding(
                    "CONTRACT_SCORE_OUT_OF_RANGE",
                    f"{where}: {s.score} is outside {rubric.scale.min}–{rubric.scale.max}",
                )
            )
        elif not rubric.scale.on_step(s.score):
            off_step += 1
            findings.append(
                Finding("CONTRACT_SCORE_OFF_STEP", f"{where}: {s.score} is not a multiple of {rubric.scale.step}")
            )
        if not s.reason.strip():
            findings.append(Finding("CONTRACT_REASON_EMPTY", f"{where}: the reason is empty"))
        elif guard is not None and guard.findings(s.reason):
            findings.append(Finding("CONTRACT_REPORT_LEAK", f"{where}: {_LEAK_DETAIL}"))
        match = locate_quote(texts[s.candidateId], s.candidateQuote, min_chars=QUOTE_MIN_CHARS)
        if match.ok:
            quotes[key] = (match.start, match.end)
        else:
            explain = {
                "empty": "candidateQuote is empty",
                "too_short": f"candidateQuote has fewer than {QUOTE_MIN_CHARS} characters",
                "not_found": "candidateQuote is not found verbatim in this candidate's text",
                "not_unique": f"candidateQuote occurs {match.occurrences}+ times in this candidate; quote more",
            }[match.status]
            findings.append(Finding(match.error_code or "CONTRACT_QUOTE_NOT_FOUND", f"{where}: {explain}"))
        if not s.evidenceRefs:
            findings.append(Finding("CONTRACT_EVIDENCE_MISSING", f"{where}: evidenceRefs is empty"))
        if rubric.evidence == "structured_summary":
            findings += _summary_findings(s.reason, [r.id for r in s.evidenceRefs if r.type in _STANDARD], where)
        for ref in s.evidenceRefs:
            if ref.type == "card_index":
                findings.append(
                    Finding("CONTRACT_EVIDENCE_CARD_INDEX", f"{where}: the blind input has no cards (card_index)")
                )
            elif ref.type not in allowed_types:
                findings.append(
                    Finding("CONTRACT_EVIDENCE_TYPE", f"{where}: evidence type {ref.type!r} is not allowed")
                )
            elif ref.id not in evidence_ids[ref.type]:
                findings.append(
                    Finding("CONTRACT_EVIDENCE_UNKNOWN_ID", f"{where}: {ref.type} id {ref.id!r} is not in this input")
                )

    # Rankings: one complete permutation per dimension.
    rank_keys = [(r.dimensionId,) for r in report.rankings]
    rank_counts, rank_firsts = _coverage(rank_keys, [(d,) for d in dids])
    present_dims = {rank_keys[i][0] for i in rank_firsts}
    for d in dids:
        if d not in present_dims:
            findings.append(Finding("CONTRACT_RANKING_MISSING", f"no ranking for dimension {d}"))
    incomplete = 0
    for i, r in enumerate(report.rankings):
        if r.dimensionId not in dids:
            findings.append(Finding("CONTRACT_RANKING_UNKNOWN_ID", f"ranking for unknown dimension {r.dimensionId}"))
        elif i not in rank_firsts:
            findings.append(Finding("CONTRACT_RANKING_DUPLICATE", f"dimension {r.dimensionId} is ranked twice"))
        elif sorted(r.order) != sorted(cids):
            incomplete += 1
            findings.append(
                Finding(
                    "CONTRACT_RANKING_INCOMPLETE",
                    f"ranking for {r.dimensionId} must list every candidate id exactly once ({len(cids)} ids)",
                )
            )

    # Verdicts: candidates × (assertions + constraints).
    verdict_keys = [(v.candidateId, v.targetId) for v in report.verdicts]
    expected_verdicts = [(c, t) for c in cids for t in tids]
    verdict_counts, v_firsts = _coverage(verdict_keys, expected_verdicts)
    present_v = {verdict_keys[i] for i in v_firsts}
    for c, t in expected_verdicts:
        if (c, t) not in present_v:
            findings.append(Finding("CONTRACT_VERDICT_MISSING", f"no verdict for candidate {c} on {t}"))
    bad_value = 0
    allowed_verdicts = blind.policy.verdictValues  # an oracle panel allows unknown (no correction for it)
    expected_v_set = set(expected_verdicts)
    for i, v in enumerate(report.verdicts):
        where = f"verdict for candidate {v.candidateId} on {v.targetId}"
        if verdict_keys[i] not in expected_v_set:
            findings.append(Finding("CONTRACT_VERDICT_UNKNOWN_ID", f"{where}: unknown candidate or target id"))
        elif i not in v_firsts:
            findings.append(Finding("CONTRACT_VERDICT_DUPLICATE", f"{where}: given more than once"))
        elif v.verdict not in allowed_verdicts:
            bad_value += 1
            findings.append(
                Finding("CONTRACT_VERDICT_VALUE", f"{where}: verdict must be one of {', '.join(allowed_verdicts)}")
            )
        if guard is not None and guard.findings(v.reason):
            findings.append(Finding("CONTRACT_REPORT_LEAK", f"{where}: {_LEAK_DETAIL}"))

    return ContractResult(
        findings=findings,
        scores=score_counts,
        rankings=rank_counts,
        verdicts=verdict_counts,
        score_value_out_of_range=value_oor,
        score_off_step=off_step,
        rankings_incomplete=incomplete,
        verdict_value_invalid=bad_value,
        quotes=quotes,
    )
