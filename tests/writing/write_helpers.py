"""Write runs for the tests: the sample book (chapters 1–10 of 三国演义, outline 11) with a scripted provider,
and canned writer / detector / extractor answers built from the real chapter 11 of the novel."""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from novelmuse.book import Book, find_book
from novelmuse.text import sha256_hex, split_chapters
from novelmuse.writing import confirm_outline

from ..conftest import SAMPLE_BOOK, SANGUO

#: The hard constraints of examples/sanguo/outlines/0011.yaml, in outline order.
IDS_11 = [
    *(x for n in range(1, 7) for x in (f"E{n}", f"R{n}")),
    "F-advance:F-weapons",
    "F-plant:F-xuzhou",
    "hook",
    "S1",
    "S2",
    "S3",
    "S4",
    "T1",
    "T2",
]
QUOTE = "青龙刀起，劈管亥于马下"  # occurs once in chapter 11
NO_FACTS: dict[str, list[Any]] = {"events": [], "foreshadows": [], "relations": [], "states": []}
ENTITIES = [
    {"kind": "entity", "subject": "太史慈", "statement": "太史慈登场", "quote": "覆姓太史，名慈，字子义"},
    {"kind": "entity", "subject": "典韦", "statement": "典韦登场", "quote": "乃典韦也，手提双铁戟"},
]
SCRIPTED_TOML = '\n[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n'


@cache
def chapter_text(n: int) -> str:
    """The body of chapter `n` of 三国演义, stripped (what a writer would answer for it)."""
    split = split_chapters(SANGUO.read_text(encoding="utf-8"))
    return next(p.body for p in split.chapters if p.number == n).strip()


def draft(text: str | None = None, *, declared: list[dict[str, str]] | None = None, requests: Any = None) -> Any:
    """A writer answer: chapter 11 (or `text`) declaring its two new entities; `requests` adds the field."""
    out: dict[str, Any] = {"text": text if text is not None else chapter_text(11)}
    out["declared_facts"] = ENTITIES if declared is None else declared
    if requests is not None:
        out["evidence_requests"] = requests
    return {"output": out}


def detector(
    text: str | None = None,
    *,
    ids: list[str] = IDS_11,
    fail: tuple[str, ...] = (),
    quote: str = QUOTE,
    sha: str | None = None,
    coverage: float = 1.0,
) -> Any:
    """A detector answer for `text`: every id passes (with `quote`) except those in `fail`."""
    text = text if text is not None else chapter_text(11)
    verdicts = [
        {"id": i, "verdict": "fail" if i in fail else "pass", "quote": "" if i in fail else quote, "reason": "核对"}
        for i in ids
    ]
    return {
        "output": {
            "candidate_sha256": sha or sha256_hex(text),
            "verdicts": verdicts,
            "coverage": coverage,
            "high_severity": len(fail),
        }
    }


def judges(text: str | None = None, chapter: int = 11, canon: float = 4.5) -> list[Any]:
    """The two judges' answers of the quality gate on `text` (chapter 11 by default): every dimension 4.5."""
    from novelmuse.judging import Candidate, build_blind_item, load_rubric

    from ..judging._helpers import good_report

    text = text if text is not None else chapter_text(11)
    item = build_blind_item(
        item_id=f"gate-{chapter}-{sha256_hex(text)[:16]}",
        seed="0",
        rubric=load_rubric("quality_gate"),
        candidates=[Candidate("A", text)],
    )
    report = good_report(item.blind, lambda c, d, i: canon if d == "canon_compliance" else 4.5)
    return [{"output": report}, {"output": report}]


def facts(**items: Any) -> Any:
    """An extractor answer (empty lists unless given)."""
    return {"output": {**NO_FACTS, **items}}


def sample_book(
    root: Path, script: dict[str, Any] | None, *, writing: str = "", roles: str | None = None, providers: str = ""
) -> Book:
    """A copy of the sample book with outline 11 confirmed; `writing` adds lines to its [writing] table; with
    `script`, the scripted provider (and any other `providers` tables) serve `roles` (default: every role)."""
    shutil.copytree(SAMPLE_BOOK, root, ignore=shutil.ignore_patterns(".muse"))
    toml_path = root / "book.toml"
    toml_path.write_text(toml_path.read_text(encoding="utf-8").replace("[writing]\n", "[writing]\n" + writing))
    extra = ""
    if script is not None:
        (root / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
        extra += (
            SCRIPTED_TOML
            + providers
            + "\n[roles]\n"
            + (roles if roles is not None else 'default = "s:scripted-model-1"\n')
        )
    with (root / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write(extra)
    book = find_book(root)
    confirm_outline(book, 11)
    return book


def as_json(stdout: str) -> Any:
    """The one JSON document a --json command printed."""
    return json.loads(stdout)


def writer_calls(book: Book) -> list[tuple[str, str, str]]:
    """(task schema name, status, error code) of every writer call of the book, in order."""
    rows = book.db.execute(
        "SELECT schema_name, status, COALESCE(error_code, '') FROM model_calls WHERE role = 'writer' ORDER BY id"
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]
