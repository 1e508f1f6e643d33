"""`muse plan lint`: the book's plan (大纲 and 设定, `plan/`) checked against itself and the book; no model.

- **Volumes**: the shallowest headings that name chapters (`# 第11-20回：争夺徐州`) are the plan's volumes; together
  they cover the book from chapter 1 without a gap (`PLAN_VOLUME_GAP`) or an overlap (`PLAN_VOLUME_OVERLAP`), and
  every chapter the book has is in one (`PLAN_CHAPTERS_UNPLANNED`). A deeper heading naming chapters lies inside
  its volume (`PLAN_SECTION_OUTSIDE`).
- **Foreshadows**: a line naming `伏笔 F-id` is a planned foreshadow: planted at `埋第N回` (or the first chapter its
  section covers), resolved at `收第M回` — after the plant and within the plan — or marked open (`未收`, `开放`):
  otherwise `PLAN_FORESHADOW_UNRESOLVED`, `PLAN_FORESHADOW_ORDER`, `PLAN_FORESHADOW_OUTSIDE`; an id planned twice is
  `PLAN_FORESHADOW_DUPLICATE`.
- **Characters**: in a settings file or section about characters (its name or heading says 人物, 角色, 主角, 配角 or
  characters), every entry (`- 名字：…` or a heading `## 名字`) names a card by its name or an alias
  (`PLAN_CHARACTER_NO_CARD`).

Every finding names the file and line; errors make `muse plan lint` exit 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel

from ..book import Book, Plan, PlanSection, load_plan
from ..errors import InputError
from ..memory import load_cards
from ..text import CHINESE_NUMERAL_CHARS, parse_number
from ._outlines import LintProblem

#: A planned foreshadow's line: its id, and where it is planted and resolved (or that it stays open).
_FORESHADOW = re.compile(r"伏笔\s*[:：]?\s*(?P<id>F-[A-Za-z0-9_-]+)")
_NUM = rf"[0-9０-９]+|[{CHINESE_NUMERAL_CHARS}]+"
_PLANT = re.compile(rf"埋(?:设|下|于|在)?\s*第\s*(?P<n>{_NUM})\s*[章回]")
_RESOLVE = re.compile(rf"(?:回收|收(?:于|在|回)?)\s*第\s*(?P<n>{_NUM})\s*[章回]")
_OPEN = re.compile(r"未收|开放|不收|open\b", re.IGNORECASE)
_CHARACTER_WORDS = ("人物", "角色", "主角", "配角", "character")
_ENTRY = re.compile(r"^\s*[-*+]\s*(?:\*\*)?(?P<name>[^：:\s*，,（(]{1,12})(?:\*\*)?\s*[：:]")
_HEADING = re.compile(r"^#{1,6}\s+(?P<name>[^：:\s#（(]{1,12})\s*$")
_LEVEL = re.compile(r"^(#{1,6})\s+(.*)$")


class PlanLintDoc(BaseModel):
    """`muse plan lint --json`."""

    ok: bool
    files: list[str]
    volumes: list[str]  # "第11–20 (plan/outline.md:12)"
    foreshadows: int
    characters: int
    errors: int
    warnings: int
    problems: list[LintProblem]


@dataclass(frozen=True)
class _Volume:
    first: int
    last: int
    section: PlanSection


def _error(code: str, message: str, where: str) -> LintProblem:
    return LintProblem(severity="error", code=code, message=message, where=where)


def _at(s: PlanSection) -> str:
    """A section's heading line: where a finding about its chapters points."""
    return f"{s.file}:{s.line}"


def _volumes(sections: tuple[PlanSection, ...]) -> tuple[list[_Volume], list[LintProblem]]:
    scoped = [s for s in sections if s.own is not None]
    if not scoped:
        return [], []
    top = min(s.level for s in scoped)
    volumes = sorted(
        (_Volume(s.own[0], s.own[1], s) for s in scoped if s.level == top and s.own is not None),
        key=lambda v: (v.first, v.last),
    )
    problems: list[LintProblem] = []
    expected = 1
    previous: _Volume | None = None
    for v in volumes:
        if v.first > expected:
            missing = f"{expected}" if v.first - 1 == expected else f"{expected}–{v.first - 1}"
            problems.append(_error("PLAN_VOLUME_GAP", f"no volume covers chapter(s) {missing}", _at(v.section)))
        elif previous is not None and v.first <= previous.last:
            problems.append(
                _error(
                    "PLAN_VOLUME_OVERLAP",
                    f"{v.section.heading!r} ({v.first}–{v.last}) overlaps {previous.section.heading!r} "
                    f"({previous.first}–{previous.last}, {_at(previous.section)})",
                    _at(v.section),
                )
            )
        expected = max(expected, v.last + 1)
        previous = v if previous is None or v.last > previous.last else previous
    # a deeper heading naming chapters lies inside the volume it is written under
    volume: PlanSection | None = None
    for s in sections:
        if s.level and s.level <= top:
            volume = s if s.own is not None else None
            continue
        if s.own is None or not s.level:
            continue
        if volume is None or volume.own is None or not volume.own[0] <= s.own[0] <= s.own[1] <= volume.own[1]:
            inside = f"its volume {volume.own[0]}–{volume.own[1]}" if volume and volume.own else "any volume"
            problems.append(
                _error(
                    "PLAN_SECTION_OUTSIDE",
                    f"{s.heading!r} names chapters {s.own[0]}–{s.own[1]}, outside {inside}",
                    _at(s),
                )
            )
    return volumes, problems


