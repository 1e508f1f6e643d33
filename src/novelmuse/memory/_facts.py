"""Fact cards (事实卡, seed 004): storage bound to the chapter's sha256 and the receipt that produced them.

A fact card is the extractor's structured output for one chapter plus the located [start, end) offsets
of every item's quote in the chapter body. It is stored append-only (`fact_cards`); the *current* card of
a chapter is the newest whose `chapter_sha256` equals the chapter file's sha256 now — editing the chapter
makes its fact card stale until it is extracted again. Deterministic validation (plant cap, known
foreshadows, dead cards acting) happens when the memory is replayed (`_replay.py`), never here.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from ..book import Chapter
from ..errors import FailedClosed
from ..roles.extractor import MIN_QUOTE_CHARS, FactCardOutput
from ..store import new_id, transaction, utc_now
from ..text import locate_quote, normalize_for_match


@dataclass(frozen=True)
class FactCard:
    """One stored fact card."""

    id: str
    chapter: int
    chapter_sha256: str
    receipt_id: str | None
    call_id: str | None
    run_id: str | None
    prompt_sha256: str
    model: str
    output: FactCardOutput
    spans: list[tuple[int, int]]  # aligned with output.items()
    created_at: str


def locate_items(chapter: Chapter, output: FactCardOutput) -> list[tuple[int, int]]:
    """The [start, end) span of every item's quote; a quote not found exactly once fails closed."""
    norm = normalize_for_match(chapter.body)
    spans: list[tuple[int, int]] = []
    for kind, i, item in output.items():
        m = locate_quote(norm, item.quote, min_chars=MIN_QUOTE_CHARS)
        if not m.ok:
            raise FailedClosed(
                m.error_code or "CONTRACT_QUOTE_NOT_FOUND",
                f"fact card item {kind}s[{i}] has a quote that is not found exactly once ({m.status})",
                f"chapter {chapter.number}",
                "extract the chapter's facts again",
            )
        spans.append((m.start, m.end))
    return spans


def store_fact_card(
    conn: sqlite3.Connection,
    chapter: Chapter,
    output: FactCardOutput,
    *,
    prompt_sha256: str,
    model: str,
    receipt_id: str | None = None,
    call_id: str | None = None,
    run_id: str | None = None,
) -> FactCard:
    """Locate every quote in `chapter` and store the fact card bound to the chapter's sha256 and receipt."""
    spans = locate_items(chapter, output)
    card = FactCard(
        new_id("F"),
        chapter.number,
        chapter.sha256,
        receipt_id,
        call_id,
        run_id,
        prompt_sha256,
        model,
        output,
        spans,
        utc_now(),
    )
    payload = json.dumps({"output": output.model_dump(mode="json"), "spans": spans}, ensure_ascii=False)
    with transaction(conn):
        conn.execute(
            "INSERT INTO fact_cards VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                card.id,
                card.chapter,
                card.chapter_sha256,
                card.run_id,
                card.call_id,
                card.receipt_id,
                card.prompt_sha256,
                card.model,
                payload,
                card.created_at,
            ),
        )
    return card


def _row_to_card(row: sqlite3.Row) -> FactCard:
    payload = json.loads(row["output_json"])
    return FactCard(
        row["id"],
        row["chapter"],
        row["chapter_sha256"],
        row["receipt_id"],
        row["call_id"],
        row["run_id"],
        row["prompt_sha256"],
        row["model"],
        FactCardOutput.model_validate(payload["output"]),
        [(int(a), int(b)) for a, b in payload["spans"]],
        row["created_at"],
    )


def latest_fact_cards(conn: sqlite3.Connection) -> dict[int, FactCard]:
    """The newest stored fact card of every chapter (whatever sha256 it is bound to)."""
    rows = conn.execute(
        "SELECT * FROM fact_cards f WHERE id = (SELECT max(id) FROM fact_cards g WHERE g.chapter = f.chapter)"
    )
    return {c.chapter: c for c in map(_row_to_card, rows)}


def current_fact_cards(conn: sqlite3.Connection, shas: dict[int, str]) -> dict[int, FactCard]:
    """For each chapter in `shas` (number → sha256 now), the newest fact card bound to that sha256."""
    out: dict[int, FactCard] = {}
    rows = conn.execute("SELECT * FROM fact_cards ORDER BY id")
    for row in rows:
        n = row["chapter"]
        if shas.get(n) == row["chapter_sha256"]:
            out[n] = _row_to_card(row)
    return out
