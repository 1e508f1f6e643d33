"""The author's plan (规划): ``plan/`` holds the book's outline (大纲) and settings (设定), the input of the
fine-outline agent (``muse outline draft N``). Only the author writes here; novelmuse only reads it.

Layout::

    plan/
      outline.md        大纲 — the whole book's outline, in Markdown (or plan/大纲.md)
      settings/         设定 — world, factions, power system, places, …: any number of *.md, *.yaml or *.yml
                        files, read in name order (or plan/设定/)

**The outline.** A Markdown file whose headings (``#`` … ``######``) cut it into sections. A heading that
names chapters scopes its section to them: ``第11章``, ``第11-20章``, ``第十一至二十回``, ``第11章—第20章``,
``Chapters 11–20`` (Arabic, full-width or Chinese numerals; 章 or 回). A heading that names none inherits
the scope of the heading above it (``## 北海之围`` under ``# 第11-20回`` covers 11–20); a section under no
scoped heading — the premise, the main line, the ending — is general. For chapter N the agent reads every
general section, every section whose scope contains N, and the sections of the next scope that starts after
N (where the story goes next, for the chapter-end hook); sections of chapters before N are left out (the
story so far comes from the story memory). When some section is scoped but none covers N the plan says
nothing about the chapter: `PLAN_CHAPTER_NOT_COVERED`. An outline with no scoped heading at all is read
whole. HTML comments (``<!-- … -->``) are the author's own notes and are never sent.

**The settings.** Every file is read whole, as written (YAML is not interpreted: the model reads the text).

Files are read under the book's file policy (`read_user_file`: regular files only, no symbolic link that
leaves the book — BOOK_LINK_OUTSIDE —, at most `MAX_PLAN_FILE_BYTES`: PLAN_READ / PLAN_TOO_LARGE), as UTF-8;
each keeps its sha256 so a draft can say exactly what it was made from.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ..errors import InputError
from ..text import CHINESE_NUMERAL_CHARS, parse_number, sha256_hex
from ._project import Book
from ._userfile import _inside, link_outside_error, read_user_file

PLAN_DIR: Final = "plan"
OUTLINE_NAMES: Final = ("outline.md", "大纲.md")
SETTINGS_DIRS: Final = ("settings", "设定")
SETTING_SUFFIXES: Final = (".md", ".yaml", ".yml")
MAX_PLAN_FILE_BYTES: Final = 2_000_000

_NUM = rf"[0-9０-９]+|[{CHINESE_NUMERAL_CHARS}]+"
_RANGE_ZH = re.compile(rf"第\s*(?P<a>{_NUM})\s*(?:[章回]\s*)?(?:(?:[-–—~～至到]|——)\s*第?\s*(?P<b>{_NUM})\s*)?[章回]")
_RANGE_EN = re.compile(r"\b(?:chapters?|ch\.?)\s*(?P<a>\d+)(?:\s*[-–—~]\s*(?P<b>\d+))?", re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_BLANKS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")  # a removed comment leaves blank lines: one is enough

Scope = tuple[int, int]
SectionRole = Literal["general", "current", "next"]


@dataclass(frozen=True)
class PlanFile:
    """One file of the plan: its path relative to the book, sha256 of its bytes, and its text (comments out)."""

    path: str
    sha256: str
    text: str


@dataclass(frozen=True)
class PlanSection:
    """One section of the outline: from its heading line to the line before the next heading."""

    file: str
    line: int  # 1-based line of the heading (1 for text before the first heading)
    end_line: int
    heading: str
    scope: Scope | None  # the chapters it covers (own or inherited); None = general
    text: str  # the heading line and the body, as written
    level: int = 0  # the heading's level (1 for `#`); 0 for text before the first heading
    own: Scope | None = None  # the chapters its own heading names (None: inherited or general)

    @property
    def where(self) -> str:
        """``plan/outline.md:12-30``."""
        return f"{self.file}:{self.line}-{self.end_line}" if self.end_line > self.line else f"{self.file}:{self.line}"


@dataclass(frozen=True)
class PlanPart:
    """A section chosen for one chapter, and why: general, covering the chapter, or the next part of the story."""

    role: SectionRole
    section: PlanSection


@dataclass(frozen=True)
class Plan:
    """The author's plan as read: the outline, its sections and the settings files."""

    outline: PlanFile | None
    sections: tuple[PlanSection, ...]
    settings: tuple[PlanFile, ...]

    @property
    def files(self) -> tuple[PlanFile, ...]:
        """Every file read (outline first)."""
        return ((self.outline,) if self.outline else ()) + self.settings

    def for_chapter(self, chapter: int) -> list[PlanPart]:
        """The outline's sections for `chapter`, in file order (see the module doc); PLAN_MISSING without an
        outline, PLAN_CHAPTER_NOT_COVERED when scoped sections exist but none covers the chapter."""
        if self.outline is None:
            raise InputError(
                "PLAN_MISSING",
                "the book has no outline (大纲) to draft from",
                f"{PLAN_DIR}/{OUTLINE_NAMES[0]}",
                f"write the book's outline in {PLAN_DIR}/{OUTLINE_NAMES[0]} (see docs/guide/outlines.md#the-plan)",
            )
        scoped = [s for s in self.sections if s.scope is not None]
        if scoped and not any(_covers(s.scope, chapter) for s in scoped):
            raise InputError(
                "PLAN_CHAPTER_NOT_COVERED",
                f"no section of the outline covers chapter {chapter} (scoped sections cover {_scopes(scoped)})",
                self.outline.path,
                f"add a section headed like `## 第{chapter}章 …` or a range that includes it",
            )
        later = [s.scope[0] for s in scoped if s.scope is not None and s.scope[0] > chapter]
        nxt = min(later, default=None)
        parts: list[PlanPart] = []
        for s in self.sections:
            if s.scope is None:
                parts.append(PlanPart("general", s))
            elif _covers(s.scope, chapter):
                parts.append(PlanPart("current", s))
            elif nxt is not None and s.scope[0] == nxt:
                parts.append(PlanPart("next", s))
        return parts


