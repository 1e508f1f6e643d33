"""Books for the memory tests, built from the public-domain corpus (三国演义).

`write_book` splits the novel on its `第N回` heading lines (text.split_chapters) into chapters/NNNN.md
(`# heading` + body), like `muse import` does. The full 120-chapter book with its index is built once per
test session (`sanguo_book`); tests that edit files use `small_book` (a fresh copy of a few chapters).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from novelmuse.book import Book, find_book
from novelmuse.memory import load_cards, update_index
from novelmuse.text import locate_quote, split_chapters

from ..conftest import HONGLOU, SANGUO

BOOK_TOML = '[book]\ntitle = "三国演义"\n\n[memory]\nchunk_max_chars = 400\n'


def write_book(
    root: Path,
    *,
    chapters: int | None = None,
    cards: dict[str, str] | None = None,
    toml: str = BOOK_TOML,
    source: Path = SANGUO,
) -> Book:
    """A book directory with the first `chapters` chapters of 三国演义 (or `source`; all when None) and the given
    cards (the heroes of 三国演义 by default)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "book.toml").write_text(toml, encoding="utf-8")
    split = split_chapters(source.read_text(encoding="utf-8"))
    (root / "chapters").mkdir(exist_ok=True)
    for part in split.chapters[: chapters or len(split.chapters)]:
        path = root / "chapters" / f"{part.number:04d}.md"
        path.write_text(f"# {part.heading_line.heading.text}\n{part.body}", encoding="utf-8")
    (root / "cards").mkdir(exist_ok=True)
    for name, text in (cards if cards is not None else hero_cards(root)).items():
        (root / "cards" / name).write_text(text, encoding="utf-8")
    return find_book(root)


def _span(root: Path, chapter: int, quote: str) -> str:
    path = root / "chapters" / f"{chapter:04d}.md"
    if not path.exists():
        return ""
    body = path.read_text(encoding="utf-8").partition("\n")[2]
    m = locate_quote(body, quote)
    assert m.ok, (chapter, quote, m)
    return f", source: {{chapter: {chapter}, start: {m.start}, end: {m.end}}}"


def hero_cards(root: Path) -> dict[str, str]:
    """Cards for 刘备, 关羽, 张飞, 曹操 with aliases and their deaths (ch. 85, 77, 81, 78), plus 诸葛亮."""
    return {
        "guan-yu.yaml": f"""\
id: guan-yu
type: character
name: 关羽
aliases: [云长, 关公, 关云长]
attributes:
  status:
    - {{value: alive, from: 1, to: 76}}
    - {{value: dead, from: 77{_span(root, 77, "于是关公父子皆遇害")}}}
relations:
  - {{type: 结义兄弟, target: liu-bei, from: 1}}
  - {{type: 结义兄弟, target: zhang-fei, from: 1}}
""",
        "cao-cao.yaml": f"""\
id: cao-cao
type: character
name: 曹操
aliases: [孟德, 曹丞相]
attributes:
  status:
    - {{value: alive, from: 1, to: 77}}
    - {{value: dead, from: 78{_span(root, 78, "却说曹操身亡")}}}
""",
        "zhang-fei.yaml": f"""\
id: zhang-fei
type: character
name: 张飞
aliases: [翼德]
attributes:
  status:
    - {{value: alive, from: 1, to: 80}}
    - {{value: dead, from: 81{_span(root, 81, "割了张飞首级")}}}
""",
        "liu-bei.yaml": f"""\
id: liu-bei
type: character
name: 刘备
aliases: [玄德, 刘玄德, 刘皇叔]
attributes:
  status:
    - {{value: alive, from: 1, to: 84}}
    - {{value: dead, from: 85{_span(root, 85, "言毕驾崩")}}}
  title:
    - {{value: 平原县令, from: 1, to: 20}}
""",
        "zhuge-liang.yaml": """\
id: zhuge-liang
type: character
name: 诸葛亮
aliases: [孔明, 卧龙, 诸葛孔明]
attributes:
  status:
    - {value: alive, from: 36}
""",
    }


@pytest.fixture(scope="session")
def sanguo_book(tmp_path_factory: pytest.TempPathFactory) -> Book:
    """All 120 chapters of 三国演义 with hero cards, indexed once per session (read-only for tests)."""
    book = write_book(tmp_path_factory.mktemp("sanguo") / "book")
    update_index(book, load_cards(book))
    return book


@pytest.fixture(scope="session")
def honglou_book(tmp_path_factory: pytest.TempPathFactory) -> Book:
    """All 120 chapters of 红楼梦 (no cards), indexed once per session (read-only for tests)."""
    book = write_book(tmp_path_factory.mktemp("honglou") / "book", cards={}, source=HONGLOU)
    update_index(book, load_cards(book))
    return book


@pytest.fixture
def small_book(tmp_path: Path) -> Book:
    """A fresh book of the first 6 chapters (tests may edit it)."""
    return write_book(tmp_path / "small", chapters=6)


def copy_book(src: Book, dst: Path) -> Book:
    """A copy of a book directory (files and state)."""
    shutil.copytree(src.root, dst)
    return find_book(dst)
