"""The writer context's reviewed vocabulary (``writing/data/vocabulary.toml``), with its version and sha256."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..text import sha256_hex


@dataclass(frozen=True)
class Vocabulary:
    """Speech verbs, ability attributes, how attributes are worded, and the words the writer must never see."""

    version: str
    sha256: str
    speech: re.Pattern[str]  # matches right after a character's name when the character speaks
    addressee_markers: frozenset[str]  # a name right after one of these is spoken to, not speaking
    ability_attributes: frozenset[str]
    dead_word: str
    attribute_words: dict[str, str]
    value_words: dict[str, str]
    strategy_words: tuple[str, ...]


@cache
def vocabulary() -> Vocabulary:
    """Load the vocabulary file once."""
    text = (resources.files("novelmuse.writing") / "data" / "vocabulary.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    verbs = "".join(re.escape(v) for v in data["speech_verbs"])
    window = int(data["speech_window"])
    speech = re.compile(rf"[^。！？“”「」\n]{{0,{window}}}?[{verbs}][：:]?\s*[“「]")
    return Vocabulary(
        version=str(data["version"]),
        sha256=sha256_hex(text),
        speech=speech,
        addressee_markers=frozenset(data["addressee_markers"]),
        ability_attributes=frozenset(a.lower() for a in data["ability_attributes"]),
        dead_word=str(data["dead_word"]),
        attribute_words=dict(data["attribute_words"]),
        value_words=dict(data["value_words"]),
        strategy_words=tuple(data["strategy_words"]),
    )
