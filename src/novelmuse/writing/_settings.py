"""Formal settings (正式设定) as writer facts: the author's ``plan/settings`` lines that concern the chapter.

A settings line enters the writer's facts — the protected block every arm shares — when it names a character
of the chapter's plan (its name, or an alias on its card); in file order, at most `SETTINGS_MAX_CHARS` characters,
the lines beyond counted in the manifest (never silently dropped). The writer reads the line with the basis
``正式设定``; the manifest keeps its pointer (file and line). A heading is context, not a fact: it is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..book import Book, load_plan
from ..text import count_chars
from ._manifest import Pointer

SETTINGS_MAX_CHARS: Final = 1200
SETTINGS_BASIS: Final = "正式设定"
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.、)])\s+")


@dataclass(frozen=True)
class SettingFacts:
    """The settings lines chosen for a chapter (text, pointer) and how many matching lines the cap left out."""

    lines: list[tuple[str, Pointer]]
    omitted: int


def setting_facts(book: Book, names: Sequence[str]) -> SettingFacts:
    """The lines of the book's settings files that name one of `names` (see the module doc)."""
    wanted = [n for n in dict.fromkeys(names) if n]
    picked: list[tuple[str, Pointer]] = []
    used = omitted = 0
    for file in load_plan(book).settings if wanted else ():
        raw = [r.strip() for r in (book.root / file.path).read_text(encoding="utf-8-sig").splitlines()]
        for line in file.text.splitlines():
            text = _ITEM.sub("", line).strip()
            if not text or text.startswith("#") or not any(n in text for n in wanted):
                continue
            if used + count_chars(text) > SETTINGS_MAX_CHARS:
                omitted += 1
                continue
            at = next((i + 1 for i, r in enumerate(raw) if r == line.strip()), None)
            picked.append((text, Pointer(kind="author", file=file.path, line=at)))
            used += count_chars(text)
    return SettingFacts(picked, omitted)
