"""fine_outline_replay (issue 13 item 5's last sentence): outline drafts judged blind against the frozen snapshot
and the reference scaffold only — never the target chapter, whose text the leak guard refuses."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import yaml

from novelmuse.book import Book
from novelmuse.errors import InputError
from novelmuse.replay import build_gate_input, register_set, resolve_set
from novelmuse.replay._orchestrator import _SENTENCE_END

from .replay_helpers import RoleFake, replay_book, run


def _pin(book: Book, relative: str, text: str) -> dict[str, str]:
    path = book.root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return {"path": relative, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _set(book: Book, chapter: int, drafts: dict[str, str]) -> Any:
    reference = (book.root / "outlines" / "0011.yaml").read_text(encoding="utf-8")
    reference = reference.replace("chapter: 11", f"chapter: {chapter}")
    item = {
        "id": f"fo{chapter}",
        "chapter": chapter,
        "reference": _pin(book, f"refs/{chapter:04d}.yaml", reference),
        "drafts": {arm: _pin(book, f"drafts/{chapter:04d}-{arm}.yaml", text) for arm, text in drafts.items()},
        "assertions": [{"id": "a1", "text": "关羽斩管亥"}],
    }
    path = book.root / f"fo{chapter}.yaml"
    path.write_text(yaml.safe_dump({"name": f"fo{chapter}", "kind": "fine_outline", "items": [item]}), "utf-8")
    return resolve_set(book, register_set(book, path).sha256)


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Book:
    return replay_book(tmp_path_factory.mktemp("fo") / "b")


def test_outline_drafts_are_judged_blind_by_the_fine_outline_rubric(book: Book) -> None:
    outline = (book.root / "outlines" / "0011.yaml").read_text(encoding="utf-8")
    doc = _set(book, 11, {"A": outline, "C": outline.replace("糜竺献计求救", "糜竺献策求援")})
    fake = RoleFake()
    out = run(book, doc, fake, arms=("A", "C"))
    assert out.ok and out.panels[0].panel_status == "stable", out
    assert {r for r, _ in fake.calls} == {"judge"}  # no writer, detector or extractor: only the judges
    profile = book.db.execute("SELECT profile FROM judge_panels WHERE id = ?", (out.panels[0].panel_id,)).fetchone()
    assert profile[0] == "fine_outline_replay"
    with pytest.raises(InputError) as exc:
        build_gate_input(book, out.run_id)
    assert exc.value.code == "REPLAY_NOT_GATED"


def test_a_draft_quoting_the_target_chapter_never_reaches_a_judge(book: Book) -> None:
    outline = (book.root / "outlines" / "0011.yaml").read_text(encoding="utf-8").replace("chapter: 11", "chapter: 10")
    sentence = next(x for x in book.read_chapter(10).body.split("。") if len(x) > 12 and "\n" not in x)
    leaky = outline.replace("goal: ", f"goal: {sentence}。")
    doc = _set(book, 10, {"A": outline, "C": leaky})
    fake = RoleFake()
    out = run(book, doc, fake, arms=("A", "C"))
    assert not out.ok and out.panels[0].code == "JUDGE_INPUT_LEAK" and fake.calls == []


def test_a_run_of_the_target_chapter_that_is_no_whole_sentence_never_reaches_a_judge(book: Book) -> None:
    """The rule of `muse judge`: no 20-character run of chapter N or later, whatever its sentence boundaries — here
    a 24-character run from inside one sentence, which is no whole sentence the leak guard would know."""
    outline = (book.root / "outlines" / "0011.yaml").read_text(encoding="utf-8").replace("chapter: 11", "chapter: 10")
    sentences = [x.strip() for x in _SENTENCE_END.split(book.read_chapter(10).body)]
    long = next(x for x in sentences if len(x) >= 30 and "\n" not in x)
    run_ = long[3:27]
    assert run_ not in sentences
    leaky = outline.replace("goal: ", f"goal: {run_}")
    doc = _set(book, 10, {"A": outline, "C": leaky})
    fake = RoleFake()
    out = run(book, doc, fake, arms=("A", "C"))
    assert not out.ok and out.panels[0].code == "JUDGE_FUTURE_TEXT" and fake.calls == []


def test_a_draft_edited_after_registration_is_not_judged(book: Book) -> None:
    outline = (book.root / "outlines" / "0011.yaml").read_text(encoding="utf-8").replace("chapter: 11", "chapter: 9")
    doc = _set(book, 9, {"A": outline, "C": outline + "\n"})
    (book.root / "drafts" / "0009-C.yaml").write_text(outline + "\n\n", encoding="utf-8")
    fake = RoleFake()
    out = run(book, doc, fake, arms=("A", "C"))
    codes = {s.arm: s.code for s in out.samples}
    assert codes == {"A": None, "C": "REPLAY_DRAFT_CHANGED"} and out.panels[0].code == "PANEL_NOT_RUN"
    assert fake.calls == []
