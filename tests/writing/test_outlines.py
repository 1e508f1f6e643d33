"""`muse outline show / lint / confirm`: constraint ids, lint against cards and ledger as of N−1, confirmation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from novelmuse.book import Book, find_book, load_config
from novelmuse.errors import InputError
from novelmuse.writing import confirm_outline, lint_outlines, require_confirmed

from ..conftest import SAMPLE_BOOK
from .conftest import write_outline

OUTLINE_3 = """\
version: 2
chapter: 3
scene_type: battle
hard_events:
  - {id: E1, text: 董卓入京, result: 董卓专权}
foreshadows:
  - {op: advance, id: F-sword}
hook: 吕布登场
entities: [刘备, 关羽]
"""


@pytest.fixture
def sample(tmp_path: Path) -> Book:
    """A copy of the sample book (version-1 outlines 1 and 2)."""
    shutil.copytree(SAMPLE_BOOK, tmp_path / "sanguo", ignore=shutil.ignore_patterns(".muse"))
    return find_book(tmp_path / "sanguo")


def test_show_prints_every_item_with_its_constraint_id(muse, sample: Book) -> None:
    r = muse("outline", "show", "2", "--json", "--book", sample.root)
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["constraint_ids"] == [
        "E1",
        "E2",
        "E3",
        "E4",
        "F-resolve:F-reward",
        "F-advance:F-weapons",
        "F-plant:F-outer-troops",
        "hook",
    ]
    assert doc["confirmation"]["state"] == "unconfirmed"
    assert [p["code"] for p in doc["problems"]] == ["OUTLINE_VERSION_1", "OUTLINE_NO_SCENE_TYPE"]
    assert "4 hard event(s) without a result" in doc["problems"][0]["message"]
    text = muse("outline", "show", "2", "--book", sample.root).stdout
    assert "F-resolve:F-reward" in text and "not confirmed" in text


def test_lint_all_sample_outlines_only_warns(muse, sample: Book) -> None:
    r = muse("outline", "lint", "--json", "--book", sample.root)
    assert r.exit_code == 0, r.stdout
    doc = json.loads(r.stdout)
    assert [o["chapter"] for o in doc["outlines"]] == [1, 2, 11] and doc["errors"] == 0
    assert [o["warnings"] for o in doc["outlines"]] == [2, 2, 0]  # version 1 and no scene type; 11 is clean


def test_lint_checks_cards_and_ledger_as_of_the_chapter_before(muse, small: Book) -> None:
    event = "hard_events:\n  - {id: E1, text: 桃园结义}\n"
    write_outline(
        small, 1, f"chapter: 1\n{event}foreshadows:\n  - {{op: plant, id: F-sword, description: 许诺打造兵器}}\n"
    )
    write_outline(small, 2, f"chapter: 2\n{event}foreshadows:\n  - {{op: resolve, id: F-sword}}\n")
    bad = (
        OUTLINE_3.replace("{op: advance, id: F-sword}", "{op: resolve, id: F-sword}\n  - {op: advance, id: F-none}")
        .replace("entities: [刘备, 关羽]", "entities: [刘备, 关羽, 貂蝉, 曹操]")
        .replace("hook:", "new_settings:\n  - {id: S1, kind: entity, text: 新人, entities: [华雄]}\nhook:")
        .replace("entities: [刘备, 关羽, 貂蝉", "entities: [刘备, 关羽, 华雄, 貂蝉")
    )
    plants = "".join(f"  - {{op: plant, id: F-p{i}, description: 伏笔{i}}}\n" for i in range(4))
    write_outline(small, 4, f"chapter: 4\n{event}foreshadows:\n" + plants)
    write_outline(small, 3, bad)
    r = muse("outline", "lint", "--json", "--book", small.root)
    assert r.exit_code == 1
    by_chapter = {o["chapter"]: o for o in json.loads(r.stdout)["outlines"]}
    codes3 = [p["code"] for p in by_chapter[3]["problems"] if p["severity"] == "error"]
    assert sorted(codes3) == ["FORESHADOW_RESOLVED", "FORESHADOW_UNKNOWN", "OUTLINE_UNKNOWN_ENTITY"]
    unknown = next(p for p in by_chapter[3]["problems"] if p["code"] == "OUTLINE_UNKNOWN_ENTITY")
    assert "貂蝉" in unknown["message"] and unknown["where"] == "outlines/0003.yaml:12"  # 华雄 is declared: fine
    assert [p["code"] for p in by_chapter[4]["problems"] if p["severity"] == "error"] == ["FORESHADOW_PLANT_CAP"]
    assert by_chapter[1]["errors"] == by_chapter[2]["errors"] == 0
    one = muse("outline", "lint", "2", "--json", "--book", small.root)
    assert one.exit_code == 0 and [o["chapter"] for o in json.loads(one.stdout)["outlines"]] == [2]


def test_lint_reports_an_unparsable_outline_and_still_lints_the_others(muse, small: Book) -> None:
    write_outline(small, 2, "chapter: 2\nhard_events:\n  - {id: E1, text: x}\n  - {id: E1, text: y}\n")
    write_outline(small, 3, OUTLINE_3.replace("F-sword", "F-x"))
    doc = json.loads(muse("outline", "lint", "--json", "--book", small.root).stdout)
    assert [(o["chapter"], o["problems"][0]["code"]) for o in doc["outlines"] if o["errors"]] == [
        (2, "OUTLINE_DUPLICATE_ID"),
        (3, "FORESHADOW_UNKNOWN"),
    ]
    assert doc["outlines"][0]["problems"][0]["where"].endswith("0002.yaml:4")


def test_dead_character_listed_without_declaration_is_a_warning(small: Book) -> None:
    event = "hard_events:\n  - {id: E1, text: 刘备称帝, result: 群臣拜贺}\n"
    write_outline(
        small, 80, f"version: 2\nchapter: 80\n{event}entities: [刘备, 关羽]\n"
    )  # 关羽: dead from 77 (his card)
    doc = lint_outlines(small)
    dead = [p for p in doc.outlines[0].problems if p.code == "OUTLINE_ENTITY_DEAD"]
    assert len(dead) == 1 and "关羽 is dead as of chapter 79 (since chapter 77)" in dead[0].message
    assert dead[0].where == "outlines/0080.yaml:5" and doc.ok  # a warning: the dead may be remembered
    write_outline(
        small,
        80,
        "version: 2\nchapter: 80\nnew_settings:\n  - {id: S1, kind: state, text: 显圣, entities: [关公]}\n"
        "entities: [刘备, 关羽]\n",
    )
    assert not [p for p in lint_outlines(small).outlines[0].problems if p.code == "OUTLINE_ENTITY_DEAD"]


def test_confirm_then_edit_is_not_confirmed_naming_both_sha256(muse, sample: Book) -> None:
    with pytest.raises(InputError) as ei:
        require_confirmed(sample, 2)
    assert ei.value.code == "OUTLINE_NOT_CONFIRMED" and "never confirmed" in ei.value.what
    r = muse("outline", "confirm", "2", "--json", "--book", sample.root)
    assert r.exit_code == 0 and json.loads(r.stdout)["newly_confirmed"] is True
    confirmed = json.loads(r.stdout)["confirmation"]["current_sha256"]
    assert require_confirmed(sample, 2).sha256 == confirmed
    again = muse("outline", "confirm", "2", "--json", "--book", sample.root)
    assert json.loads(again.stdout)["newly_confirmed"] is False
    path = sample.outlines_dir / "0002.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "# 作者又改了一处\n", encoding="utf-8")
    with pytest.raises(InputError) as ei:
        require_confirmed(sample, 2)
    err = ei.value
    assert err.code == "OUTLINE_NOT_CONFIRMED" and err.exit_code == 2
    assert confirmed in err.what  # names the confirmed sha256 …
    from novelmuse.text import sha256_hex

    assert sha256_hex(path.read_bytes()) in err.what  # … and the changed one
    assert "changed" in muse("outline", "show", "2", "--book", sample.root).stdout


def test_confirm_refuses_an_outline_with_lint_errors(muse, small: Book) -> None:
    write_outline(small, 3, OUTLINE_3)  # advances F-sword, which nobody planted
    r = muse("outline", "confirm", "3", "--book", small.root)
    assert r.exit_code == 2 and r.stderr.startswith("error[OUTLINE_LINT_ERRORS]") and "FORESHADOW_UNKNOWN" in r.stderr
    with pytest.raises(InputError):
        confirm_outline(small, 3)
    assert small.db.execute("SELECT count(*) FROM outline_confirmations").fetchone()[0] == 0
    missing = muse("outline", "confirm", "9", "--book", small.root)
    assert missing.exit_code == 2 and "OUTLINE_NOT_FOUND" in missing.stderr


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("prior_chapters = 5", "above the limit of 4"),
        ("evidence_rounds = 4", "above the limit of 3"),
        ("evidence_fraction = 0.31", "above the limit of 0.3"),
        ("repair_rounds = 3", "above the limit of 2"),
        ("prior_chapters = true", "whole number"),
        ('retrieval_chars = "6000"', "whole number"),
        ("evidence_fraction = nan", "finite number"),
        ('fact_cards = "sometimes"', "fact_cards"),
        ("context = 1", "unknown key"),
    ],
)
def test_writing_config_caps_are_seed_limits(tmp_path: Path, line: str, needle: str) -> None:
    (tmp_path / "book.toml").write_text(f"[writing]\n{line}\n", encoding="utf-8")
    with pytest.raises(InputError) as ei:
        load_config(tmp_path / "book.toml", user_config=tmp_path / "none.toml")
    assert ei.value.code == "CONFIG_INVALID" and needle in ei.value.what, ei.value.what
    (tmp_path / "book.toml").write_text("[writing]\nprior_chapters = 2\nevidence_fraction = 0\n", encoding="utf-8")
    cfg = load_config(tmp_path / "book.toml", user_config=tmp_path / "none.toml").writing
    assert (cfg.prior_chapters, cfg.evidence_fraction, cfg.repair_rounds) == (2, 0.0, 2)


def test_an_outline_without_a_hard_event_reads_but_cannot_be_confirmed(muse, sample: Book) -> None:
    """Nothing in it would bind the writer, and the detector and the gates would measure nothing."""
    write_outline(sample, 3, OUTLINE_3.replace("hard_events:\n  - {id: E1, text: 董卓入京, result: 董卓专权}\n", ""))
    shown = muse("outline", "show", "3", "--json", "--book", sample.root)
    assert shown.exit_code == 0, shown.stderr  # the author can still read it
    lint = muse("outline", "lint", "3", "--json", "--book", sample.root)
    assert lint.exit_code == 1
    (problem,) = [p for p in json.loads(lint.stdout)["outlines"][0]["problems"] if p["code"] == "OUTLINE_NO_HARD_EVENT"]
    assert problem["severity"] == "error"
    confirm = muse("outline", "confirm", "3", "--book", sample.root)
    assert confirm.exit_code == 2 and confirm.stderr.startswith("error[OUTLINE_LINT_ERRORS]")
    assert "OUTLINE_NO_HARD_EVENT" in confirm.stderr
    with pytest.raises(InputError):
        require_confirmed(sample, 3)


def test_range_forms_confirm_and_lint_a_stretch_in_one_process(muse, sample: Book) -> None:
    """`muse outline confirm 1-3` confirms every outline of the range that can be, names those that cannot (missing,
    lint errors) and exits 2; `muse outline lint 1-2` lints those; `muse review 3-4` is --range 3-4."""
    r = muse("outline", "confirm", "1-3", "--json", "--book", sample.root)
    doc = json.loads(r.stdout)
    assert r.exit_code == 2 and [c["chapter"] for c in doc["confirmed"]] == [1, 2]
    assert [e["code"] for e in doc["refused"]] == ["OUTLINE_NOT_FOUND"] and "0003" in doc["refused"][0]["where"]
    assert all(
        json.loads(muse("outline", "show", str(n), "--json", "--book", sample.root).stdout)["confirmation"]["state"]
        == "confirmed"
        for n in (1, 2)
    )
    human = muse("outline", "confirm", "1-3", "--book", sample.root)
    assert human.exit_code == 2 and "error[OUTLINE_NOT_FOUND]" in human.stderr
    lint = json.loads(muse("outline", "lint", "1-2", "--json", "--book", sample.root).stdout)
    assert [o["chapter"] for o in lint["outlines"]] == [1, 2]
    assert muse("outline", "lint", "5-9", "--book", sample.root).exit_code == 2  # no outline there
    assert muse("outline", "confirm", "3-1", "--book", sample.root).exit_code == 2  # an empty range
    review = muse("review", "3-4", "--json", "--book", sample.root)
    assert [c["chapter"] for c in json.loads(review.stdout)["chapters"]] == [3, 4]
