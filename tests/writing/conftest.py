"""Books for the writer-context tests: the real 三国演义 with the hero cards of tests/memory.

`sanguo_full` imports the whole novel once per session (like `muse import`), with the hero cards, a
confirmed version-2 outline of chapter 80 and the retrieval index built; tests copy it before editing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from novelmuse.book import Book, find_book, import_novel
from novelmuse.memory import load_cards, update_index
from novelmuse.writing import confirm_outline

from ..conftest import SANGUO
from ..memory.conftest import hero_cards, write_book

WRITING_TOML = '[book]\ntitle = "三国演义"\n\n[writing]\nfact_cards = "optional"\n'

#: A version-2 outline of chapter 80 (曹丕废帝篡炎刘　汉王正位续大统), after 关羽 (77) and 曹操 (78) died.
OUTLINE_80 = """\
version: 2
chapter: 80
title: 曹丕废帝篡炎刘　汉王正位续大统
scene_type: turning_point
goal: 曹丕逼献帝禅位，刘备在成都即帝位
hard_events:
  - {id: E1, text: 华歆等逼献帝禅位于曹丕, result: 曹丕受禅称帝，献帝降为山阳公}
  - {id: E2, text: 孔明等劝刘备即帝位, result: 刘备即皇帝位，改元章武}
beats:
  - {id: B1, text: 刘备念及关羽之仇}
foreshadows:
  - {op: plant, id: F-revenge, description: 刘备誓为关羽报仇, payoff_chapter: 81}
hook: 刘备欲起兵伐吴
new_settings:
  - {id: S1, kind: state, text: 刘备称帝, entities: [刘备]}
time_anchors:
  - {id: T1, text: 建安二十五年冬十月, marker: 建安二十五年}
entities: [刘备, 诸葛亮, 张飞, 关羽]
"""


def write_outline(book: Book, chapter: int, text: str) -> Path:
    """Write ``outlines/NNNN.yaml``."""
    path = book.outlines_dir / f"{chapter:04d}.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def author_copy(src: Book, dst: Path, *, before: int | None = None) -> Book:
    """A new book holding only the author's files of `src` (book.toml, rules, cards, outlines, and the
    chapters before `before`) — no database, no index: everything derived is rebuilt."""
    dst.mkdir(parents=True)
    shutil.copy(src.root / "book.toml", dst / "book.toml")
    if src.rules_path.exists():
        shutil.copy(src.rules_path, dst / "rules.txt")
    for folder in ("cards", "outlines"):
        if (src.root / folder).is_dir():
            shutil.copytree(src.root / folder, dst / folder)
    (dst / "chapters").mkdir()
    for n, p in src.chapter_paths().items():
        if before is None or n < before:
            shutil.copy(p, dst / "chapters" / p.name)
    return find_book(dst)


@pytest.fixture(scope="session")
def sanguo_full(tmp_path_factory: pytest.TempPathFactory) -> Book:
    """All 120 chapters, imported; hero cards; outline 80 confirmed; index built (read-only for tests)."""
    root = tmp_path_factory.mktemp("sanguo-full") / "book"
    root.mkdir()
    (root / "book.toml").write_text(WRITING_TOML, encoding="utf-8")
    import_novel(SANGUO, root)
    book = find_book(root)
    (root / "cards").mkdir(exist_ok=True)
    for name, text in hero_cards(root).items():
        (root / "cards" / name).write_text(text, encoding="utf-8")
    write_outline(book, 80, OUTLINE_80)
    confirm_outline(book, 80)
    update_index(book, load_cards(book))
    return book


@pytest.fixture
def small(tmp_path: Path) -> Book:
    """A fresh book of the first 6 chapters with the hero cards (tests may edit it)."""
    return write_book(tmp_path / "small", chapters=6, toml=WRITING_TOML + "\n[memory]\nchunk_max_chars = 400\n")
