"""Loader for the judging page: each panel with its candidates side by side (each judge's quotes
highlighted at their contract-checked offsets), every judge's score per dimension, and the reliability
figures per run. Arms are shown only for ended panels whose sealed arm map still matches its hash.

Replay and gate sections (issues 12, 13) will be added the same way: a loader here beside this one and a
template, registered in `_render.SECTIONS`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from ...errors import MuseError
from ...judging import PanelReport, Reliability, SealedArmMap, panel_scores, reliability
from ...store import get_texts
from ._marks import Line, Mark, segment_lines, valid_marks


@dataclass
class CandidateView:
    id: str
    arm: str | None
    sha256: str
    chars: int
    lines: list[Line]
    available: bool
    unplaced: int = 0


@dataclass
class ScoreRow:
    dimension: str
    cells: list[tuple[str, list[float | None], float | None, str]]  # candidate, per judge, final, method


@dataclass
class QuoteRow:
    mark: str
    judge: int
    candidate: str
    dimension: str
    score: float
    quote: str
    reason: str


@dataclass
class PanelView:
    report: PanelReport
    candidates: list[CandidateView]
    judges: list[int]
    scores: list[ScoreRow]
    quotes: list[QuoteRow]
    arms_note: str = ""
    verdicts: list[tuple[str, str, str, list[str]]] = field(default_factory=list)


@dataclass
class RunView:
    run_id: str
    panels: list[PanelView]
    reliability: Reliability


def _arms(conn: sqlite3.Connection, report: PanelReport) -> tuple[dict[str, str], str]:
    """The opened arm map of an ended panel (read only: nothing is marked), or why it is not shown."""
    row = conn.execute("SELECT sha256, payload FROM judge_arm_maps WHERE panel_id = ?", (report.panel_id,)).fetchone()
    if row is None:
        return {}, "arm map not found"
    try:
        return SealedArmMap(row["payload"], row["sha256"]).open(report.arm_map_sha256), ""
    except MuseError as exc:
        return {}, f"arm map not shown: {exc.code}"


def build_judging(conn: sqlite3.Connection, panels: list[PanelReport], candidates: dict[str, str]) -> list[RunView]:
    """Panels grouped by run (newest run first), with candidate texts from the store."""
    by_run: dict[str, list[PanelReport]] = {}
    for p in panels:
        by_run.setdefault(p.run_id, []).append(p)
    runs: list[RunView] = []
    for run_id in sorted(by_run, reverse=True):
        views = [_panel_view(conn, p, candidates) for p in by_run[run_id]]
        runs.append(RunView(run_id, views, reliability([panel_scores(p) for p in by_run[run_id]])))
    return runs


def candidate_texts(conn: sqlite3.Connection, panels: list[PanelReport]) -> dict[str, str]:
    """sha256 → text of every judged candidate that is stored."""
    return get_texts(conn, [c.sha256 for p in panels for c in p.candidates])


def _panel_view(conn: sqlite3.Connection, report: PanelReport, texts: dict[str, str]) -> PanelView:
    arms, note = _arms(conn, report)
    quotes: list[QuoteRow] = []
    marks: dict[str, list[Mark]] = {}
    for j in sorted(report.judges, key=lambda j: j.slot):
        for k, q in enumerate(j.quotes):
            s = next(
                (s for s in j.scores if s.candidate_id == q.candidate_id and s.dimension_id == q.dimension_id), None
            )
            mid = f"p{report.panel_id[-8:]}-j{j.slot}-{k}"
            marks.setdefault(q.candidate_id, []).append(
                Mark(mid, "judge", f"j{j.slot}", q.start, q.end, f"judge {j.slot} · {q.dimension_id}")
            )
            quotes.append(
                QuoteRow(
                    mid,
                    j.slot,
                    q.candidate_id,
                    q.dimension_id,
                    s.score if s else float("nan"),
                    s.quote if s else "",
                    s.reason if s else "",
                )
            )
    cands: list[CandidateView] = []
    for c in report.candidates:
        text = texts.get(c.sha256)
        if text is None:
            cands.append(CandidateView(c.candidate_id, arms.get(c.candidate_id), c.sha256, c.chars, [], False))
            continue
        ok, bad = valid_marks(text, marks.get(c.candidate_id, []))
        cands.append(
            CandidateView(
                c.candidate_id, arms.get(c.candidate_id), c.sha256, c.chars, segment_lines(text, ok), True, len(bad)
            )
        )
    slots = sorted(j.slot for j in report.judges)
    per_judge = {
        j.slot: {(s.candidate_id, s.dimension_id): s.score for s in j.scores}
        for j in report.judges
        if j.outcome == "ok"
    }
    final = {(s.candidate_id, s.dimension_id): (s.score, s.method) for s in report.scores}
    dims: list[str] = []
    for j in report.judges:
        for s in j.scores:
            if s.dimension_id not in dims:
                dims.append(s.dimension_id)
    rows = [
        ScoreRow(
            d,
            [
                (
                    c.candidate_id,
                    [per_judge.get(slot, {}).get((c.candidate_id, d)) for slot in slots],
                    final.get((c.candidate_id, d), (None, ""))[0],
                    final.get((c.candidate_id, d), (None, ""))[1],
                )
                for c in report.candidates
            ],
        )
        for d in dims
    ]
    return PanelView(
        report,
        cands,
        slots,
        rows,
        quotes,
        note,
        [(v.candidate_id, v.target_id, v.verdict, v.judge_verdicts) for v in report.verdicts],
    )
