"""The query fast path (`_querycut`): a segmenter holding only the dictionary words inside a text cuts it exactly
like rjieba's default segmenter (the tokens the index was built with), checked against that segmenter itself."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import unicodedata as ud
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from unittest import mock

import rjieba
from corpus import HONGLOU, SANGUO
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.memory import _tokens
from novelmuse.memory._querycut import FAST_MAX_CHARS, _data_dir, dictionary_meta, fast_segmenter, write_dictionary
from novelmuse.memory._tokens import Tokenizer

# Everything jieba treats differently: CJK (common, rare, extension A/B, compatibility), ASCII letters and digits
# and the symbols jieba keeps inside words (+#&._%-), ASCII and CJK punctuation, spaces, CR/LF, full-width forms,
# kana, Greek (γ射线 is a dictionary word across a block boundary), emoji.
ODD = [
    *"abcXYZ0123456789+#&._%-,.;:!?()[]'\" \t\r\n，。、；：！？「」《》…—　ＡＢ１２ぁアγαé😀",
    "\u3400",
    "\u4dbf",
    "\u9fff",
    "\uf900",
    "\U00020000",
    "\U0002a6df",
    "\U0002f800",
    "AT&T",
    "C++",
    "c#",
    "3.5%",
    "\r\n",
]


@lru_cache(maxsize=1)
def _corpus() -> str:
    return SANGUO.read_text(encoding="utf-8") + HONGLOU.read_text(encoding="utf-8")


@st.composite
def texts(draw: st.DrawFn) -> str:
    """A random stretch of the novels, with odd characters spliced in."""
    corpus = _corpus()
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(corpus) - 1))
        parts.append(corpus[start : start + draw(st.integers(0, 40))])
        parts.append("".join(draw(st.lists(st.sampled_from(ODD), max_size=4))))
    return "".join(parts)[:FAST_MAX_CHARS]


@settings(max_examples=400)
@given(texts())
def test_fast_segmenter_cuts_like_the_default_one(text: str) -> None:
    jieba = fast_segmenter(text)
    assert jieba is not None
    assert jieba.cut(text) == rjieba.cut(text)
    assert jieba.cut_for_search(text) == rjieba.cut_for_search(text)
    assert jieba.cut(text, hmm=False) == rjieba.cut(text, hmm=False)
    for a, b in ((0, len(text) // 2), (len(text) // 3, len(text))):  # the query path cuts substrings too
        assert jieba.cut(text[a:b]) == rjieba.cut(text[a:b])
        assert jieba.cut_for_search(text[a:b]) == rjieba.cut_for_search(text[a:b])


@settings(max_examples=100)
@given(texts(), st.lists(st.sampled_from(["刘备", "关羽", "云长", "张飞", "曹操", "玄德", "孔明", "γ"]), max_size=3))
def test_query_tokens_are_those_of_the_full_segmenter(text: str, names: list[str]) -> None:
    """What the index is queried with (card names split off, the pieces cut and search-cut) is the same with the
    fast path as with the default segmenter the book was indexed with."""
    tok = Tokenizer(names)

    def known(words: set[str]) -> set[str]:
        return words

    with mock.patch.object(Tokenizer, "_query_segmenter", lambda self, text: fast_segmenter(text)):
        fast = tok.query_tokens(text, known)
    with mock.patch.object(Tokenizer, "_query_segmenter", lambda self, text: None):
        assert tok.query_tokens(text, known) == fast


def test_a_long_series_of_queries_builds_the_default_segmenter_once() -> None:
    """One command's query takes the fast path; past `FAST_QUERIES` (context assembly queries every chapter),
    or once the default segmenter exists in the process, the default one serves."""
    tok = Tokenizer([])
    assert tok._query_segmenter("桃园结义") is None  # this test process has imported rjieba
    with mock.patch.dict(sys.modules):
        del sys.modules["rjieba"]
        assert all(tok._query_segmenter("桃园结义") is not None for _ in range(_tokens.FAST_QUERIES))
        assert tok._query_segmenter("桃园结义") is None


def test_long_or_invalid_text_uses_the_full_segmenter() -> None:
    assert fast_segmenter("桃" * (FAST_MAX_CHARS + 1)) is None
    assert fast_segmenter("桃园\udcff结义") is None  # a lone surrogate (undecodable bytes in argv)


def test_the_table_is_jiebas_dictionary(tmp_path: Path) -> None:
    """The shipped table is what `write_dictionary` makes of jieba's dict.txt (jieba-rs embeds the same words and
    frequencies: its zstd-compressed copy, extracted from the rjieba extension, gives the same sha256), its
    metadata matches its bytes, and it was checked against the installed rjieba."""
    import jieba

    meta = dictionary_meta()
    body = (_data_dir() / "jieba_dict.tsv").read_bytes()
    assert meta["bytes"] == len(body) and meta["sha256"] == hashlib.sha256(body).hexdigest()
    assert meta["rjieba"] == version("rjieba"), "rjieba changed: check its dictionary, then run write_dictionary"
    made = write_dictionary(Path(jieba.__file__).parent / "dict.txt", tmp_path, rjieba_version=version("rjieba"))
    assert made == meta
    assert (tmp_path / "jieba_dict.tsv").read_bytes() == body


def test_the_whole_table_is_the_default_dictionary() -> None:
    """All of the table loaded into an empty segmenter cuts whole chapters like the default one (so the total
    frequency, which every route depends on, is the default's too)."""
    full = rjieba.Jieba.empty()
    for line in (_data_dir() / "jieba_dict.tsv").read_text(encoding="utf-8").splitlines():
        word, freq = line.split("\t")
        full.add_word(word, int(freq), None)
    sample = _corpus()[:150_000]
    assert full.cut(sample) == rjieba.cut(sample)
    assert full.cut_for_search(sample) == rjieba.cut_for_search(sample)


def test_a_query_never_builds_the_default_dictionary() -> None:
    """The fast path loads rjieba's extension without ``rjieba/__init__.py`` (which builds the 349k-word default
    segmenter); importing rjieba afterwards still works (the extension is initialised once)."""
    code = (
        "import sys\n"
        "from novelmuse.memory._querycut import fast_segmenter\n"
        "print(fast_segmenter('桃园结义').cut('桃园结义'), 'rjieba' in sys.modules)\n"
        "import rjieba\n"
        "print(rjieba.cut('桃园结义'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['桃园', '结义'] False", "['桃园', '结义']"]


@settings(max_examples=300)
@given(st.text(max_size=6) | st.sampled_from(ODD))
def test_word_characters_are_those_of_the_indexed_regex(text: str) -> None:
    """The tokens the index keeps were chosen by ``re.search(r"[\\w\\u3400-\\u9fff]", token)``; the predicate that
    replaced it (no class to compile per process) keeps the same ones."""
    wordy = re.compile(r"[\w\u3400-\u9fff]")
    assert [_tokens._is_word_char(ch) for ch in text] == [bool(wordy.match(ch)) for ch in text]
    assert _tokens._is_wordy(text) == (bool(wordy.search(text)) and not all(ud.category(c)[0] == "P" for c in text))


def test_word_characters_over_every_code_point() -> None:
    wordy = re.compile(r"[\w\u3400-\u9fff]")
    assert all(_tokens._is_word_char(chr(c)) == bool(wordy.match(chr(c))) for c in range(0x110000))
