"""Cut a short text (a search query) exactly as rjieba's default segmenter does, without building its dictionary.

`import rjieba` builds jieba-rs's whole default dictionary (349,045 words, ~0.1 s CPU) for a query of a few
characters. Yet jieba-rs consults its dictionary only for substrings of the text it cuts: the DAG of a block
(every dictionary word starting at each position), the route's log-probabilities ``ln(freq) − ln(total)``, the
HMM buffer's "is this run a word" check and search mode's 2-/3-gram checks. So a segmenter made by
`Jieba.empty()` plus the dictionary words that are substrings of the text (same frequencies), plus one filler
entry that no lookup can reach — its key holds a space, which never occurs in the blocks jieba looks words up
in — carrying the rest of the total frequency, gives the very same tokens (proved by the hypothesis test
against the default segmenter, `tests/memory/test_querycut.py`).

The word → frequency table is ``data/jieba_dict.tsv``: one ``word<TAB>freq`` line per word, sorted by UTF-8
bytes, read through mmap with a binary search per lookup (no 349k-line load). It is jieba's ``dict.txt`` with
duplicates resolved as jieba-rs's `load_dict` does (the last line wins), which is the dictionary jieba-rs embeds
(its zstd-compressed copy, extracted from rjieba 0.2.2's extension, makes the very same table; the tags are
dropped: they never change a cut). ``data/jieba_dict.toml`` records its version, sha256, total frequency and
the rjieba version it was checked against; with any other rjieba, a text longer than `FAST_MAX_CHARS` (lookups
grow with its length) or one that is not valid Unicode (lone surrogates), `fast_segmenter` returns None and the
caller uses the full segmenter.

Dictionary data: jieba (https://github.com/fxsjy/jieba), MIT licence, Copyright (c) 2013 Sun Junyi.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import mmap
import sys
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.metadata import version
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import rjieba

FAST_MAX_CHARS = 200  # longer texts (never a typical query) are cut by the full segmenter
FILLER = " total"  # holds a space: jieba never looks it up; its frequency makes the total the default's


@dataclass(frozen=True)
class _Dictionary:
    data: mmap.mmap
    total: int
    max_chars: int

    def _first_at_least(self, key: bytes, lo: int) -> int:
        """Offset of the first line at or after line start `lo` whose word is >= `key` (the end when none)."""
        mm = self.data
        hi = len(mm)
        while lo < hi:
            mid = (lo + hi) // 2
            nl = mm.rfind(b"\n", lo, mid)
            start = lo if nl < 0 else nl + 1
            if mm[start : mm.find(b"\t", start)] < key:
                lo = mm.find(b"\n", start) + 1
            else:
                hi = start
        return lo

    def words_in(self, text: str) -> dict[str, int]:
        """Every dictionary word that is a substring of `text`, with its frequency."""
        found: dict[str, int] = {}
        mm = self.data
        for i in range(len(text)):
            lo = 0
            for n in range(1, min(self.max_chars, len(text) - i) + 1):
                key = text[i : i + n].encode()
                lo = self._first_at_least(key, lo)
                end = mm.find(b"\n", lo)
                if end < 0:
                    break
                word, _, freq = mm[lo:end].partition(b"\t")
                if word == key:
                    found[text[i : i + n]] = int(freq)
                elif not word.startswith(key):  # no word begins with this substring: none longer either
                    break
        return found


def _data_dir() -> Path:
    return Path(str(resources.files("novelmuse.memory") / "data"))


def dictionary_meta() -> dict[str, object]:
    """The table's ``jieba_dict.toml``: version, sha256, words, total frequency, longest word, rjieba version."""
    return tomllib.loads((_data_dir() / "jieba_dict.toml").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _dictionary() -> _Dictionary | None:
    """The mapped table, or None when it cannot stand in for the installed rjieba's dictionary."""
    meta = dictionary_meta()
    if meta["rjieba"] != version("rjieba"):
        return None
    path = _data_dir() / "jieba_dict.tsv"
    with path.open("rb") as f:
        if meta["bytes"] != path.stat().st_size:
            return None
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    total, max_chars = meta["total"], meta["max_chars"]
    assert isinstance(total, int) and isinstance(max_chars, int)
    return _Dictionary(data, total, max_chars)


def rjieba_extension() -> ModuleType | None:
    """rjieba's compiled module, loaded without running ``rjieba/__init__.py`` (which builds the default
    segmenter); None when rjieba is not laid out as a package holding ``rjieba.rjieba``. It is registered as
    ``rjieba.rjieba``, so a later ``import rjieba`` reuses it (a PyO3 module is initialised once per process)."""
    loaded = sys.modules.get("rjieba.rjieba")
    if loaded is not None:
        return loaded
    package = importlib.util.find_spec("rjieba")
    if package is None or package.submodule_search_locations is None:
        return None
    spec = importlib.machinery.PathFinder.find_spec("rjieba.rjieba", list(package.submodule_search_locations))
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules["rjieba.rjieba"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["rjieba.rjieba"]
        raise
    return module


def _has_surrogate(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


def fast_segmenter(text: str) -> rjieba.Jieba | None:
    """A segmenter that cuts `text` and any of its substrings (`cut`, `cut_for_search`) exactly like rjieba's
    default one, holding only the dictionary words inside `text`; None when that cannot be guaranteed."""
    if len(text) > FAST_MAX_CHARS or _has_surrogate(text):
        return None
    table = _dictionary()
    extension = rjieba_extension() if table is not None else None
    if table is None or extension is None:
        return None
    words = table.words_in(text)
    jieba: rjieba.Jieba = extension.Jieba.empty()
    for word, freq in words.items():
        jieba.add_word(word, freq, None)
    jieba.add_word(FILLER, table.total - sum(words.values()), None)
    return jieba


def write_dictionary(dict_txt: Path, out_dir: Path, *, rjieba_version: str) -> dict[str, object]:
    """Write ``jieba_dict.tsv`` and ``jieba_dict.toml`` from jieba's ``dict.txt`` (``word freq [tag]`` lines;
    a repeated word keeps its last frequency, as jieba-rs's `load_dict` does); returns the metadata.

    Regenerate after an rjieba upgrade, once its default dictionary is checked to be this one (the tests
    compare the fast path with the default segmenter)."""
    freqs: dict[str, int] = {}
    for line in dict_txt.read_text(encoding="utf-8").splitlines():
        parts = line.split(" ")
        freqs[parts[0]] = int(parts[1])
    body = b"".join(w.encode() + b"\t" + str(freqs[w]).encode() + b"\n" for w in sorted(freqs, key=str.encode))
    (out_dir / "jieba_dict.tsv").write_bytes(body)
    meta: dict[str, object] = {
        "version": "jieba-dict-v1",
        "source": f"jieba dict.txt, sha256 {hashlib.sha256(dict_txt.read_bytes()).hexdigest()}",
        "rjieba": rjieba_version,
        "words": len(freqs),
        "total": sum(freqs.values()),
        "max_chars": max(map(len, freqs)),
        "bytes": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    head = (
        "# The word frequencies of jieba's default dictionary (jieba, MIT licence, (c) 2013 Sun Junyi), which\n"
        "# rjieba's jieba-rs embeds: see novelmuse/memory/_querycut.py. Generated by `write_dictionary`.\n"
    )
    lines = [f"{k} = {v!r}" if isinstance(v, int) else f'{k} = "{v}"' for k, v in meta.items()]
    (out_dir / "jieba_dict.toml").write_text(head + "\n".join(lines) + "\n", encoding="utf-8")
    return meta