def _covers(scope: Scope | None, chapter: int) -> bool:
    return scope is not None and scope[0] <= chapter <= scope[1]


def _scopes(sections: list[PlanSection]) -> str:
    seen = sorted({s.scope for s in sections if s.scope is not None})
    shown = ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in seen[:8])
    return shown + (", …" if len(seen) > 8 else "")


def heading_scope(heading: str) -> Scope | None:
    """The chapters a heading names (``第11-20章`` → (11, 20), ``第十一回`` → (11, 11)), or None."""
    m = _RANGE_ZH.search(heading) or _RANGE_EN.search(heading)
    if m is None:
        return None
    a = parse_number(m.group("a"))
    b = parse_number(m.group("b")) if m.group("b") else a
    if a is None or b is None:
        return None
    return (a, b)


def _sections(file: PlanFile) -> list[PlanSection]:
    """Cut the outline at its headings (headings inside fenced code blocks do not count)."""
    lines = file.text.split("\n")
    starts: list[tuple[int, int, str]] = []  # (0-based line, level, heading text)
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            starts.append((i, len(m.group(1)), m.group(2)))
    if not starts or starts[0][0] > 0:
        starts.insert(0, (0, 0, ""))  # text before the first heading: a general preamble
    out: list[PlanSection] = []
    stack: list[tuple[int, Scope | None]] = []  # (level, scope) of the enclosing headings
    for k, (i, level, heading) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
        while stack and stack[-1][0] >= level:
            stack.pop()
        own = heading_scope(heading) if level else None
        if own is not None and own[1] < own[0]:
            raise InputError(
                "PLAN_RANGE_INVALID",
                f"the heading {heading!r} names chapters {own[0]}–{own[1]}: the range runs backwards",
                f"{file.path}:{i + 1}",
                "write the smaller chapter number first",
            )
        scope = own if own is not None else (stack[-1][1] if stack else None)
        if level:
            stack.append((level, scope))
        text = _BLANKS.sub("\n\n", "\n".join(lines[i:end])).strip()
        if text:
            out.append(PlanSection(file.path, i + 1, max(end, i + 1), heading, scope, text, level, own))
    return out


def _read(book: Book, path: Path) -> PlanFile:
    """One plan file under the book's file policy (`read_user_file`: a regular file, no link out of the book,
    capped), as UTF-8 text with its line endings normalised; a Markdown file loses its HTML comments."""
    rel = path.relative_to(book.root).as_posix()
    data = read_user_file(path, what="plan file", kind="PLAN", max_bytes=MAX_PLAN_FILE_BYTES, book_root=book.root)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError("PLAN_ENCODING", f"not UTF-8 (byte {exc.start})", rel, "save the file as UTF-8") from exc
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if path.suffix == ".md":
        text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # keep the line numbers
    return PlanFile(rel, sha256_hex(data), text)


def _one_of(folder: Path, names: tuple[str, ...]) -> Path | None:
    """The one of `names` that exists in `folder` (PLAN_AMBIGUOUS when two do)."""
    found = [folder / n for n in names if (folder / n).exists() or (folder / n).is_symlink()]
    if len(found) > 1:
        raise InputError(
            "PLAN_AMBIGUOUS", f"both {found[0].name} and {found[1].name} exist", f"{PLAN_DIR}/", "keep one of them"
        )
    return found[0] if found else None


def _directory(book: Book, path: Path) -> None:
    if not _inside(real := os.path.realpath(path), book.root):
        raise link_outside_error(path, real, book.root, action="read")
    if not path.is_dir():
        raise InputError("PLAN_READ", "not a directory", path.relative_to(book.root).as_posix(), "make it a directory")


def plan_of(outline: PlanFile | None, settings: list[PlanFile] | tuple[PlanFile, ...]) -> Plan:
    """The plan these files make (as `load_plan` reads them from ``plan/``): a draft's files checked before they are
    written."""
    return Plan(outline, tuple(_sections(outline)) if outline else (), tuple(settings))


def load_plan(book: Book) -> Plan:
    """Read the book's ``plan/`` (a book without one has an empty plan)."""
    folder = book.root / PLAN_DIR
    if not os.path.lexists(folder):
        return Plan(None, (), ())
    _directory(book, folder)
    outline_path = _one_of(folder, OUTLINE_NAMES)
    outline = _read(book, outline_path) if outline_path is not None else None
    settings: list[PlanFile] = []
    settings_dir = _one_of(folder, SETTINGS_DIRS)
    if settings_dir is not None:
        _directory(book, settings_dir)
        for p in sorted(settings_dir.iterdir(), key=lambda p: p.name):
            if p.suffix in SETTING_SUFFIXES and not p.name.startswith("."):
                settings.append(_read(book, p))
    return plan_of(outline, settings)
