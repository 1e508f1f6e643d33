"""`muse context N [--arm] [--json]` and `muse context verify N` on small books: confirmation, the memory's
freshness, budgets (protected over budget, random budgets never exceeded, monotone cuts), the stored manifest."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novelmuse.book import Book, WritingConfig
from novelmuse.errors import InputError
from novelmuse.memory import store_fact_card
from novelmuse.roles.extractor import FactCardOutput
from novelmuse.text import count_chars, sha256_hex
from novelmuse.writing import (
    MIN_EXCERPT_CHARS,
    ContextBuild,
    build_context,
    confirm_outline,
    evidence_reserve,
    fit_excerpts,
    keep_suffix,
    prefix_within,
)

from .conftest import write_outline

OUTLINE = """\
version: 2
chapter: {n}
scene_type: battle
hard_events:
  - {{id: E1, text: 张飞怒鞭督邮, result: 督邮受辱}}
hook: 刘备弃官
entities: [刘备, 关羽, 张飞]
"""


def _outline(book: Book, n: int, *, confirm: bool = True) -> None:
    write_outline(book, n, OUTLINE.format(n=n))
    if confirm:
        confirm_outline(book, n)


def _with(book: Book, **writing: object) -> Book:
    """The same book with other [writing] settings (sharing its database connection)."""
    merged = WritingConfig.model_validate({**book.config.writing.model_dump(), **writing})
    cfg = book.config.model_copy(update={"writing": merged})
    other = Book(book.root, cfg)
    other.__dict__["db"] = book.db
    return other


def test_context_needs_a_confirmed_unchanged_outline(muse, small: Book) -> None:
    _outline(small, 3, confirm=False)
    r = muse("context", "3", "--book", small.root)
    assert r.exit_code == 2 and r.stderr.startswith("error[OUTLINE_NOT_CONFIRMED]") and "never confirmed" in r.stderr
    assert muse("outline", "confirm", "3", "--book", small.root).exit_code == 0
    ok = muse("context", "3", "--json", "--book", small.root)
    assert ok.exit_code == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["ok"] and doc["arm"] == "A" and doc["manifest"]["outline"]["constraint_ids"] == ["E1", "R1", "hook"]
    path = small.outlines_dir / "0003.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("督邮受辱", "督邮逃走"), encoding="utf-8")
    edited = muse("context", "3", "--book", small.root)
    assert edited.exit_code == 2 and "OUTLINE_NOT_CONFIRMED" in edited.stderr
    assert sha256_hex(path.read_bytes()) in edited.stderr and doc["manifest"]["outline"]["sha256"] in edited.stderr
    missing = muse("context", "5", "--book", small.root)
    assert missing.exit_code == 2 and "OUTLINE_NOT_FOUND" in missing.stderr


def test_chapter_2_records_one_prior_chapter_and_chapter_1_none(small: Book) -> None:
    _outline(small, 2)
    _outline(small, 1)
    two = build_context(small, 2)
    assert [p.chapter for p in two.manifest.prior_chapters] == [1] and len(two.context.prior_chapters) == 1
    one = build_context(small, 1)
    assert one.manifest.prior_chapters == [] and one.context.prior_chapters == []
    assert one.manifest.spans == []  # nothing earlier to read back
    assert all(not e.text for e in one.context.readback + one.context.style)
    for arm in ("A", "B"):  # generic retrieval with nothing before: no index needed, nothing retrieved
        assert build_context(small, 1, arm=arm).manifest.spans == []  # type: ignore[arg-type]
    assert build_context(small, 2, arm="A").manifest.frame_sha256 == two.manifest.frame_sha256


def _fact_card(small: Book, chapter: int) -> None:
    out = FactCardOutput(events=[], foreshadows=[], relations=[], states=[])
    store_fact_card(small.db, small.read_chapter(chapter), out, prompt_sha256="p", model="m", receipt_id="R1")


def test_stale_or_missing_fact_cards_are_context_memory_stale(small: Book) -> None:
    _outline(small, 4)
    strict = _with(small, fact_cards="required")
    with pytest.raises(InputError) as ei:
        build_context(strict, 4)
    assert ei.value.code == "CONTEXT_MEMORY_STALE" and "chapter(s) 1–3 have no fact card" in ei.value.what
    for n in (1, 2, 3):
        _fact_card(small, n)
    built = build_context(strict, 4)
    assert built.manifest.facts_missing == [] and [f.chapter for f in built.manifest.fact_cards] == [1, 2, 3]
    assert {f.receipt_id for f in built.manifest.fact_cards} == {"R1"}
    two = small.chapters_dir / "0002.md"
    two.write_text(two.read_text(encoding="utf-8") + "\n作者补写的一段。\n", encoding="utf-8")
    for book in (small, strict):  # stale is never allowed, whatever fact_cards says
        with pytest.raises(InputError) as ei:
            build_context(book, 4)
        assert ei.value.code == "CONTEXT_MEMORY_STALE" and "chapter(s) 2 changed" in ei.value.what
    _outline(small, 2)
    assert build_context(strict, 2).manifest.fact_cards[0].chapter == 1  # only chapters before N matter


def test_optional_fact_cards_list_the_chapters_written_from_cards_alone(small: Book) -> None:
    _outline(small, 4)
    built = build_context(small, 4)
    assert built.manifest.facts_missing == [1, 2, 3] and built.manifest.config["fact_cards"] == "optional"


def test_protected_over_budget_is_an_error_and_nothing_is_cut_or_stored(muse, small: Book) -> None:
    _outline(small, 3)
    tight = _with(small, context_chars=300, retrieval_chars=200)
    with pytest.raises(InputError) as ei:
        build_context(tight, 3)
    err = ei.value
    assert err.code == "CONTEXT_OVER_BUDGET" and err.exit_code == 2 and "nothing was cut" in err.what
    toml = small.root / "book.toml"
    tight_toml = 'fact_cards = "optional"\ncontext_chars = 300\nretrieval_chars = 200'
    toml.write_text(toml.read_text(encoding="utf-8").replace('fact_cards = "optional"', tight_toml), encoding="utf-8")
    r = muse("context", "3", "--json", "--book", small.root)
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "CONTEXT_OVER_BUDGET"
    assert not (small.state_dir / "manifests").exists()
    assert small.db.execute("SELECT count(*) FROM context_builds").fetchone()[0] == 0


def test_manifest_is_stored_content_addressed_and_verify_rebuilds_it(muse, small: Book) -> None:
    _outline(small, 3)
    doc = json.loads(muse("context", "3", "--json", "--book", small.root).stdout)
    sha = doc["manifest_sha256"]
    path = small.root / doc["manifest_path"]
    assert path == small.state_dir / "manifests" / f"{sha}.json"
    assert sha256_hex(path.read_bytes()) == sha and json.loads(path.read_bytes()) == doc["manifest"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert "created" not in path.read_text(encoding="utf-8") and "_at" not in path.read_text(encoding="utf-8")
    row = small.db.execute("SELECT body FROM context_manifests WHERE sha256 = ?", (sha,)).fetchone()
    assert row[0].encode("utf-8") == path.read_bytes()
    ok = muse("context", "verify", "3", "--json", "--book", small.root)
    assert ok.exit_code == 0 and json.loads(ok.stdout)["ok"] is True
    one = small.chapters_dir / "0001.md"  # in chapter 3's window
    one.write_text(one.read_text(encoding="utf-8").replace("玄德", "刘玄德", 1), encoding="utf-8")
    changed = muse("context", "verify", "3", "--json", "--book", small.root)
    assert changed.exit_code == 1
    paths = [d["path"] for d in json.loads(changed.stdout)["differences"]]
    assert "prior_chapters[0].sha256" in paths and "chapters_before[0].sha256" in paths
    assert "differs" in muse("context", "verify", "3", "--book", small.root).stdout
    one.write_text(one.read_text(encoding="utf-8").replace("刘玄德", "玄德", 1), encoding="utf-8")
    assert muse("context", "verify", "3", "--book", small.root).exit_code == 0
    path.write_bytes(path.read_bytes() + b" ")
    tampered = json.loads(muse("context", "verify", "3", "--json", "--book", small.root).stdout)
    assert tampered["ok"] is False and tampered["file_ok"] is False and tampered["differences"] == []
    never = muse("context", "verify", "3", "--arm", "C", "--book", small.root)  # built with arm A, the writer's
    assert never.exit_code == 2 and "CONTEXT_NOT_BUILT" in never.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["context", "3", "--arm", "D"], "is not an arm"),
        (["context", "three"], "neither a chapter number"),
        (["context", "verify"], "needs a chapter number"),
        (["context", "3", "4"], "unexpected argument"),
    ],
)
def test_context_usage_errors(muse, small: Book, args: list[str], needle: str) -> None:
    r = muse(*args, "--book", small.root)
    assert r.exit_code == 2 and needle in r.stderr and r.stderr.count("\n") == 1


def test_the_sample_books_chapter_11_builds_for_every_arm(muse, tmp_path: Path) -> None:

    from ..conftest import SAMPLE_BOOK

    shutil.copytree(SAMPLE_BOOK, tmp_path / "s", ignore=shutil.ignore_patterns(".muse"))
    assert muse("outline", "confirm", "11", "--book", tmp_path / "s").exit_code == 0
    docs = {}
    for arm in ("C", "A", "B"):
        r = muse("context", "11", "--arm", arm, "--json", "--book", tmp_path / "s")
        assert r.exit_code == 0, r.stderr
        docs[arm] = json.loads(r.stdout)
    assert docs["A"]["manifest"]["frame_sha256"] == docs["C"]["manifest"]["frame_sha256"]
    assert docs["C"]["manifest"]["facts_missing"] == list(range(1, 11))
    assert [p["chapter"] for p in docs["C"]["manifest"]["prior_chapters"]] == [7, 8, 9, 10]
    facts = [f["text"] for f in docs["C"]["context"]["facts"]]
    assert "太史慈：本章新登场" in facts and any(f.startswith("伏笔「F-weapons」") for f in facts)


def test_formal_settings_are_facts_with_their_pointers_for_both_arms(muse, tmp_path: Path) -> None:
    """正式设定 is the first source of facts: a plan/settings line naming a character of the chapter reaches the
    writer (basis 正式设定, never the file name), its pointer (file:line) in the manifest; the same for A and C;
    a line naming no one of the chapter stays out; lines over the cap are counted, never silently dropped."""
    from ..conftest import SAMPLE_BOOK

    root = tmp_path / "s"
    shutil.copytree(SAMPLE_BOOK, root, ignore=shutil.ignore_patterns(".muse"))
    assert muse("outline", "confirm", "11", "--book", root).exit_code == 0
    docs = {arm: json.loads(muse("context", "11", "--arm", arm, "--json", "--book", root).stdout) for arm in "AC"}
    for doc in docs.values():
        facts = doc["context"]["facts"]
        liu = next(f for f in facts if f["text"].startswith("设定：刘备：谦恭仁厚"))
        assert liu["basis"] == "正式设定" and "plan/" not in json.dumps(facts, ensure_ascii=False)
        assert not any("孔融" in f["text"] for f in facts)  # no character of chapter 11's plan
        refs = doc["manifest"]["facts"]
        pointer = refs[[f["text"] for f in facts].index(liu["text"])]["pointer"]
        assert pointer == {**pointer, "kind": "author", "file": "plan/settings/人物言行.md", "line": 3}
        assert "settings_omitted" not in doc["manifest"]
    assert docs["A"]["context"]["facts"] == docs["C"]["context"]["facts"]
    many = "".join(f"- 刘备：第{i}条设定，{'仁' * 80}。\n" for i in range(40))
    (root / "plan" / "settings" / "zz-长设定.md").write_text(many, encoding="utf-8")
    capped = json.loads(muse("context", "11", "--json", "--book", root).stdout)
    kept = [f for f in capped["context"]["facts"] if f["text"].startswith("设定：")]
    assert sum(count_chars(f["text"]) for f in kept) <= 1200 + 3 * len(kept)
    assert capped["manifest"]["settings_omitted"] > 0


def test_terminal_output_names_blocks_window_facts_and_spans(muse, small: Book) -> None:
    _outline(small, 5)
    out = muse("context", "5", "--book", small.root).stdout
    for needle in ("manifest", "prior_chapters", "retrieval", "continuous window", "刘备的状态", "selected raw text"):
        assert needle in out, needle


def test_a_card_value_sourced_in_the_future_is_withheld(small: Book) -> None:
    card = small.cards_dir / "zhang-fei.yaml"
    card.write_text(
        card.read_text(encoding="utf-8").replace("relations:", "").rstrip()
        + "\n  weapon:\n    - {value: 丈八蛇矛, from: 1, source: {chapter: 5, start: 0, end: 4}}\n",
        encoding="utf-8",
    )
    _outline(small, 4)
    built = build_context(small, 4)
    assert [(w.card_id, w.key, w.source_chapter) for w in built.manifest.withheld] == [("zhang-fei", "attr:weapon", 5)]
    assert not any("丈八蛇矛" in f.text for f in built.context.facts)
    _outline(small, 6)
    later = build_context(small, 6)
    assert any(f.text == "张飞的兵器：丈八蛇矛（自第1回起）" for f in later.context.facts)


@st.composite
def _budgets(draw: st.DrawFn) -> tuple[dict[str, object], dict[str, object]]:
    context = draw(st.integers(800, 30_000))
    retrieval = draw(st.integers(0, 4_000))
    prior = draw(st.integers(0, 4))
    fraction = draw(st.sampled_from([0.0, 0.1, 0.3]))
    small = {"context_chars": context, "retrieval_chars": retrieval, "prior_chapters": prior}
    small |= {"evidence_fraction": fraction, "fact_cards": "optional"}
    large = small | {"context_chars": context + draw(st.integers(0, 8_000))}
    large |= {"retrieval_chars": retrieval + draw(st.integers(0, 2_000))}
    return small, large


def _kept(build: ContextBuild) -> tuple[int, dict[int, int], int, dict[str, tuple[int, int]]]:
    """(prior budget, kept start per window chapter, retrieval budget, kept span per slot)."""
    blocks = {b.name: b.budget for b in build.manifest.blocks}
    prior = {p.chapter: p.kept_start for p in build.manifest.prior_chapters}
    spans = {s.slot: (s.start, s.end) for s in build.manifest.spans}
    return blocks["prior_chapters"], prior, blocks["retrieval"], spans


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_budgets())
def test_random_budgets_are_never_exceeded_and_cuts_are_monotone(
    small: Book, budgets: tuple[dict[str, object], dict[str, object]]
) -> None:
    if not small.outlines_dir.joinpath("0006.yaml").exists():
        _outline(small, 6)
    builds: list[ContextBuild] = []
    for writing in budgets:
        book = _with(small, **writing)
        cfg = book.config.writing
        try:
            built = build_context(book, 6)
        except InputError as exc:
            assert exc.code == "CONTEXT_OVER_BUDGET"
            continue
        blocks = {b.name: b for b in built.manifest.blocks}
        assert blocks["evidence_reserve"].budget == evidence_reserve(cfg.evidence_fraction, cfg.retrieval_chars)
        assert sum(b.used for b in blocks.values()) + blocks["evidence_reserve"].budget <= cfg.context_chars
        assert all(b.used <= b.budget for b in blocks.values())
        counted = sum(count_chars(p.text) for p in built.context.prior_chapters)
        assert counted == blocks["prior_chapters"].used
        excerpts = sum(count_chars(e.text) for e in built.context.readback + built.context.style)
        assert excerpts == blocks["retrieval"].used <= cfg.retrieval_chars
        builds.append(built)
    if len(builds) < 2:
        return
    (pb_a, prior_a, rb_a, spans_a), (pb_b, prior_b, rb_b, spans_b) = _kept(builds[0]), _kept(builds[1])
    # each reducible block is cut on its own budget, monotonically: more budget keeps a superset
    (p_lo, p_hi) = (prior_a, prior_b) if pb_a <= pb_b else (prior_b, prior_a)
    for chapter, start in p_hi.items():
        assert p_lo[chapter] >= start
    (s_lo, s_hi) = (spans_a, spans_b) if rb_a <= rb_b else (spans_b, spans_a)
    for slot, (start, end) in s_lo.items():
        assert slot in s_hi and s_hi[slot][0] == start and s_hi[slot][1] >= end


def _naive_suffix(counts: list[int], budget: int) -> int:
    for i in range(len(counts) + 1):
        if sum(counts[i:]) <= budget:
            return i
    raise AssertionError


@given(st.lists(st.integers(0, 50), max_size=12), st.integers(0, 300))
def test_keep_suffix_is_the_longest_fitting_suffix(counts: list[int], budget: int) -> None:
    assert keep_suffix(counts, budget) == _naive_suffix(counts, budget)


_chars = st.text(alphabet="甲乙丙丁。， \n\u3000", max_size=40)


@given(
    st.lists(st.text(alphabet="甲乙丙丁。， \n\u3000", max_size=120), max_size=8),
    st.integers(0, 400),
    st.integers(0, 400),
)
def test_fit_excerpts_never_exceeds_its_budget_and_is_monotone(texts: list[str], b1: int, b2: int) -> None:
    lo, hi = sorted((b1, b2))
    kept_lo, kept_hi = fit_excerpts(texts, lo), fit_excerpts(texts, hi)
    for kept, budget in ((kept_lo, lo), (kept_hi, hi)):
        assert sum(count_chars(t[:k]) for t, k in zip(texts, kept, strict=True)) <= budget
        trimmed = [i for i, (t, k) in enumerate(zip(texts, kept, strict=True)) if 0 < k < len(t)]
        assert len(trimmed) <= 1  # at most one excerpt is trimmed: the first that did not fit …
        assert all(count_chars(texts[i][: kept[i]]) >= MIN_EXCERPT_CHARS for i in trimmed)  # … never to a crumb
    assert all(a <= b for a, b in zip(kept_lo, kept_hi, strict=True))  # monotone


@given(_chars, st.integers(0, 50))
def test_prefix_within_counts_like_count_chars(text: str, budget: int) -> None:
    cut = prefix_within(text, budget)
    assert count_chars(text[:cut]) <= budget
    assert cut == len(text) or count_chars(text[: cut + 1]) > budget
