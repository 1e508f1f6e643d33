"""The reference lint: how a drafted fine outline covers the hard items of a reference scaffold for the same chapter.

This is the fine-outline gates' deterministic check (what the detector is to the writer's gates): one verdict per
hard item of the reference — pass, fail or unknown — decided by rules anyone can redo by hand, never by a model:

- a foreshadow **advance** or **resolve** names a foreshadow planted before the chapter, by id: pass when the draft
  makes the same operation on the same id, fail otherwise;
- every other hard item (a hard event, its result, a plant, the hook, a new setting, a time anchor) is compared by
  its text with the draft's items of the same kind: the share of the reference text's character pairs (letters and
  digits; punctuation and spaces left out) that the best-matching draft item also has — at least `PASS_AT`: pass;
  below `FAIL_BELOW`: fail; in between: unknown (the lint does not guess).

Hard events and their results are high severity (what the chapter must do), the rest medium. The thresholds are
part of the code the outliner configuration pins: changing them is another yardstick, and receipts earned under
the old one stop counting.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from typing import Final, Literal

from ..book import FineOutline, OutlineItem

PASS_AT: Final = Fraction(1, 2)
FAIL_BELOW: Final = Fraction(1, 5)
_BY_ID: Final = frozenset({"advance", "resolve"})
_HIGH: Final = frozenset({"event", "result"})

CoverVerdict = Literal["pass", "fail", "unknown"]


@dataclass(frozen=True)
class CoverItem:
    """The lint's verdict on one hard item of the reference (its kind and id), with the overlap it rests on."""

    kind: str
    id: str
    verdict: CoverVerdict
    severity: Literal["high", "medium"]
    overlap: Fraction  # 1 or 0 for an item matched by id
    matched: str  # the draft item's id that matched best ("" when none)


def char_pairs(text: str) -> frozenset[str]:
    """The set of adjacent character pairs of `text`'s letters and digits (everything else left out)."""
    kept = [ch for ch in text if ch.isalnum()]
    return frozenset(a + b for a, b in pairwise(kept))


def overlap(reference: str, candidate: str) -> Fraction:
    """The share of `reference`'s character pairs that `candidate` also has (0 when the reference has none)."""
    ref = char_pairs(reference)
    if not ref:
        return Fraction(0)
    return Fraction(len(ref & char_pairs(candidate)), len(ref))


def _verdict(share: Fraction) -> CoverVerdict:
    return "pass" if share >= PASS_AT else "fail" if share < FAIL_BELOW else "unknown"


def _cover(item: OutlineItem, draft: list[OutlineItem]) -> CoverItem:
    severity: Literal["high", "medium"] = "high" if item.kind in _HIGH else "medium"
    same_kind = [d for d in draft if d.kind == item.kind]
    if item.kind in _BY_ID:
        hit = next((d for d in same_kind if d.ref == item.ref), None)
        share = Fraction(1 if hit is not None else 0)
        return CoverItem(
            item.kind, item.id, "pass" if hit else "fail", severity, share, hit.id if hit is not None else ""
        )
    best: tuple[Fraction, str] = (Fraction(0), "")
    for d in same_kind:
        share = overlap(item.text, d.text)
        if share > best[0]:
            best = (share, d.id)
    return CoverItem(item.kind, item.id, _verdict(best[0]), severity, best[0], best[1])


def reference_coverage(draft: FineOutline, reference: FineOutline) -> list[CoverItem]:
    """The lint's verdict on every hard item of `reference` for `draft` (see the module doc), in the reference's
    order."""
    ours = draft.items()
    return [_cover(item, ours) for item in reference.items() if item.hard]
