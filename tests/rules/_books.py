"""Test books built from the corpus: chapters/NNNN.md files split on the `第N回` heading lines."""

from __future__ import annotations

import re
from pathlib import Path

_HEADING = re.compile(r"^第[一二三四五六七八九十百千零〇两0-9]+回　")  # corpus headings: U+3000 after 回


def split_corpus(text: str) -> list[tuple[str, str]]:
    """(heading, body) per chapter; the body is everything after the heading line up to the next heading."""
    chapters: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        if _HEADING.match(line):
            chapters.append((line.strip(), []))
        elif chapters:
            chapters[-1][1].append(line)
    return [(h, "\n".join(body)) for h, body in chapters]


def make_book(
    root: Path,
    chapters: list[tuple[str, str]],
    *,
    rules: str | bytes | None = "",
    book_toml: str = '[book]\ntitle = "test"\n',
) -> Path:
    """Write book.toml, rules.txt (None = no file) and chapters/NNNN.md (numbered from 1)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "book.toml").write_text(book_toml, encoding="utf-8")
    if rules is not None:
        data = rules.encode("utf-8") if isinstance(rules, str) else rules
        (root / "rules.txt").write_bytes(data)
    (root / "chapters").mkdir(exist_ok=True)
    for n, (heading, body) in enumerate(chapters, start=1):
        (root / "chapters" / f"{n:04d}.md").write_text(f"# {heading}\n{body}", encoding="utf-8")
    return root
