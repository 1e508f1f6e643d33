"""The replayed memory, cached per card in the store (``memory_state``), keyed by everything it depends on.

`muse cards show X` needs one card's as-of series, but replaying means parsing every card and outline and
applying every fact card (0.3 s of a 0.95 s command for 1,000 chapters × 500 cards). A replay's result is
stored per card under a fingerprint of its inputs: the sha256 of every card file, outline file and chapter
file (stat first, `FileHashes`), the fact-card rows, the memory settings, the status vocabulary and the code
that replays. When the fingerprint matches, showing a card reads two small rows; any change to any input
(a new fact card, an edited chapter or card) changes the fingerprint, and the next command replays and
stores again — the cache is invalidated exactly when a file changes, never by time.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from ..book import Book, outline_paths
from ..store import transaction
from ..text import sha256_hex, sha256_json
from ._asof import CardIndex, CardState, Key, Source, ValueAt, _Change, _Series
from ._cards import Card, CardSet, card_paths
from ._files import FileHashes
from ._replay import STATUS_VOCABULARY, FactsStatus, replay


@cache
def _code_sha256() -> str:
    """The replaying code itself: a change of rules invalidates what older code stored."""
    here = Path(__file__).parent
    names = ["_asof.py", "_cards.py", "_facts.py", "_ledger.py", "_replay.py", "_statecache.py"]
    outline = here.parent / "book" / "_outline.py"
    return sha256_json([sha256_hex((here / n).read_bytes()) for n in names] + [sha256_hex(outline.read_bytes())])


def fingerprint(book: Book) -> str:
    """What a replay of `book` depends on (see the module doc)."""
    conn = book.db
    hashes = FileHashes(conn, book.root)

    def shas(paths: list[Path]) -> list[tuple[str, str]]:
        return [(p.name, hashes.sha256(p)) for p in paths]

    facts = conn.execute("SELECT count(*), max(id) FROM fact_cards").fetchone()
    fp = sha256_json(
        {
            "cards": shas(card_paths(book)),
            "outlines": shas(list(outline_paths(book).values())),
            "chapters": shas(list(book.chapter_paths().values())),
            "facts": [facts[0], facts[1]],
            "memory": book.config.memory.model_dump(),
            "status": STATUS_VOCABULARY.sha256,
            "code": _code_sha256(),
        }
    )
    with contextlib.suppress(sqlite3.Error):
        hashes.save()
    return fp


def _source_json(s: Source) -> list[Any]:
    return [s.kind, s.file, s.line, s.chapter, s.start, s.end, s.receipt_id, s.fact_card_id]


def _series_json(series: dict[Key, _Series]) -> list[Any]:
    return [
        [list(key), [[c.chapter, c.value, _source_json(c.source), c.author_start, c.note] for c in s.changes]]
        for key, s in series.items()
    ]


def _series_from_json(data: list[Any]) -> dict[Key, _Series]:
    out: dict[Key, _Series] = {}
    for key, changes in data:
        series = _Series()
        for chapter, value, src, author_start, note in changes:
            series.starts.append(chapter)
            series.changes.append(_Change(chapter, value, Source(*src), author_start, note))
        out[tuple(key)] = series
    return out


@dataclass(frozen=True)
class CardView:
    """What `muse cards show` prints: a card as of a chapter, optionally its history, and the facts status."""

    state: CardState
    history: dict[str, list[ValueAt]] | None
    facts_status: dict[int, FactsStatus]


def _store(conn: sqlite3.Connection, fp: str, rows: list[tuple[str, str]]) -> None:
    with contextlib.suppress(sqlite3.Error), transaction(conn):  # a read-only database only loses the cache
        conn.execute("DELETE FROM memory_state")
        conn.executemany("INSERT INTO memory_state VALUES (?, ?, ?)", [(k, fp, v) for k, v in rows])


def card_view(book: Book, name: str, as_of: int, *, history: bool = False) -> CardView:
    """One card (by id, name or alias) as of `as_of`, from the cached replay when its fingerprint matches,
    else from a replay (which is then cached). Errors are those of `replay` and `CardSet.require`."""
    conn = book.db
    fp = fingerprint(book)
    rows = dict(
        conn.execute("SELECT key, value FROM memory_state WHERE fingerprint = ? AND key = 'names'", (fp,)).fetchall()
    )
    if "names" in rows:
        names = json.loads(rows["names"])
        cid = names["by_name"].get(name.strip())
        if cid is not None:
            row = conn.execute(
                "SELECT value FROM memory_state WHERE fingerprint = ? AND key = ?", (fp, f"card:{cid}")
            ).fetchone()
            if row is not None:
                return _view_from_cache(names, cid, json.loads(row[0]), as_of, history)
    state = replay(book)
    card = state.cards.require(name)
    meta: dict[str, Any] = {
        "by_name": state.cards.by_name,
        "cards": {c.id: [c.type, c.name, c.aliases] for c in state.cards.cards.values()},
        "facts_status": {str(n): s for n, s in state.facts_status.items()},
    }
    _store(
        conn,
        fp,
        [("names", json.dumps(meta, ensure_ascii=False))]
        + [
            (f"card:{cid}", json.dumps(_series_json(series), ensure_ascii=False))
            for cid, series in state.index.series().items()
        ],
    )
    past = state.index.history(card.id, as_of) if history else None
    return CardView(state.index.card_as_of(card.id, as_of), past, dict(state.facts_status))


def _view_from_cache(meta: dict[str, Any], cid: str, series: list[Any], as_of: int, history: bool) -> CardView:
    cards = {i: Card(i, kind, name, aliases, "", "", 0) for i, (kind, name, aliases) in meta["cards"].items()}
    index = CardIndex.from_series(CardSet(cards, meta["by_name"]), {cid: _series_from_json(series)})
    status: dict[int, Literal["current", "stale", "missing"]] = {int(n): s for n, s in meta["facts_status"].items()}
    return CardView(index.card_as_of(cid, as_of), index.history(cid, as_of) if history else None, status)
