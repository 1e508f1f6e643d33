"""A reviewed sample book for the report tests: real 三国演义 chapters, the scripted provider, real SQLite.

Chapter 1 is reviewed by the whole loop and the revision is kept unapplied, so its quotes live in three
different texts: the file now (rule hits), the text after the forbidden-phrase rewrite (the first
consistency review) and the text after the repair (the re-review and the editor's evidence).
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from novelmuse.text import split_paragraphs

from ..editorial.helpers import body_of, editor_output, issue, make_book, unique_sentences


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def _isolated(config: Path) -> Iterator[None]:
    old = os.environ.get("MUSE_CONFIG")
    os.environ["MUSE_CONFIG"] = str(config)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MUSE_CONFIG", None)
        else:
            os.environ["MUSE_CONFIG"] = old


def run_muse(root: Path, *args: str | Path) -> Run:
    """`muse ARGS…` in-process with no user config; stdout and stderr captured."""
    from novelmuse.cli import main

    out, err = io.StringIO(), io.StringIO()
    with _isolated(root / "no-user-config.toml"), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return Run(code, out.getvalue(), err.getvalue())


FORBIDDEN = "黄巾"


def reviewed_book(root: Path) -> Path:
    """Three chapters; chapter 1 reviewed: forbidden rewrite → major issue → repair → re-review → editor."""
    body = body_of(root, 1)
    paras = split_paragraphs(body)
    hit = [p for p in paras if FORBIDDEN in p.text]
    assert hit, "the sample chapter must contain the forbidden phrase"
    after_rule = body
    for p in reversed(hit):
        after_rule = after_rule[: p.start] + p.text.replace(FORBIDDEN, "贼军") + after_rule[p.end :]
    rule_edits = {"paragraphs": [{"index": p.index, "text": p.text.replace(FORBIDDEN, "贼军")} for p in hit]}
    untouched = {p.index for p in hit}
    candidates = [s for s in unique_sentences(after_rule, 40, skip=8) if FORBIDDEN not in s]
    quote_major = next(s for s in candidates if _para(after_rule, s) not in untouched)
    quote_minor = next(s for s in candidates if s != quote_major)
    target = _para(after_rule, quote_major)
    repaired_para = split_paragraphs(after_rule)[target].text + "（改）"
    after_repair = _replace_para(after_rule, target, repaired_para)
    quote_late = next(s for s in unique_sentences(after_repair, 40, skip=20) if s not in (quote_major, quote_minor))
    script = {
        "writer": [
            {"output": rule_edits},
            {"output": {"paragraphs": [{"index": target, "text": repaired_para}]}},
        ],
        "reviewer": [
            {"output": {"issues": [issue(quote_major, "major"), issue(quote_minor, "minor")], "passed": False}},
            {"output": {"issues": [issue(quote_late, "minor", "timeline")], "passed": True}},
        ],
        "editor": [{"output": editor_output(after_repair, scores=[82, 78, 70, 66, 55, 74, 80], overall=71)}],
    }
    book = make_book(
        root,
        chapters=3,
        script=script,
        rules=f"禁止:{FORBIDDEN}\n疲劳词:却说≤1\n写得更好看一些\n",
        extra_toml="[chapters]\nmin_chars = 3000\nmax_chars = 5000\n",
    )
    result = run_muse(root, "review", "1", "--book", book)
    assert result.code in (0, 1), result.stderr
    return book


def _para(text: str, quote: str) -> int:
    at = text.index(quote)
    return next(p.index for p in split_paragraphs(text) if p.start <= at < p.end)


def _replace_para(text: str, index: int, new: str) -> str:
    p = split_paragraphs(text)[index]
    return text[: p.start] + new + text[p.end :]
