"""Renderings people read: a skip is never shown as a pass, every memory value keeps its source, the documents'
shapes come from the services' own results."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from novelmuse.editorial import StepOutcome
from novelmuse.judging import list_rubrics
from novelmuse.llm import ModelsCheckReport, RoleCheck
from novelmuse.memory import CardState, RelationAt, Source, ValueAt
from novelmuse.reports import (
    card_show_doc,
    lint_notes,
    outcome_text,
    render_card,
    render_models_check,
    rubrics_doc,
    show_notes,
)
from novelmuse.rules import LintCounts, LintReport, ShowReport


def _printed(render: object) -> str:
    console = Console(record=True, width=200)
    render(console)  # type: ignore[operator]
    return console.export_text()


def test_a_skipped_step_or_role_reads_as_skipped_in_its_own_colour() -> None:
    skipped = outcome_text(StepOutcome.skipped("editor_review", "no model configured"))
    assert skipped.plain == "skipped(no model configured)" and skipped.style == "yellow"
    assert outcome_text(StepOutcome.passed("rules")).style == "green"
    roles = [
        RoleCheck(role="writer", provider=None, kind=None, model=None, outcome="skipped", reason="no model configured")
    ]
    report = ModelsCheckReport(status="skipped", exit_code=0, run_id=None, issues=[], roles=roles)
    text = _printed(lambda c: render_models_check(report, c))
    assert "│ skipped (no model configured) │" in text and "models check: skipped — 0 passed" in text


def test_a_card_as_of_a_chapter_shows_the_source_of_every_value() -> None:
    author = Source("author", "cards/guan-yu.yaml", 7)
    fact = Source("fact", chapter=77, start=1234, end=1250, receipt_id="rcpt_1", fact_card_id="F1")
    state = CardState(
        card_id="guan-yu",
        type="character",
        name="关羽",
        aliases=["云长"],
        as_of=77,
        attributes={"status": ValueAt("dead", 77, fact), "location": ValueAt("荆州", 40, author)},
        relations=[RelationAt("brother", "liu-bei", 1, author)],
    )
    doc = card_show_doc(state, None, {76: "current", 77: "stale", 3: "missing"})
    attributes = doc.model_dump(mode="json")["attributes"]
    assert attributes["status"] == {
        "value": "dead",
        "since": 77,
        "source": {
            "kind": "fact",
            "file": None,
            "line": None,
            "chapter": 77,
            "start": 1234,
            "end": 1250,
            "receipt_id": "rcpt_1",
            "fact_card_id": "F1",
        },
        "note": "",
    }
    assert attributes["location"]["source"] == {
        "kind": "author",
        "file": "cards/guan-yu.yaml",
        "line": 7,
        "chapter": None,
        "start": None,
        "end": None,
        "receipt_id": None,
        "fact_card_id": None,
    }
    assert (doc.facts_stale, doc.facts_missing) == ([77], [3])
    text = _printed(lambda c: render_card(c, doc))
    assert "fact card ch.77 [1234:1250] receipt rcpt_1" in text and "cards/guan-yu.yaml:7" in text
    assert "STALE for chapters 77" in text


def test_rubrics_doc_lists_every_registered_rubric() -> None:
    doc = rubrics_doc(list_rubrics()).model_dump()
    rows = {r["profile"]: r for r in doc["rubrics"]}
    assert set(rows) == {"quality_gate", "fine_outline_replay", "writer_replay"}
    assert rows["quality_gate"]["critical"] == ["canon_compliance", "character_voice", "scene_structure"]


def test_notes_say_when_only_the_defaults_apply() -> None:
    counts = LintCounts(forbidden=0, fatigue=0, preferences=0, unparsed=0, errors=0, warnings=0)
    lint = LintReport(
        passed=True, path="rules.txt", file="missing", forbidden=[], fatigue=[], preferences=[], unparsed=[],
        problems=[], counts=counts,
    )  # fmt: skip
    assert lint_notes(lint) == ["note: no rules file at rules.txt: only the built-in defaults apply"]
    assert lint_notes(lint.model_copy(update={"file": "present"})) == []
    show = ShowReport.model_construct(path="rules.txt", file="empty")
    assert show_notes(show) == ["note: rules.txt is empty: only the built-in defaults apply"]


def test_a_fact_source_is_located_by_file_and_line_while_its_chapter_is_current(tmp_path: Path) -> None:
    """issue 16.4: a value from a current fact card reads `chapters/0005.md:3 [start:end]`; a stale chapter's offsets
    may point into other text, so they stand alone."""
    from novelmuse.book import find_book
    from novelmuse.reports import ChapterLines

    (tmp_path / "chapters").mkdir()
    (tmp_path / "book.toml").write_text('[book]\ntitle = "t"\n', encoding="utf-8")
    body = "第一段。\n关羽败走麦城，遇害。\n"
    (tmp_path / "chapters" / "0005.md").write_text("# 第五回\n" + body, encoding="utf-8")
    (tmp_path / "chapters" / "0006.md").write_text("# 第六回\n" + body, encoding="utf-8")
    start = body.index("遇害")
    current = Source("fact", chapter=5, start=start, end=start + 2, receipt_id="rcpt_1", fact_card_id="F1")
    stale = Source("fact", chapter=6, start=start, end=start + 2, receipt_id="rcpt_2", fact_card_id="F2")
    state = CardState(
        card_id="guan-yu",
        type="character",
        name="关羽",
        aliases=[],
        as_of=6,
        attributes={"status": ValueAt("dead", 5, current), "place": ValueAt("麦城", 6, stale)},
        relations=[],
    )
    doc = card_show_doc(state, None, {5: "current", 6: "stale"})
    text = _printed(lambda c: render_card(c, doc, ChapterLines(find_book(tmp_path))))
    assert f"fact card chapters/0005.md:3 [{start}:{start + 2}] receipt rcpt_1" in text, text
    assert f"fact card ch.6 [{start}:{start + 2}] receipt rcpt_2" in text
