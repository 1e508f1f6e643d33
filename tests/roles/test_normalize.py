"""`muse rules normalize`: the normalizer contract, the write that never loses the author's text, the CLI."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import string
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import Book, find_book
from novelmuse.llm import ModelCallFailed, ModelSession
from novelmuse.roles.normalizer import (
    LineOut,
    NormalizeReport,
    NormalizerOutput,
    ProposedRule,
    RuleOut,
    apply_proposals,
    normalizer_contract,
    render_rule,
    round_trips,
    run_normalize,
)
from novelmuse.roles.normalizer import _normalize as normalize_module
from novelmuse.rules import parse_rules
from tests.conftest import muse_subprocess

RULES = """# 本书规则
禁止:后宫、系统面板
疲劳词:不由得≤2
不要写"眼底闪过"这种词
尽量多写对话，节奏要快
这是给自己的备忘，与规则无关
"""
# line 4, 5, 6 are unparsed
LINES = {4: '不要写"眼底闪过"这种词', 5: "尽量多写对话，节奏要快", 6: "这是给自己的备忘，与规则无关"}

GOOD = {
    "proposals": [
        {"line": 4, "rules": [{"kind": "forbidden", "phrase": "眼底闪过", "limit": None}], "note": "禁用词"},
        {
            "line": 5,
            "rules": [{"kind": "preference", "phrase": "尽量多写对话，节奏要快", "limit": None}],
            "note": "偏好",
        },
        {"line": 6, "rules": [], "note": "不是规则"},
    ]
}
NOT_VERBATIM = {
    "proposals": [
        {"line": 4, "rules": [{"kind": "forbidden", "phrase": "眼中闪过", "limit": None}], "note": "改了字"},
        {"line": 5, "rules": [], "note": ""},
        {"line": 6, "rules": [], "note": ""},
    ]
}


def out(doc: dict[str, Any]) -> NormalizerOutput:
    return NormalizerOutput.model_validate(doc)


def codes(doc: dict[str, Any], lines: dict[int, str] = LINES) -> list[str]:
    return [v.code for v in normalizer_contract(lines)(out(doc))]


# ── the contract ────────────────────────────────────────────────────────────────────────────────


def test_good_proposal_passes_the_contract() -> None:
    assert codes(GOOD) == []


def test_a_phrase_not_verbatim_in_its_line_is_rejected_with_the_line_in_the_detail() -> None:
    (v,) = normalizer_contract(LINES)(out(NOT_VERBATIM))
    assert v.code == "CONTRACT_PHRASE_NOT_IN_LINE"
    assert "line 4" in v.detail and "眼中闪过" in v.detail


def test_a_phrase_from_another_line_is_not_verbatim_in_this_one() -> None:
    doc = {
        "proposals": [
            {"line": 4, "rules": [{"kind": "forbidden", "phrase": "对话", "limit": None}], "note": ""},
            {"line": 5, "rules": [], "note": ""},
            {"line": 6, "rules": [], "note": ""},
        ]
    }
    assert codes(doc) == ["CONTRACT_PHRASE_NOT_IN_LINE"]


def test_every_line_answered_exactly_once() -> None:
    doc = {"proposals": [*GOOD["proposals"][:2], {"line": 9, "rules": [], "note": ""}, GOOD["proposals"][0]]}
    assert sorted(codes(doc)) == ["CONTRACT_LINE_DUPLICATE", "CONTRACT_LINE_MISSING", "CONTRACT_LINE_UNKNOWN"]


def test_each_missing_line_is_its_own_violation_so_diagnostics_count_them() -> None:
    doc = {"proposals": [GOOD["proposals"][0]]}  # lines 5 and 6 unanswered
    violations = normalizer_contract(LINES)(out(doc))
    assert [v.code for v in violations] == ["CONTRACT_LINE_MISSING", "CONTRACT_LINE_MISSING"]
    assert ["line 5" in violations[0].detail, "line 6" in violations[1].detail] == [True, True]


@pytest.mark.parametrize(
    ("rule", "code"),
    [
        ({"kind": "fatigue", "phrase": "眼底闪过", "limit": None}, "CONTRACT_RULE_SHAPE"),
        ({"kind": "fatigue", "phrase": "眼底闪过", "limit": -1}, "CONTRACT_RULE_SHAPE"),
        ({"kind": "forbidden", "phrase": "眼底闪过", "limit": 2}, "CONTRACT_RULE_SHAPE"),
        ({"kind": "forbidden", "phrase": "  ", "limit": None}, "CONTRACT_PHRASE_EMPTY"),
        ({"kind": "forbidden", "phrase": '"眼底闪过"', "limit": None}, None),
        ({"kind": "forbidden", "phrase": "不要写", "limit": None}, None),
    ],
)
def test_rule_shapes(rule: dict[str, Any], code: str | None) -> None:
    doc = {
        "proposals": [
            {"line": 4, "rules": [rule], "note": ""},
            {"line": 5, "rules": [], "note": ""},
            {"line": 6, "rules": [], "note": ""},
        ]
    }
    assert codes(doc) == ([code] if code else [])


def test_a_phrase_with_a_separator_is_unparseable() -> None:
    lines = {1: "禁用 后宫、系统面板 这两个词"}
    doc = {"proposals": [{"line": 1, "rules": [{"kind": "forbidden", "phrase": "后宫、系统面板"}], "note": ""}]}
    assert codes(doc, lines) == ["CONTRACT_RULE_UNPARSEABLE"]
    doc_ok = {
        "proposals": [
            {
                "line": 1,
                "rules": [{"kind": "forbidden", "phrase": "后宫"}, {"kind": "forbidden", "phrase": "系统面板"}],
                "note": "",
            }
        ]
    }
    assert codes(doc_ok, lines) == []


def test_render_rule_uses_the_deterministic_syntax() -> None:
    assert render_rule(ProposedRule(kind="forbidden", phrase="后宫")) == "禁止:后宫"
    assert render_rule(ProposedRule(kind="fatigue", phrase="不由得", limit=2)) == "疲劳词:不由得≤2"
    assert render_rule(ProposedRule(kind="preference", phrase="多对话,快节奏")) == "偏好:多对话,快节奏"


_ALPHABET = ["后", "宫", "a", " ", "\u3000", "、", "，", ",", "；", ";", "#", "＃", "≤", "<", "=", "\n", "e", "\u0301"]
_SEPARATORS = set("、，,；;")
_OPS = ("<=", "＜＝", "≤", "≦", "⩽")


def _oracle(kind: str, phrase: str) -> bool:
    """When a rule's rendered line parses back to itself, restated plainly from the parser's documentation."""
    if not phrase or phrase != phrase.strip() or "\n" in phrase or "#" in phrase or "＃" in phrase:
        return False
    if kind == "preference":
        return True
    if any(c in _SEPARATORS or c.isspace() for c in phrase) or any(op in phrase for op in _OPS):
        return False
    return unicodedata.normalize("NFC", phrase) == phrase


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["forbidden", "fatigue", "preference"]),
    st.lists(st.sampled_from(_ALPHABET), min_size=0, max_size=6).map("".join),
    st.integers(0, 50),
)
def test_round_trip_agrees_with_a_plain_oracle(kind: str, phrase: str, limit: int) -> None:
    rule = ProposedRule.model_validate({"kind": kind, "phrase": phrase, "limit": limit if kind == "fatigue" else None})
    assert round_trips(rule) == _oracle(kind, phrase)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=string.ascii_letters + "后宫眼底闪过 ，", min_size=1, max_size=12), st.data())
def test_every_substring_phrase_passes_verbatim_and_others_do_not(line: str, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(line) - 1))
    j = data.draw(st.integers(i + 1, len(line)))
    phrase = data.draw(st.sampled_from([line[i:j], line[i:j] + "宫宫宫宫宫宫宫宫宫宫宫宫宫"]))
    doc = {"proposals": [{"line": 1, "rules": [{"kind": "preference", "phrase": phrase}], "note": ""}]}
    got = codes(doc, {1: line})
    assert ("CONTRACT_PHRASE_NOT_IN_LINE" in got) == (phrase not in line)


# ── writing: never lose the author's text ───────────────────────────────────────────────────────


def _line_out(n: int, original: str, *rules: tuple[str, str, int | None], present: bool = False) -> LineOut:
    return LineOut(
        line=n,
        original=original,
        note="",
        rules=[
            RuleOut(
                kind=k,  # type: ignore[arg-type]
                phrase=p,
                limit=lim,
                rendered=render_rule(ProposedRule.model_validate({"kind": k, "phrase": p, "limit": lim})),
                already_present=present,
            )
            for k, p, lim in rules
        ],
    )


def test_apply_keeps_the_original_as_a_comment_above_its_rules() -> None:
    text = "禁止:后宫\n别用眼底闪过，也别用不由得超过两次\n备忘\n"
    new, inserted = apply_proposals(
        text,
        [_line_out(2, "别用眼底闪过，也别用不由得超过两次", ("forbidden", "眼底闪过", None), ("fatigue", "不由得", 2))],
    )
    assert (
        new == "禁止:后宫\n# 归一化前原文: 别用眼底闪过，也别用不由得超过两次\n禁止:眼底闪过\n疲劳词:不由得≤2\n备忘\n"
    )
    assert inserted == [3, 4]
    parsed = parse_rules(new)
    assert [r.phrase for r in parsed.forbidden] == ["后宫", "眼底闪过"]
    assert [(r.phrase, r.limit) for r in parsed.fatigue] == [("不由得", 2)]
    assert [u.text for u in parsed.unparsed] == ["备忘"]


def test_apply_keeps_crlf_and_skips_rules_already_present() -> None:
    text = "禁止:后宫\r\n后宫两个字不能出现\r\n"
    new, inserted = apply_proposals(
        text, [_line_out(2, "后宫两个字不能出现", ("forbidden", "后宫", None), present=True)]
    )
    # nothing new to write, but the line is commented out: what it asks is enforced already (it parses as no rule
    # no more, so `muse check` is complete)
    assert (new, inserted) == ("禁止:后宫\r\n# 归一化前原文: 后宫两个字不能出现\r\n", [])
    new, inserted = apply_proposals(text, [_line_out(2, "后宫两个字不能出现", ("forbidden", "两个字", None))])
    assert new == "禁止:后宫\r\n# 归一化前原文: 后宫两个字不能出现\r\n禁止:两个字\r\n"


# ── the service with the scripted provider ──────────────────────────────────────────────────────


def make_book(root: Path, script: dict[str, Any] | None, rules: str | None = RULES, extra: str = "") -> Book:
    root.mkdir(parents=True, exist_ok=True)
    toml = '[book]\ntitle = "测试"\n'
    if script is not None:
        (root / "script.yaml").write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
        toml += (
            '\n[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n\n[roles]\ndefault = "s:scripted-model-1"\n'
        )
    (root / "book.toml").write_text(toml + extra, encoding="utf-8")
    if rules is not None:
        (root / "rules.txt").write_text(rules, encoding="utf-8")
    return find_book(root)


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "no-user-config.toml"))


def normalize(book: Book, *, write: bool) -> NormalizeReport:
    """`run_normalize` in a model session of its own, as `muse rules normalize` runs it."""

    async def go() -> NormalizeReport:
        async with ModelSession.open(book, run_kind="rules-normalize") as session:
            return await run_normalize(book, session, write=write)

    return asyncio.run(go())


def receipts(book: Book) -> list[tuple[int, str, str | None]]:
    conn = sqlite3.connect(book.db_path)
    try:
        return conn.execute("SELECT attempt, outcome, error_code FROM receipts ORDER BY call_id, attempt").fetchall()
    finally:
        conn.close()


def test_no_model_configured_is_skipped_and_writes_nothing(tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", None)
    report = normalize(book, write=True)
    assert (report.status, report.skip_reason) == ("skipped", "no model configured")
    assert report.unparsed_lines == 3 and not report.written
    assert book.rules_path.read_text(encoding="utf-8") == RULES
    assert not book.db_path.exists()


def test_nothing_to_normalise_is_skipped_without_a_call(tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", {"normalizer": []}, rules="禁止:后宫\n")
    report = normalize(book, write=False)
    assert (report.status, report.skip_reason) == ("skipped", "no unparsed lines")
    book2 = make_book(tmp_path / "c", {"normalizer": []}, rules=None)
    assert normalize(book2, write=False).skip_reason == "no rules.txt"


def test_proposals_are_shown_but_not_written_without_write(tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", {"normalizer": [{"output": GOOD}]})
    report = normalize(book, write=False)
    assert report.status == "passed" and not report.written and report.attempts == 1
    assert [(p.line, [r.rendered for r in p.rules]) for p in report.proposals] == [
        (4, ["禁止:眼底闪过"]),
        (5, ["偏好:尽量多写对话，节奏要快"]),
        (6, []),
    ]
    assert book.rules_path.read_text(encoding="utf-8") == RULES
    assert receipts(book) == [(1, "ok", None)]


def test_write_appends_rules_keeps_the_original_lines_and_reparses(tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", {"normalizer": [{"output": GOOD}]})
    report = normalize(book, write=True)
    assert report.written and report.written_rules == 2
    text = book.rules_path.read_text(encoding="utf-8")
    for original in LINES.values():
        assert original in text  # nothing of the author's text is lost
    assert '# 归一化前原文: 不要写"眼底闪过"这种词\n禁止:眼底闪过\n' in text
    parsed = parse_rules(text)
    assert "眼底闪过" in [r.phrase for r in parsed.forbidden]
    assert "尽量多写对话，节奏要快" in [p.text for p in parsed.preferences]
    # the line the model found no rule in is kept as a comment, marked as such: no line is left unenforced
    assert parsed.unparsed == () and f"# 归一化前原文(不是规则): {LINES[6]}\n" in text
    assert not parsed.errors
    assert report.new_rules_sha256 is not None


def test_write_applies_exactly_what_was_shown_without_asking_again(tmp_path: Path, muse: Any) -> None:
    """--write confirms the proposals the author reviewed: a model asked again could answer differently."""
    book = make_book(tmp_path / "b", {"normalizer": [{"output": GOOD}]})
    shown = normalize(book, write=False)
    other = {"proposals": [{"line": n, "rules": [], "note": "changed its mind"} for n in LINES]}
    (book.root / "script.yaml").write_text(yaml.safe_dump({"normalizer": [{"output": other}]}), encoding="utf-8")
    r = muse("rules", "normalize", "--book", book.root, "--write")
    assert r.exit_code == 0, r.stderr
    assert f"shown earlier by call {shown.call_id}" in r.stdout and "written: 2 rule(s)" in r.stdout
    assert receipts(book) == [(1, "ok", None)]  # no second call
    text = book.rules_path.read_text(encoding="utf-8")
    assert "禁止:眼底闪过" in text and "偏好:尽量多写对话，节奏要快" in text
    assert not (book.state_dir / "rules-normalize.json").exists()  # applied once


def test_write_after_an_edit_asks_the_model_again(tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", {"normalizer": [{"output": GOOD}]})
    normalize(book, write=False)
    book.rules_path.write_text(RULES + "\n", encoding="utf-8")  # rules.txt changed since it was shown
    report = normalize(book, write=True)
    assert report.written and not report.shown_earlier and report.attempts == 1
    assert receipts(book) == [(1, "ok", None), (1, "ok", None)]


def test_contract_failure_is_corrected_within_the_bound(tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", {"normalizer": [{"output": NOT_VERBATIM}, {"output": GOOD}]})
    report = normalize(book, write=False)
    assert report.status == "passed" and report.attempts == 2
    assert receipts(book) == [(1, "failed", "CONTRACT_PHRASE_NOT_IN_LINE"), (2, "ok", None)]


def test_three_contract_failures_fail_closed_and_write_nothing(tmp_path: Path) -> None:
    book = make_book(tmp_path / "b", {"normalizer": [{"output": NOT_VERBATIM}] * 3 + [{"output": GOOD}]})
    with pytest.raises(ModelCallFailed) as info:
        normalize(book, write=True)
    assert info.value.code == "CONTRACT_PHRASE_NOT_IN_LINE" and info.value.exit_code == 3
    assert [r[1] for r in receipts(book)] == ["failed"] * 3
    assert book.rules_path.read_text(encoding="utf-8") == RULES


def test_an_edit_during_the_call_is_never_overwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    book = make_book(tmp_path / "b", {"normalizer": [{"output": GOOD}]})
    real = normalize_module.normalize_rules

    async def author_edits_meanwhile(session: Any, unparsed: Any) -> Any:
        result = await real(session, unparsed)
        book.rules_path.write_text(RULES + "禁止:新加的\n", encoding="utf-8")
        return result

    monkeypatch.setattr(normalize_module, "normalize_rules", author_edits_meanwhile)
    with pytest.raises(Exception) as info:
        normalize(book, write=True)
    assert getattr(info.value, "code", None) == "FILE_CHANGED_ON_DISK"
    assert book.rules_path.read_text(encoding="utf-8") == RULES + "禁止:新加的\n"


def test_a_proposal_contradicting_an_existing_rule_is_not_written(tmp_path: Path) -> None:
    conflicting = {
        "proposals": [
            {"line": 4, "rules": [{"kind": "fatigue", "phrase": "眼底闪过", "limit": 1}], "note": ""},
            {"line": 5, "rules": [], "note": ""},
            {"line": 6, "rules": [], "note": ""},
        ]
    }
    rules = RULES.replace("疲劳词:不由得≤2", "疲劳词:不由得≤2、眼底闪过≤3")
    book = make_book(tmp_path / "b", {"normalizer": [{"output": conflicting}]}, rules=rules)
    with pytest.raises(Exception) as info:
        normalize(book, write=True)
    assert getattr(info.value, "code", None) == "RULES_NORMALIZE_CONFLICT"
    assert book.rules_path.read_text(encoding="utf-8") == rules


def test_a_rule_already_in_the_file_is_not_written_twice(tmp_path: Path) -> None:
    rules = "禁止:眼底闪过\n" + RULES
    lines = {n + 1: t for n, t in LINES.items()}
    doc = {"proposals": [{**p, "line": p["line"] + 1} for p in GOOD["proposals"]]}
    book = make_book(tmp_path / "b", {"normalizer": [{"output": doc}]}, rules=rules)
    report = normalize(book, write=True)
    (first,) = [p for p in report.proposals if p.line == 5]
    assert first.original == lines[5] and first.rules[0].already_present
    assert report.written_rules == 1  # only the preference
    assert book.rules_path.read_text(encoding="utf-8").count("禁止:眼底闪过") == 1


# ── the command line ────────────────────────────────────────────────────────────────────────────


def test_cli_json_shows_proposals(tmp_path: Path, muse: Any) -> None:
    book = make_book(tmp_path / "b", {"normalizer": [{"output": GOOD}]})
    r = muse("rules", "normalize", "--book", book.root, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "passed" and doc["written"] is False and doc["unparsed_lines"] == 3
    assert doc["proposals"][0] == {
        "line": 4,
        "original": LINES[4],
        "rules": [
            {
                "kind": "forbidden",
                "phrase": "眼底闪过",
                "limit": None,
                "rendered": "禁止:眼底闪过",
                "already_present": False,
            }
        ],
        "note": "禁用词",
    }
    assert book.rules_path.read_text(encoding="utf-8") == RULES


def test_cli_write_and_human_output(tmp_path: Path, muse: Any) -> None:
    book = make_book(tmp_path / "b", {"normalizer": [{"output": GOOD}]})
    r = muse("rules", "normalize", "--book", book.root, "--write")
    assert r.exit_code == 0, r.stderr
    assert "禁止:眼底闪过" in r.stdout and "written" in r.stdout.lower()
    assert "禁止:眼底闪过" in book.rules_path.read_text(encoding="utf-8")


def test_cli_no_model_is_a_visible_skip_with_exit_4(tmp_path: Path, muse: Any) -> None:
    book = make_book(tmp_path / "b", None)
    r = muse("rules", "normalize", "--book", book.root, "--write", "--json")
    assert r.exit_code == 4  # the unparsed lines stay unread: not evaluated, never a pass
    doc = json.loads(r.stdout)
    assert (doc["status"], doc["skip_reason"], doc["written"]) == ("skipped", "no model configured", False)
    human = muse("rules", "normalize", "--book", book.root)
    assert human.exit_code == 4 and "skipped (no model configured)" in human.stdout
    assert "passed" not in human.stdout


def test_cli_failed_call_exits_3_with_an_error_document(tmp_path: Path, muse: Any) -> None:
    book = make_book(tmp_path / "b", {"normalizer": [{"output": NOT_VERBATIM}] * 3})
    r = muse("rules", "normalize", "--book", book.root, "--json", "--write")
    assert r.exit_code == 3
    doc = json.loads(r.stdout)
    assert doc["ok"] is False and doc["error"]["code"] == "CONTRACT_PHRASE_NOT_IN_LINE"
    assert "error[CONTRACT_PHRASE_NOT_IN_LINE]" in r.stderr
    assert book.rules_path.read_text(encoding="utf-8") == RULES


def test_real_subprocess_write_round_trip(tmp_path: Path) -> None:
    """The installed `muse` as a real process: --write changes rules.txt, a second run finds nothing left to do."""
    answer = {"proposals": GOOD["proposals"][:2]}  # lines 4 and 5 (the memo line is removed below)
    rules = RULES.replace("这是给自己的备忘，与规则无关\n", "")
    book = make_book(tmp_path / "b", {"normalizer": [{"output": answer}]}, rules=rules)
    r = muse_subprocess("rules", "normalize", "--book", book.root, "--write", "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["written"] is True and doc["written_rules"] == 2
    again = muse_subprocess("rules", "normalize", "--book", book.root, "--json")
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["skip_reason"] == "no unparsed lines"
    lint = muse_subprocess("rules", "lint", "--book", book.root, "--json")
    assert lint.exit_code == 0, lint.stdout + lint.stderr