def _chapter(text: str) -> int | None:
    return parse_number(text)


def _foreshadows(sections: tuple[PlanSection, ...], last: int | None) -> tuple[int, list[LintProblem]]:
    problems: list[LintProblem] = []
    planted: dict[str, str] = {}
    for s in sections:
        for k, line in enumerate(s.text.split("\n")):
            m = _FORESHADOW.search(line)
            if m is None:
                continue
            fid, where = m.group("id"), f"{s.file}:{s.line + k}"
            if fid in planted:
                problems.append(
                    _error("PLAN_FORESHADOW_DUPLICATE", f"{fid} is planned twice (also {planted[fid]})", where)
                )
                continue
            planted[fid] = where
            plant_m, resolve_m = _PLANT.search(line), _RESOLVE.search(line)
            plant = _chapter(plant_m.group("n")) if plant_m else (s.scope[0] if s.scope else None)
            resolve = _chapter(resolve_m.group("n")) if resolve_m else None
            if resolve is None:
                if not _OPEN.search(line):
                    problems.append(
                        _error(
                            "PLAN_FORESHADOW_UNRESOLVED",
                            f"{fid} is planted{f' in chapter {plant}' if plant else ''} and never resolved: write "
                            "where it is (收第M回), or mark it open (未收)",
                            where,
                        )
                    )
                continue
            if plant is not None and resolve <= plant:
                problems.append(
                    _error(
                        "PLAN_FORESHADOW_ORDER",
                        f"{fid} is resolved in chapter {resolve}, not after its plant in chapter {plant}",
                        where,
                    )
                )
            elif last is not None and resolve > last:
                problems.append(
                    _error(
                        "PLAN_FORESHADOW_OUTSIDE",
                        f"{fid} is resolved in chapter {resolve}, beyond the plan's "
                        f"last chapter {last}: plan that volume, or mark it open (未收)",
                        where,
                    )
                )
    return len(planted), problems


def _about_characters(name: str) -> bool:
    return any(w in name.lower() for w in _CHARACTER_WORDS)


def _characters(book: Book, files: list[tuple[str, str]], extra: set[str]) -> tuple[int, list[LintProblem]]:
    """Every character entry of the settings about characters (see the module docstring), and those no card names.
    A heading that says 人物 (…) opens such a section; the next heading of the same or a higher level that does not
    closes it; in a file whose name says so, the whole file is one. Inside, an entry is `- 名字：…` or a deeper
    heading `## 名字`."""
    cards = load_cards(book)
    known = {n for c in cards.cards.values() for n in (c.name, *c.aliases)} | extra
    problems: list[LintProblem] = []
    seen = 0
    for path, text in files:
        whole = _about_characters(path)
        opened: int | None = 0 if whole else None  # the heading level that opened the section (0: the file)
        for k, line in enumerate(text.split("\n"), start=1):
            heading = _LEVEL.match(line)
            m = None
            if heading is not None:
                level, title = len(heading.group(1)), heading.group(2).strip()
                if _about_characters(title):
                    opened = level if opened is None or level <= opened else opened
                    continue
                if opened is not None and 0 < level <= opened:
                    opened = 0 if whole else None
                if opened is not None and level > opened:
                    m = _HEADING.match(line)
            elif opened is not None:
                m = _ENTRY.match(line)
            if m is None:
                continue
            name = m.group("name").strip()
            seen += 1
            if name not in known:
                problems.append(
                    _error(
                        "PLAN_CHARACTER_NO_CARD",
                        f"the settings name the character {name!r}, which no card names (by name or alias): "
                        f"`muse cards new {name} --kind character`",
                        f"{path}:{k}",
                    )
                )
    return seen, problems


def lint_plan(book: Book) -> PlanLintDoc:
    """Check the plan (see the module docstring); PLAN_MISSING when the book has no outline."""
    return lint_plan_of(book, load_plan(book))


def lint_plan_of(book: Book, plan: Plan, *, extra_names: set[str] | None = None) -> PlanLintDoc:
    """The plan lint of `plan` against `book` (its chapters and cards; `extra_names`: card drafts' names counted as
    cards) — `lint_plan` of the plan as written, or of a plan draft's files before they are."""
    if plan.outline is None:
        raise InputError(
            "PLAN_MISSING",
            "the book has no outline (大纲) to check",
            "plan/outline.md",
            "write the book's outline in plan/outline.md (see docs/guide/outlines.md#the-plan)",
        )
    volumes, problems = _volumes(plan.sections)
    last = max((v.last for v in volumes), default=None)
    written = sorted(book.chapter_paths())
    unplanned = [n for n in written if n > 0 and (last is None or n > last)] if volumes else []
    if unplanned:
        problems.append(
            _error(
                "PLAN_CHAPTERS_UNPLANNED",
                f"chapter(s) {unplanned[0]}–{unplanned[-1]} are written but no volume covers them",
                plan.outline.path,
            )
        )
    count, found = _foreshadows(plan.sections, last)
    problems += found
    seen, found = _characters(book, [(f.path, f.text) for f in plan.settings], extra_names or set())
    problems += found
    errors = sum(1 for p in problems if p.severity == "error")
    return PlanLintDoc(
        ok=errors == 0,
        files=[f.path for f in plan.files],
        volumes=[f"{v.first}–{v.last} ({_at(v.section)})" for v in volumes],
        foreshadows=count,
        characters=seen,
        errors=errors,
        warnings=len(problems) - errors,
        problems=problems,
    )
