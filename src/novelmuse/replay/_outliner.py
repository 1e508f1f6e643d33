"""The fine-outline gates (细纲智能体的 Gate A / Gate B): the outliner configuration their receipts bind, and the
samples of an outliner replay as the store keeps them.

The fine-outline agent is measured the way the writer is. A registered **outliner set** names target chapters, each
with the frozen snapshot as of N−1 and a reference scaffold (a fine outline of N, pinned by sha256); a replay of it
drafts every item twice — arm **A** (the baseline: the plan, the settings, the previous chapter and the cards'
names) and arm **C** (the candidate: A plus the story memory as of N−1 — the recent outlines, the card states and
the open foreshadows, which is what `muse outline draft` drafts with) — in the sealed plan's balanced order. The
reference lint (`writing.reference_coverage`) gives each draft a deterministic verdict per hard item of the
reference; a blind panel under `fine_outline_replay` (never shown chapter N) gives its own verdicts on the same ids
and scores six dimensions. The one GateInputBuilder turns that into a gate input, and the one issuer journals Gate A
(the lint and the panel agree, chance-corrected, with fails on both sides) and Gate B (C measurably better than
A; ties fail) under the stage's own gate spec, signing receipts that bind `outliner_config(book)`.

The outliner configuration (`_outliner_config`): the outliner's and the fine-outline judge's prompts and schemas,
their models, the code that builds the outliner's input, lints drafts and runs the experiment (`OUTLINER_CODE`), the
arms, the gate spec and the book's budgets it drafts within. Change any part and it is another outliner: receipts
earned before stop counting — the third stage's entry guard (`muse plan draft`) admits only the outliner
configuration of now.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..book import Book, atomic_write_bytes
from ..store import transaction, utc_now
from ..text import canonical_json, sha256_hex
from ..writing import CoverItem
from ._sets import private_dirs
from ._spec import Arm

# ── the samples as stored (migration 0019) ──────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class OutlineSampleRow:
    """One arm's draft of one item, as the store keeps it."""

    item_id: str
    arm: Arm
    text: str
    text_sha256: str
    messages_sha256: str
    call_id: str
    lint_json: str
    lint_sha256: str

    def lint(self) -> list[dict[str, Any]]:
        """The reference lint's verdicts as stored (check `lint_sha256` first)."""
        items = json.loads(self.lint_json)
        assert isinstance(items, list)
        return items


def lint_record(items: list[CoverItem]) -> str:
    """The reference lint's verdicts as canonical JSON (the overlap as an exact fraction ``n/d``)."""
    rows = [
        {
            "kind": i.kind,
            "id": i.id,
            "verdict": i.verdict,
            "severity": i.severity,
            "overlap": f"{i.overlap.numerator}/{i.overlap.denominator}",
            "matched": i.matched,
        }
        for i in items
    ]
    return canonical_json(rows)


def overlap_of(record: dict[str, Any]) -> Fraction:
    """The exact overlap of one stored lint verdict."""
    return Fraction(str(record["overlap"]))


def prompt_location(book: Book, run_id: str, sha256: str) -> str:
    """Where an outliner sample's prompt (its rendered messages, canonical JSON) is kept, relative to the book: the
    sample's manifest — what its draft was made from — which a receipt binds and re-hashes."""
    return f".muse/replay/runs/{run_id}/prompts/{sha256}.json"


def keep_prompt(book: Book, run_id: str, messages: list[dict[str, Any]]) -> str:
    """Write a sample's prompt where `prompt_location` says (private, atomic; the same prompt once); its sha256."""
    body = canonical_json(messages).encode("utf-8")
    digest = sha256_hex(body)
    path = book.root / prompt_location(book, run_id, digest)
    if not (path.is_file() and sha256_hex(path.read_bytes()) == digest):
        private_dirs(book, path.parent)
        atomic_write_bytes(path, body, mode=0o600)
    return digest


def store_outline_sample(
    conn: sqlite3.Connection,
    run_id: str,
    item_id: str,
    arm: Arm,
    *,
    text: str,
    messages_sha256: str,
    call_id: str,
    lint: list[CoverItem],
) -> None:
    """Keep one arm's draft of an item with its prompt's sha256, its call and its lint verdicts (a redone sample of
    an interrupted run replaces the row its first attempt may have left)."""
    record = lint_record(lint)
    with transaction(conn):
        conn.execute(
            "INSERT OR REPLACE INTO replay_outline_drafts (run_id, item_id, arm, text, text_sha256, messages_sha256,"
            " call_id, lint_json, lint_sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                item_id,
                arm,
                text,
                sha256_hex(text),
                messages_sha256,
                call_id,
                record,
                sha256_hex(record),
                utc_now(),
            ),
        )


def outline_samples_of(conn: sqlite3.Connection, run_id: str) -> dict[tuple[str, str], OutlineSampleRow]:
    """Every stored draft of run `run_id`, by (item, arm)."""
    rows = conn.execute(
        "SELECT item_id, arm, text, text_sha256, messages_sha256, call_id, lint_json, lint_sha256"
        " FROM replay_outline_drafts WHERE run_id = ?",
        (run_id,),
    ).fetchall()
    return {(str(r[0]), str(r[1])): OutlineSampleRow(*(str(x) for x in r)) for r in rows}  # type: ignore[arg-type]
