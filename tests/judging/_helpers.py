"""Shared test data for judging: candidates cut from the real corpus, and well-formed judge reports."""

from __future__ import annotations

from collections.abc import Callable

from novelmuse.judging import BlindInput, Candidate, quote_hints
from novelmuse.text import split_paragraphs
from tests.conftest import SANGUO


def sanguo_chapter(n: int) -> str:
    """The body of 三国演义 chapter `n` (heading line dropped)."""
    text = SANGUO.read_text(encoding="utf-8")
    marks = [p for p in split_paragraphs(text) if p.text.startswith("第") and "回　" in p.text[:12]]
    start = marks[n - 1].end
    end = marks[n].start if n < len(marks) else len(text)
    return text[start:end].strip()


def corpus_candidates(n: int = 2, chars: int = 1500) -> list[Candidate]:
    """`n` candidates (arms A, B, C, …) cut from consecutive chapters of 三国演义, each ending at the end of a sentence
    within `chars` characters (a finished text: the output_compliance hard block checks that)."""
    out = []
    for i in range(n):
        text = sanguo_chapter(i + 1)[:chars]
        out.append(Candidate(chr(ord("A") + i), text[: text.rindex("。") + 1]))
    return out


ScoreFn = Callable[[str, str, int], float]


def good_report(blind: BlindInput, score: ScoreFn | float = 4.0) -> dict[str, object]:
    """A contract-valid judge report for `blind`; `score(candidateId, dimensionId, position)` sets scores."""
    fn: ScoreFn = score if callable(score) else (lambda c, d, i: float(score))  # type: ignore[misc]
    order = blind.candidate_ids
    scores = []
    for pos, c in enumerate(blind.candidates):
        quote = quote_hints(c.text, "test-key", count=1)[0]
        for d in blind.dimension_ids:
            scores.append(
                {
                    "candidateId": c.candidateId,
                    "dimensionId": d,
                    "score": fn(c.candidateId, d, pos),
                    "reason": f"{d} 的理由",
                    "candidateQuote": quote,
                    "evidenceRefs": [{"type": "candidate", "id": c.candidateId}],
                }
            )
    rankings = [{"dimensionId": d, "order": list(order)} for d in blind.dimension_ids]
    verdicts = [
        {"candidateId": c, "targetId": t, "verdict": "pass", "reason": "成立"} for c in order for t in blind.target_ids
    ]
    return {"scores": scores, "rankings": rankings, "verdicts": verdicts}
