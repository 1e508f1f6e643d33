"""Targeted paragraph rewrites: splice new paragraph texts into a chapter body, touching nothing else.

The invariant (checked in code on every splice, not only in tests): every paragraph that was not
asked to change, and every byte between paragraphs (line breaks, blank lines), is byte-identical
before and after. A violation is a bug and fails closed (SPLICE_INVARIANT) instead of writing a
revision that silently changed the author's other paragraphs.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from ..errors import FailedClosed
from ..text import Paragraph, split_paragraphs


def _leading_ws(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def clean_paragraph(original: str, new: str) -> str:
    """A rewritten paragraph as one line, keeping the original's leading indentation (e.g. ``　　``)."""
    body = new.replace("\r", "").strip()
    return _leading_ws(original) + body


def splice_paragraphs(body: str, edits: Mapping[int, str]) -> str:
    """Replace the paragraphs at the given indices with new texts; everything else is kept verbatim.

    Each new text must be a single non-blank line (the writer's contract guarantees it; checked here
    again because a blank or multi-line replacement would shift every later paragraph index).
    """
    paragraphs = split_paragraphs(body)
    unknown = sorted(i for i in edits if not 0 <= i < len(paragraphs))
    if unknown:
        raise FailedClosed(
            "SPLICE_INVARIANT",
            f"paragraph indices {unknown} do not exist (chapter has {len(paragraphs)})",
            "editorial splice",
            "this is a novelmuse bug; report it",
        )
    out: list[str] = []
    pos = 0
    for p in paragraphs:
        if p.index in edits:
            new = clean_paragraph(p.text, edits[p.index])
            if not new.strip() or "\n" in new:
                raise FailedClosed(
                    "SPLICE_INVARIANT",
                    f"replacement for paragraph {p.index} is blank or spans lines",
                    "editorial splice",
                    "this is a novelmuse bug; report it",
                )
            out.append(body[pos : p.start])
            out.append(new)
            pos = p.end
    out.append(body[pos:])
    result = "".join(out)
    assert_only_changed(body, result, set(edits))
    return result


def _gaps(body: str, paragraphs: list[Paragraph]) -> list[str]:
    """The text between paragraphs (and before the first / after the last)."""
    gaps: list[str] = []
    pos = 0
    for p in paragraphs:
        gaps.append(body[pos : p.start])
        pos = p.end
    gaps.append(body[pos:])
    return gaps


def changed_paragraphs(old: str, new: str) -> set[int] | None:
    """Indices whose text differs, or None when the paragraph structure itself changed."""
    a, b = split_paragraphs(old), split_paragraphs(new)
    if len(a) != len(b) or _gaps(old, a) != _gaps(new, b):
        return None
    return {i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x.text != y.text}


def assert_only_changed(old: str, new: str, allowed: set[int]) -> None:
    """Fail closed unless `new` differs from `old` only inside the paragraphs in `allowed`."""
    changed = changed_paragraphs(old, new)
    if changed is None or not changed <= allowed:
        raise FailedClosed(
            "SPLICE_INVARIANT",
            "a paragraph outside the targeted ones changed",
            "editorial splice",
            "this is a novelmuse bug; report it",
        )


def paragraph_diff(old: str, new: str, *, context: int = 1) -> str:
    """A unified diff of two chapter bodies, one paragraph per line (what the arbiter reads)."""
    a = [p.text for p in split_paragraphs(old)]
    b = [p.text for p in split_paragraphs(new)]
    return "\n".join(difflib.unified_diff(a, b, "before", "after", n=context, lineterm=""))
