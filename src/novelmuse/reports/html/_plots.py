"""Geometry of the overview's inline SVG plots, computed here; the markup is in the templates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...llm import CostLine


@dataclass
class Bar:
    x: float
    y: float
    w: float
    h: float
    css: str
    title: str
    link: str = ""


@dataclass
class Rule:
    y: float
    label: str
    css: str


@dataclass
class ChapterPlot:
    """Characters per chapter (bars, limits as lines) and the editor's overall score (dots on 0–100)."""

    width: int
    height: int
    left: int
    top: int
    plot_h: int
    bars: list[Bar]
    limits: list[Rule]
    ticks: list[Rule]
    score_ticks: list[Rule]
    scores: list[tuple[float, float, str, str]]  # x, y, title, verdict
    score_path: str
    labels: list[tuple[float, str]] = field(default_factory=list)


def chapter_plot(rows: list[dict[str, object]], min_chars: int | None, max_chars: int | None) -> ChapterPlot:
    """One bar per chapter; colour says the length outcome; dots are the latest editor overall score."""
    width, height, left, right, top, bottom = 960, 240, 56, 40, 14, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(len(rows), 1)
    peak = max([int(r["chars"]) for r in rows] + [max_chars or 0, min_chars or 0, 1])  # type: ignore[call-overload]
    top_val = _nice(peak * 1.08)
    step = plot_w / n
    bar_w = max(step * 0.72, 1.0)

    def y_of(v: float) -> float:
        return top + plot_h - plot_h * v / top_val

    bars: list[Bar] = []
    scores: list[tuple[float, float, str, str]] = []
    labels: list[tuple[float, str]] = []
    every = max(1, n // 24)
    for i, r in enumerate(rows):
        chars = int(r["chars"])  # type: ignore[call-overload]
        x = left + i * step + (step - bar_w) / 2
        css = {"failed": "len-bad", "passed": "len-ok"}.get(str(r["length"]), "len-skip")
        bars.append(
            Bar(
                x, y_of(chars), bar_w, top + plot_h - y_of(chars), css, f"{r['label']}: {chars:,} chars", str(r["page"])
            )
        )
        if i % every == 0:
            labels.append((x + bar_w / 2, str(r["number"])))
        score = r.get("score")
        if isinstance(score, int):
            sy = top + plot_h - plot_h * score / 100
            scores.append((x + bar_w / 2, sy, f"{r['label']}: editor {score} ({r['verdict']})", str(r["verdict"])))
    limits = [Rule(y_of(v), f"{name} {v:,}", "limit") for name, v in (("min", min_chars), ("max", max_chars)) if v]
    ticks = [Rule(y_of(v), f"{v:,.0f}", "tick") for v in _ticks(top_val)]
    score_ticks = [Rule(top + plot_h - plot_h * v / 100, str(v), "tick") for v in (0, 50, 100)]
    path = " ".join(f"{'M' if k == 0 else 'L'}{x:.1f},{y:.1f}" for k, (x, y, _, _) in enumerate(scores))
    return ChapterPlot(width, height, left, top, plot_h, bars, limits, ticks, score_ticks, scores, path, labels)


@dataclass
class HBar:
    label: str
    value: float | None
    w: float
    text: str
    css: str
    y: float


@dataclass
class CostPlot:
    title: str
    width: int
    height: int
    label_w: int
    bars: list[HBar]


def cost_plot(title: str, lines: list[CostLine], label: str = "key") -> CostPlot:
    """Horizontal bars of cost; an unknown cost is a hatched full-width bar saying so (never 0)."""
    width, label_w, row_h = 460, 150, 24
    known = [ln.cost for ln in lines if ln.cost is not None]
    peak = max([*known, 1e-09])
    bars: list[HBar] = []
    for k, ln in enumerate(lines):
        name = ln.key if label == "key" else f"{ln.kind or ''} {ln.key[-8:]}".strip()
        if ln.cost is None:
            bars.append(
                HBar(
                    name,
                    None,
                    width - label_w - 90,
                    f"unknown ({ln.unknown_cost_attempts} unpriced)",
                    "unknown",
                    k * row_h,
                )
            )
        else:
            bars.append(
                HBar(
                    name,
                    ln.cost,
                    max((width - label_w - 90) * ln.cost / peak, 1.0),
                    f"{ln.cost:.4f}",
                    "known",
                    k * row_h,
                )
            )
    return CostPlot(title, width, max(len(lines), 1) * row_h + 4, label_w, bars)


def _nice(v: float) -> float:
    """A round axis maximum ≥ v (1, 2, 2.5 or 5 × a power of ten)."""
    if v <= 0:
        return 1.0
    mag = 10 ** (len(str(int(v))) - 1)
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= v:
            return float(m * mag)
    return float(10 * mag)


def _ticks(top: float) -> list[float]:
    return [top * k / 4 for k in range(5)]


@dataclass
class TimelineRow:
    id: str
    description: str
    y: float
    x0: float
    x1: float
    planted: int
    resolved: int | None
    payoff: int | None
    payoff_x: float | None
    over_x: float | None
    overdue: bool
    advances: list[tuple[float, int]]


@dataclass
class Timeline:
    width: int
    height: int
    label_w: int
    ticks: list[tuple[float, str]]
    rows: list[TimelineRow]


def timeline(tracks: list[Any], first: int, last: int) -> Timeline:
    """One row per foreshadow over chapters first..last: a line from plant to resolve (or to the last
    chapter while open), advances as diamonds, the expected payoff as a tick, the overdue stretch in red."""
    width, label_w, row_h, top = 960, 120, 22, 26
    hi: int = max([last, first + 1] + [t.payoff or 0 for t in tracks] + [t.resolved or 0 for t in tracks])
    span = max(hi - first, 1)
    plot_w = width - label_w - 20

    def x_of(ch: int) -> float:
        return label_w + plot_w * (ch - first) / span

    rows: list[TimelineRow] = []
    for k, t in enumerate(tracks):
        end = t.resolved if t.resolved is not None else last
        rows.append(
            TimelineRow(
                t.id,
                t.description,
                top + k * row_h + 8,
                x_of(t.planted),
                x_of(max(end, t.planted)),
                t.planted,
                t.resolved,
                t.payoff,
                x_of(t.payoff) if t.payoff is not None else None,
                x_of(min(t.overdue_from, end)) if t.overdue and t.overdue_from is not None else None,
                t.overdue,
                [(x_of(c), c) for c in t.advanced],
            )
        )
    step = max(1, span // 12)
    ticks = [(x_of(c), str(c)) for c in range(first, hi + 1, step)]
    return Timeline(width, top + len(tracks) * row_h + 10, label_w, ticks, rows)
