"""The blind input the judge-report fuzz target checks replies against (deterministic: seeded ids, corpus text)."""

from __future__ import annotations

from novelmuse.judging import BlindItem, Target, build_blind_item, load_rubric
from tests.judging._helpers import corpus_candidates

RUBRIC = load_rubric("quality_gate")
ITEM: BlindItem = build_blind_item(
    item_id="fuzz",
    seed="fuzz",
    rubric=RUBRIC,
    candidates=corpus_candidates(2, chars=400),
    assertions=[Target("a1", "桃园结义")],
    constraints=[Target("h1", "无现代词")],
)
BLIND = ITEM.blind
