"""Caps on every number, length and file size that comes from outside (issue 18 item 2) — defined here only.

A value beyond a cap is a clear error (exit 2) that names the cap, never a hang, a crash or an overflow
later (an SQLite integer, a regular expression, an automaton). docs/reference/files.md#limits lists them.
Every layer may import this module (it imports nothing of novelmuse).
"""

from __future__ import annotations

from typing import Final

#: Chapter numbers: headings, chapter files, --chapter, --range, --before, --as-of, cards and outlines.
MAX_CHAPTER_NUMBER: Final = 99_999
#: One 禁止/疲劳词 phrase in rules.txt (a longer "phrase" is not a phrase; matching stays linear anyway).
MAX_PHRASE_CHARS: Final = 10_000
#: A name or alias given on the command line (cards show, mentions) or in a card.
MAX_NAME_CHARS: Final = 200
#: A search query.
MAX_QUERY_CHARS: Final = 1_000
#: One token count in a provider's usage of one attempt (input, output, cache read or write): no real request
#: comes near it (the largest context windows are a few million tokens), and every sum of them stays far below
#: an SQLite INTEGER. Beyond it, or negative, the usage is MODEL_USAGE_INVALID.
MAX_USAGE_TOKENS: Final = 1_000_000_000
#: One attempt's cost as stored (a receipt from before usage was bounded may hold more, or infinity): beyond it
#: the attempt's cost is unknown, never summed.
MAX_ATTEMPT_COST: Final = 1e9

_MIB: Final = 1024 * 1024
#: The novel file `muse import` reads (a 10-million-character novel is about 30 MB of UTF-8).
MAX_IMPORT_BYTES: Final = 256 * _MIB
#: One chapter file, candidate, script, card or outline file.
MAX_FILE_BYTES: Final = 16 * _MIB
#: rules.txt (100,000 rule lines are about 2 MB).
MAX_RULES_BYTES: Final = 4 * _MIB
#: book.toml and the user-level config.
MAX_CONFIG_BYTES: Final = 1 * _MIB
