"""Character-level diff of a revision against its base, for the chapter page.

Lines are matched first (so an untouched paragraph stays one collapsed "unchanged" run); a changed run of
lines is then diffed character by character, so a two-character edit inside an 1,800-character paragraph
shows as exactly those two characters deleted and inserted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Literal

#: Above this product of lengths a changed run is shown as deleted + inserted whole (a whole-chapter
#: rewrite): a character diff of two unrelated 5,000-character texts takes seconds and shows only noise.
MAX_CHAR_DIFF_WORK = 4_000_000
CONTEXT_LINES = 1


@dataclass
class Piece:
    op: Literal["equal", "delete", "insert"]
    text: str


@dataclass
class Hunk:
    """An unchanged run (collapsed to a count when long) or a changed run with its character pieces."""

    kind: Literal["same", "change"]
    base_line: int  # 1-based file line in the base where the run starts
    new_line: int
    lines: int = 0  # unchanged lines in a collapsed run
    pieces: list[Piece] = field(default_factory=list)
    deleted: int = 0  # characters
    inserted: int = 0


@dataclass
class Diff:
    hunks: list[Hunk]
    deleted: int
    inserted: int
    changed_runs: int

    @property
    def identical(self) -> bool:
        return self.changed_runs == 0


def _char_pieces(a: str, b: str) -> list[Piece]:
    if len(a) * len(b) > MAX_CHAR_DIFF_WORK:
        return [p for p in (Piece("delete", a), Piece("insert", b)) if p.text]
    out: list[Piece] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(Piece("equal", a[i1:i2]))
        else:
            if i2 > i1:
                out.append(Piece("delete", a[i1:i2]))
            if j2 > j1:
                out.append(Piece("insert", b[j1:j2]))
    return out


def char_diff(base: str, new: str, *, first_line: int = 1) -> Diff:
    """Diff `new` against `base` (both bodies): unchanged lines collapsed, changed lines character by character."""
    a, b = base.splitlines(keepends=True), new.splitlines(keepends=True)
    hunks: list[Hunk] = []
    deleted = inserted = runs = 0
    ops = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for k, (op, i1, i2, j1, j2) in enumerate(ops):
        if op == "equal":
            lead = CONTEXT_LINES if k > 0 else 0
            trail = CONTEXT_LINES if k < len(ops) - 1 else 0
            if i2 - i1 <= lead + trail + 1:
                hunks.append(
                    Hunk("change", first_line + i1, first_line + j1, pieces=[Piece("equal", "".join(a[i1:i2]))])
                )
                continue
            if lead:
                hunks.append(
                    Hunk(
                        "change", first_line + i1, first_line + j1, pieces=[Piece("equal", "".join(a[i1 : i1 + lead]))]
                    )
                )
            hunks.append(Hunk("same", first_line + i1 + lead, first_line + j1 + lead, lines=i2 - i1 - lead - trail))
            if trail:
                hunks.append(
                    Hunk(
                        "change",
                        first_line + i2 - trail,
                        first_line + j2 - trail,
                        pieces=[Piece("equal", "".join(a[i2 - trail : i2]))],
                    )
                )
            continue
        pieces = _char_pieces("".join(a[i1:i2]), "".join(b[j1:j2]))
        d = sum(len(p.text) for p in pieces if p.op == "delete")
        n = sum(len(p.text) for p in pieces if p.op == "insert")
        deleted, inserted, runs = deleted + d, inserted + n, runs + 1
        hunks.append(Hunk("change", first_line + i1, first_line + j1, pieces=pieces, deleted=d, inserted=n))
    return Diff(_merge(hunks), deleted, inserted, runs)


def _merge(hunks: list[Hunk]) -> list[Hunk]:
    """Join adjacent change hunks (context + change + context) into one block of running text."""
    out: list[Hunk] = []
    for h in hunks:
        if out and h.kind == "change" and out[-1].kind == "change":
            prev = out[-1]
            prev.pieces += h.pieces
            prev.deleted += h.deleted
            prev.inserted += h.inserted
        else:
            out.append(h)
    kept = [h for h in out if h.kind == "same" or any(p.op != "equal" for p in h.pieces)]
    for h in kept:  # blank context lines at either end only add empty space
        if h.pieces and h.pieces[0].op == "equal":
            text = h.pieces[0].text
            lead = len(text) - len(text.lstrip("\n"))
            h.pieces[0].text = text[lead:]
            h.base_line += lead
            h.new_line += lead
        if h.pieces and h.pieces[-1].op == "equal":
            h.pieces[-1].text = h.pieces[-1].text.rstrip("\n")
        h.pieces = [p for p in h.pieces if p.text]
    return kept
