"""Leak check: a blind judge input may not contain arm names, strategy names, card ids, manifest content or
any token the caller registers as secret. Checked on the exact text that would be sent, before any request.

Matching rules (documented in docs/guide/judging.md):
- a token made only of ASCII letters, digits, ``_`` and ``-`` matches as a whole word (not inside a longer
  ASCII word), case-sensitively — so arm ``A`` is found in ``A计划`` or ``arm A`` but not in ``Apple``;
- any other token (Chinese names, phrases) matches as a substring after normalisation (NFC, full/half-width
  folding, whitespace removed);
- manifest content is checked per manifest line of at least `MANIFEST_MIN_CHARS` normalised characters
  (shorter lines such as a bare name would refuse every chapter that mentions the character).
The error names the kind of leak and counts, never the token (it may be a secret).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import FailedClosed
from ..rules import copied_runs
from ..text import normalize_quote, sha256_hex
from ._blind import BlindInput

MANIFEST_MIN_CHARS = 8
_WORDISH = re.compile(r"^[A-Za-z0-9_\-]+$")


def _compile(token: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(token) + r"(?![A-Za-z0-9_])")


@dataclass(frozen=True)
class LeakGuard:
    """Everything that must not reach a blind judge, by kind."""

    arm_names: Sequence[str] = ()
    strategy_names: Sequence[str] = ()
    card_ids: Sequence[str] = ()
    manifest: Sequence[str] = ()
    secrets: Sequence[str] = ()
    _kinds: tuple[tuple[str, tuple[str, ...]], ...] = field(init=False, repr=False, compare=False)
    _clean: set[str] = field(init=False, repr=False, compare=False, default_factory=set)
    _normalized: dict[str, str] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        manifest_lines = [
            line
            for text in self.manifest
            for line in text.splitlines()
            if len(normalize_quote(line)) >= MANIFEST_MIN_CHARS
        ]
        kinds = (
            ("arm_name", _clean(self.arm_names)),
            ("strategy_name", _clean(self.strategy_names)),
            ("card_id", _clean(self.card_ids)),
            ("manifest", _clean(manifest_lines)),
            ("secret", _clean(self.secrets)),
        )
        object.__setattr__(self, "_kinds", kinds)
        # each non-word token normalised once, not once per text it is looked for in
        normalized = {t: normalize_quote(t) for _, tokens in kinds for t in tokens if not _WORDISH.match(t)}
        object.__setattr__(self, "_normalized", normalized)

    def findings(self, text: str) -> dict[str, int]:
        """Kind → number of distinct registered tokens of that kind found in `text` (empty: no leak)."""
        normalized: str | None = None  # normalised only when a non-word token needs it
        found: dict[str, int] = {}
        for kind, tokens in self._kinds:
            hits = 0
            for token in tokens:
                if _WORDISH.match(token):
                    if _compile(token).search(text):
                        hits += 1
                    continue
                if normalized is None:
                    normalized = normalize_quote(text)
                if self._normalized[token] in normalized:
                    hits += 1
            if hits:
                found[kind] = hits
        return found

    def check(self, texts: Iterable[str], where: str) -> None:
        """Raise JUDGE_INPUT_LEAK (fail closed, nothing sent) if any registered token occurs in `texts`."""
        total: dict[str, int] = {}
        for text in texts:
            digest = sha256_hex(text)
            if digest in self._clean:  # already checked against these same tokens: clean
                continue
            found = self.findings(text)
            for kind, n in found.items():
                total[kind] = max(total.get(kind, 0), n)
            if not found:
                self._clean.add(digest)
        if total:
            summary = ", ".join(f"{kind}×{n}" for kind, n in sorted(total.items()))
            raise FailedClosed(
                "JUDGE_INPUT_LEAK",
                f"the blind judge input contains registered hidden tokens ({summary}); nothing was sent",
                where,
                "remove arm/strategy names, card ids, manifest text and secrets from the candidates and inputs",
            )


def _clean(tokens: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({t.strip() for t in tokens if t.strip()}))


#: A run this long shared with chapter N or later is the target chapter's text, not a coincidence (shorter than the
#: 50 characters of source_safety: a reference outline quotes sentences, not paragraphs).
FUTURE_TEXT_RUN_CHARS = 20


def check_future_text(blind: BlindInput, future: Sequence[str], where: str) -> None:
    """Raise JUDGE_FUTURE_TEXT (fail closed, nothing sent) if any field a judge reads holds a run of
    `FUTURE_TEXT_RUN_CHARS` characters of `future` — the text of the target chapter N and later (seed 000 细纲回放:
    评委只使用冻结快照和 reference scaffold，不读取目标章全文). The error counts fields, never quotes the text."""
    if not future:
        return
    fields = [("candidates", c.text) for c in blind.candidates]
    fields += [("fineOutline", t.text) for t in blind.fineOutline]
    fields += [("assertions", t.text) for t in (*blind.assertions, *blind.constraints)]
    fields += [("context", c.text) for c in blind.context]
    hits: dict[str, int] = {}
    for name, text in fields:
        if copied_runs(text, future, FUTURE_TEXT_RUN_CHARS):
            hits[name] = hits.get(name, 0) + 1
    if hits:
        summary = ", ".join(f"{name}×{n}" for name, n in hits.items())
        raise FailedClosed(
            "JUDGE_FUTURE_TEXT",
            f"the judge input holds text of the target chapter or a later one ({summary}); nothing was sent",
            where,
            "judge against a frozen snapshot: candidates and the reference scaffold may not quote chapter N or later",
        )
