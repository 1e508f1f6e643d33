"""The fine outline (细纲) of one chapter: ``outlines/NNNN.yaml``, confirmed by the author.

Seed 003 step 1: a confirmed fine outline carries hard events (硬事件, must happen), adjustable beats
(可调节拍, the writer may split, merge and reorder them), foreshadow operations (伏笔: plant / advance /
resolve), the chapter-end hook (钩子) and new-setting declarations (新设定声明: canonical facts the chapter
introduces, e.g. a character's death or return). Writing, judging and the foreshadow ledger all read it,
so the ledger works without any model. Errors name the file and the line.

Example::

    chapter: 1
    goal: 刘关张相识并结义
    hard_events:
      - {id: E1, text: 刘备见榜文慨叹，张飞厉声相责}
    beats: [三人酒店相会, 桃园祭告天地]
    foreshadows:
      - {op: plant, id: F-sword, description: 张飞许诺打造兵器, payoff_chapter: 2}
    hook: 黄巾来犯，三人投军
    new_settings:
      - {text: 刘关张结为兄弟, entities: [刘备, 关羽, 张飞]}
    entities: [刘备, 关羽, 张飞]
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from ..errors import InputError
from ._project import Book, numbered_files
from ._yamlfile import line_of, load_yaml_lines, validate_located

_OUTLINE_NAME = re.compile(r"^(\d{1,6})\.ya?ml$")
_ID = r"^[\w\-.:]{1,64}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HardEvent(_Strict):
    """A 硬事件: must happen in the chapter, with this result (the writer may not change it)."""

    id: str = Field(pattern=_ID)
    text: str = Field(min_length=1)


class ForeshadowDecl(_Strict):
    """An author-declared foreshadow operation: plant 埋设 (建账), advance 强化, resolve 回收 (销账)."""

    op: Literal["plant", "advance", "resolve"]
    id: str = Field(pattern=_ID)
    description: str = ""
    payoff_chapter: int | None = Field(default=None, ge=1)  # plant only: the chapter it is expected to pay off by
    note: str = ""

    @model_validator(mode="after")
    def _shape(self) -> ForeshadowDecl:
        if self.op == "plant" and not self.description.strip():
            raise ValueError(f"plant {self.id!r} needs a description (what was planted)")
        if self.op != "plant" and self.payoff_chapter is not None:
            raise ValueError(f"payoff_chapter belongs on the plant of {self.id!r}, not on {self.op}")
        return self


class NewSetting(_Strict):
    """A 新设定声明: a canonical fact this chapter introduces, with the cards it concerns (names or ids)."""

    text: str = Field(min_length=1)
    entities: list[str] = []


class FineOutline(_Strict):
    """One chapter's confirmed fine outline."""

    chapter: int = Field(ge=0)  # 0 is the prologue (序, chapters/0000.md)
    title: str = ""
    goal: str = ""
    hard_events: list[HardEvent] = []
    beats: list[str] = []
    foreshadows: list[ForeshadowDecl] = []
    hook: str = ""
    new_settings: list[NewSetting] = []
    entities: list[str] = []

    _path: str = PrivateAttr(default="")
    _foreshadow_lines: list[int] = PrivateAttr(default_factory=list)

    @property
    def path(self) -> str:
        """The file this outline was read from ("" when built in code)."""
        return self._path

    def foreshadow_line(self, index: int) -> int:
        """The line where `foreshadows[index]` is written (0 when unknown)."""
        return self._foreshadow_lines[index] if index < len(self._foreshadow_lines) else 0

    @model_validator(mode="after")
    def _unique(self) -> FineOutline:
        seen: set[str] = set()
        for ev in self.hard_events:
            if ev.id in seen:
                raise ValueError(f"hard event id {ev.id!r} is used twice")
            seen.add(ev.id)
        ops: set[tuple[str, str]] = set()
        for op in self.foreshadows:
            if (op.op, op.id) in ops:
                raise ValueError(f"foreshadow {op.id!r} has two {op.op} operations in one chapter")
            ops.add((op.op, op.id))
        return self

    @property
    def plants(self) -> list[ForeshadowDecl]:
        """The foreshadows this chapter plants."""
        return [f for f in self.foreshadows if f.op == "plant"]

    def declares(self, names: set[str]) -> bool:
        """True if a new-setting declaration names any of `names` (a card's id, name or aliases)."""
        return any(e in names for s in self.new_settings for e in s.entities)


def parse_outline(path: Path, text: str | None = None, *, expect_chapter: int | None = None) -> FineOutline:
    """Parse and validate one outline file; errors (OUTLINE_SYNTAX / OUTLINE_INVALID) name file:line."""
    data = load_yaml_lines(path, code_prefix="OUTLINE", text=text)
    if data is None:
        raise InputError("OUTLINE_INVALID", "the file is empty", f"{path}:1", "write the chapter's fine outline")
    outline = validate_located(
        FineOutline, data, path, code="OUTLINE_INVALID", fix="fix the fine outline (see README: fine outlines)"
    )
    if expect_chapter is not None and outline.chapter != expect_chapter:
        raise InputError(
            "OUTLINE_CHAPTER_MISMATCH",
            f"the file is named for chapter {expect_chapter} but says chapter: {outline.chapter}",
            f"{path}:{line_of(data, ('chapter',))}",
            "rename the file or fix the chapter number",
        )
    for i, op in enumerate(outline.foreshadows):
        if op.payoff_chapter is not None and op.payoff_chapter < outline.chapter:
            raise InputError(
                "OUTLINE_INVALID",
                f"plant {op.id!r} is due by chapter {op.payoff_chapter}, before chapter {outline.chapter} plants it",
                f"{path}:{line_of(data, ('foreshadows', i))}",
                "give a payoff_chapter at or after this chapter (or none)",
            )
    outline._path = str(path)
    outline._foreshadow_lines = [line_of(data, ("foreshadows", i)) for i in range(len(outline.foreshadows))]
    return outline


def outline_paths(book: Book) -> dict[int, Path]:
    """Chapter number → ``outlines/NNNN.yaml`` for every outline file (other files are ignored)."""
    return numbered_files(book.outlines_dir, _OUTLINE_NAME, code="OUTLINE_DUPLICATE", what="outline files")


def load_outline(book: Book, chapter: int) -> FineOutline | None:
    """The fine outline of `chapter`, or None when the author has not written one."""
    path = outline_paths(book).get(chapter)
    return None if path is None else parse_outline(path, expect_chapter=chapter)


def load_outlines(book: Book) -> dict[int, FineOutline]:
    """Every fine outline of the book, by chapter number."""
    return {n: parse_outline(p, expect_chapter=n) for n, p in outline_paths(book).items()}
