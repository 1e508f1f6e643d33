"""Test books for the editorial loop: real chapters from 三国演义, a scripted provider, real SQLite."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import yaml

from novelmuse.llm import Vault
from novelmuse.roles.editor import DIMENSIONS
from novelmuse.text import locate_quote, split_paragraphs

from ..conftest import SANGUO

EMPTY_FACTS: dict[str, list[Any]] = {"events": [], "foreshadows": [], "relations": [], "states": []}
_HEADING = re.compile(r"^第[一二三四五六七八九十百]+回", re.M)


def sanguo_chapters(n: int) -> list[tuple[str, str]]:
    """(heading, body) of the first `n` chapters of 三国演义, split on the 第N回 heading lines."""
    text = SANGUO.read_text(encoding="utf-8")
    starts = [m.start() for m in _HEADING.finditer(text)][: n + 1]
    out = []
    for a, b in zip(starts, [*starts[1:], len(text)], strict=False):
        heading, _, body = text[a:b].partition("\n")
        out.append((heading.strip(), body))
        if len(out) == n:
            break
    return out


def make_book(
    root: Path,
    *,
    chapters: int = 1,
    script: dict[str, Any] | None = None,
    rules: str = "",
    review: dict[str, int] | None = None,
    roles: bool = True,
    extra_toml: str = "",
    gate: bool = False,
) -> Path:
    """A book with `chapters` chapters; with `script`, every role is served by the scripted provider.

    A script without an ``extractor`` list gets one: an empty fact card (no items) per possible call,
    so the `facts` step after a finalised review passes without the test spelling it out. The quality gate that
    ends `muse review` (its judges are a role like any other) is off unless `gate` (tests/writing test it).
    """
    (root / "chapters").mkdir(parents=True)
    for i, (heading, body) in enumerate(sanguo_chapters(chapters), start=1):
        (root / "chapters" / f"{i:04d}.md").write_text(f"# {heading}\n{body}", encoding="utf-8")
    toml = '[book]\ntitle = "三国演义"\n'
    if script is not None:
        script = {"extractor": [{"output": EMPTY_FACTS}] * (4 * chapters), **script}
        (root / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
        toml += '[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n'
        if roles:
            toml += '[roles]\ndefault = "s:scripted-model-1"\n'
    settings: dict[str, object] = {**(review or {}), **({} if gate else {"quality_gate": "false"})}
    if settings:
        toml += "[review]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items())
    toml += extra_toml
    (root / "book.toml").write_text(toml, encoding="utf-8")
    if rules:
        (root / "rules.txt").write_text(rules, encoding="utf-8")
    return root


def body_of(root: Path, n: int = 1) -> str:
    return sanguo_chapters(n)[n - 1][1]


def unique_sentences(body: str, count: int, *, skip: int = 0) -> list[str]:
    """Sentences (split at 。) that occur exactly once in `body`: usable evidence quotes."""
    out: list[str] = []
    for s in body.replace("\n", "。").split("。"):
        s = s.strip().strip("　")
        if len(s) >= 8 and "\n" not in s and locate_quote(body, s, min_chars=4).ok:
            out.append(s)
    return out[skip : skip + count]


def paragraph_of(body: str, quote: str) -> int:
    m = locate_quote(body, quote)
    assert m.ok
    return next(p.index for p in split_paragraphs(body) if p.start <= m.start < p.end)


def editor_output(
    body: str, scores: int | list[int] = 80, overall: int = 80, verdict: str = "accept"
) -> dict[str, Any]:
    quotes = unique_sentences(body, 7)
    vals = scores if isinstance(scores, list) else [scores] * 7
    return {
        "overall": overall,
        "dims": {name: {"score": v, "evidence": q} for name, v, q in zip(DIMENSIONS, vals, quotes, strict=True)},
        "verdict": verdict,
        "notes": ["第3段节奏略慢"],
    }


def issue(quote: str, severity: str = "major", type_: str = "setting") -> dict[str, Any]:
    return {"severity": severity, "type": type_, "quote": quote, "explanation": "与前文矛盾", "fix_hint": "改掉"}


def receipts_by_role(root: Path) -> dict[str, int]:
    conn = sqlite3.connect(root / ".muse" / "muse.db")
    try:
        rows = conn.execute("SELECT role, COUNT(*) FROM receipts GROUP BY role").fetchall()
    finally:
        conn.close()
    return dict(rows)


def db_rows(root: Path, sql: str, *args: object) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(root / ".muse" / "muse.db")
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def as_json(stdout: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(stdout)
    return doc


def requests_of(root: Path, role: str) -> list[list[dict[str, str]]]:
    """The message lists of every request sent for `role`, in the order they were sent (from the receipts, whose
    request sha256 names the exact request in the raw vault)."""
    shas = [
        row[0]
        for row in db_rows(
            root, "SELECT request_sha256 FROM receipts WHERE role = ? AND outcome != 'refused' ORDER BY id", role
        )
    ]
    vault = Vault(root / ".muse" / "vault")
    try:
        return [json.loads(vault.read(sha))["messages"] for sha in shas]
    finally:
        vault.close()
