"""Character budgets (`text.count_chars`: characters without whitespace) and the fixed cut order.

Protected blocks (the outline, the fact lines, the rules) are never cut: if they do not fit beside the
retrieval budget and the evidence reserve, the build fails (CONTEXT_OVER_BUDGET). Reducible blocks are cut
deterministically, each on its own budget so that arms never change each other's text:

- the continuous window keeps the longest run of whole paragraphs that ends at the last paragraph of N−1
  and fits: N−4 loses its first paragraphs (then all of them) before N−3 is touched, … N−1 last;
- retrieved excerpts are taken in the plan's slot order; the first that does not fit is trimmed to what is
  left (if at least MIN_EXCERPT_CHARS are left) and every later one is cut.

Both rules are monotone: a larger budget keeps a superset of what a smaller one keeps.
"""

from __future__ import annotations

from ..text import count_chars

MIN_EXCERPT_CHARS = 40


def prefix_within(text: str, budget: int) -> int:
    """The length (in code points) of the longest prefix of `text` that counts at most `budget` characters."""
    counted = 0
    for i, ch in enumerate(text):
        if not ch.isspace():
            if counted == budget:
                return i
            counted += 1
    return len(text)


def keep_suffix(counts: list[int], budget: int) -> int:
    """The index of the first item of the longest suffix of `counts` whose sum is at most `budget`
    (``len(counts)`` when not even the last item fits)."""
    total = 0
    i = len(counts)
    while i > 0 and total + counts[i - 1] <= budget:
        total += counts[i - 1]
        i -= 1
    return i


def fit_excerpts(texts: list[str], budget: int) -> list[int]:
    """How much of each text to keep (a prefix length) under `budget`, in order: whole while they fit, the
    first that does not is trimmed (when at least MIN_EXCERPT_CHARS are left, else dropped), the rest dropped.
    Empty texts cost nothing and never stop the fill."""
    kept: list[int] = []
    left = budget
    stopped = False
    for text in texts:
        if stopped or not text:
            kept.append(0)
            continue
        cost = count_chars(text)
        if cost <= left:
            kept.append(len(text))
            left -= cost
            continue
        stopped = True
        if left >= MIN_EXCERPT_CHARS:
            cut = prefix_within(text, left)
            kept.append(cut)
            left -= count_chars(text[:cut])
        else:
            kept.append(0)
    return kept
