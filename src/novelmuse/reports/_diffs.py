"""The terminal's character diff: each changed line with a few unchanged characters around each change —
shared by `muse review --diff` and `muse drafts diff`."""

from __future__ import annotations

from rich.text import Text

from .html._diff import Piece

#: Unchanged characters shown on each side of a change in the terminal diff (the rest of a long line is "…").
DIFF_CONTEXT_CHARS = 30


def _before(text: str) -> str:
    """The unchanged text just before a change: its line's last DIFF_CONTEXT_CHARS characters."""
    tail = text[-DIFF_CONTEXT_CHARS:]
    nl = tail.rfind("\n")
    if nl >= 0:
        return tail[nl + 1 :]
    return ("…" if len(text) > len(tail) else "") + tail


def _after(text: str) -> str:
    """The unchanged text just after a change: its line's first DIFF_CONTEXT_CHARS characters."""
    head = text[:DIFF_CONTEXT_CHARS]
    nl = head.find("\n")
    if nl >= 0:
        return head[:nl]
    return head + ("…" if len(text) > len(head) else "")


def _between(text: str) -> str:
    if len(text) <= 2 * DIFF_CONTEXT_CHARS:
        return text
    return _after(text) + ("\n  …\n" if "\n" in text else " … ") + _before(text)


def diff_text(pieces: list[Piece]) -> Text:
    """A changed run as one Rich text: deletions ``[-…-]`` (red, struck), insertions ``{+…+}`` (green) — marked
    so they show without colour too — and only DIFF_CONTEXT_CHARS unchanged characters around each change."""
    merged: list[Piece] = []
    for p in pieces:  # adjacent unchanged pieces (context lines + the line's own start) are one run
        if merged and p.op == "equal" and merged[-1].op == "equal":
            merged[-1] = Piece("equal", merged[-1].text + p.text)
        else:
            merged.append(Piece(p.op, p.text))
    out = Text()
    for k, p in enumerate(merged):
        if p.op == "delete":
            out.append(f"[-{p.text}-]", style="red strike")
        elif p.op == "insert":
            out.append(f"{{+{p.text}+}}", style="green")
        elif k == 0:
            out.append(_before(p.text))
        elif k == len(merged) - 1:
            out.append(_after(p.text))
        else:
            out.append(_between(p.text))
    return out
