"""`muse cards new NAME`: a new canon card from a commented template — never over an existing file."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from ..book import Book, atomic_write_text
from ..errors import InputError
from ._cards import CardFile, CardType, lint_cards

_TEMPLATE = """\
# {name}: a canon card. Values hold over chapter ranges (`from`, `to` inclusive; no `to` = still true), each with
# an optional source pointer into a chapter's body: {{chapter: N, start: 0, end: 10}}. `muse cards lint` checks it.
id: {id}
type: {kind}                     # character / place / item / faction / concept
name: {name}
aliases: []                           # other names the text uses, e.g. [玄德, 刘玄德]
description: ""
attributes: {{}}
#  status:
#    - {{value: alive, from: 1}}
#  office:
#    - {{value: 平原相, from: 11, source: {{chapter: 11, start: 120, end: 126}}}}
relations: []
#  - {{type: 结义兄弟, target: guan-yu, from: 1}}
"""


def new_card(book: Book, name: str, *, kind: CardType = "character", card_id: str | None = None) -> Path:
    """Write ``cards/<id>.yaml`` for a new card called `name` (its id: `card_id`, else the name itself); refused
    when the id or name is taken by a card, or the file exists (CARD_EXISTS, exit 2: nothing is overwritten)."""
    ident = card_id or name
    text = _TEMPLATE.format(id=ident, name=name, kind=kind)
    try:
        CardFile.model_validate({"id": ident, "type": kind, "name": name})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(
            "CARD_INVALID",
            f"{first['msg']} ({'.'.join(str(x) for x in first['loc'])})",
            "command line",
            "choose another name, or give an id made of letters, digits and - with --id",
        ) from None
    cards, _problems = lint_cards(book, check_sources=False)
    taken = cards.by_name.get(name) or cards.by_name.get(ident)
    path = book.cards_dir / f"{ident}.yaml"
    if taken is not None or path.exists():
        where = cards.cards[taken].file if taken else str(path.relative_to(book.root))
        owner = f"by card {taken!r}" if taken else "by a file"
        raise InputError(
            "CARD_EXISTS",
            f"{name if taken else ident!r} is already taken {owner}",
            where,
            "edit that card, or choose another name (or --id)",
        )
    atomic_write_text(path, text, expect_sha256="")
    return path
