"""Defaults data file, book-over-defaults overrides, the effective rule set's sha256, chapter length."""

from __future__ import annotations

import pytest

from novelmuse.errors import InputError
from novelmuse.rules import (
    CompiledRules,
    LengthLimits,
    build_effective,
    check_length,
    load_defaults,
    parse_defaults,
    parse_rules,
    preferences_block,
)
from novelmuse.text import sha256_hex

REQUIRED = ["不由得", "一丝", "眼底闪过", "仿佛", "竟然", "嘴角勾起", "不禁", "五味杂陈", "值得注意的是"]


def eff(text: str, length: LengthLimits | None = None):  # type: ignore[no-untyped-def]
    return build_effective(parse_rules(text), load_defaults(), length or LengthLimits(), "rules.txt")


def test_defaults_file_is_versioned_hashed_and_covers_the_issue_list() -> None:
    from importlib import resources

    d = load_defaults()
    data = (resources.files("novelmuse.rules") / "data" / "ai_flavour.toml").read_bytes()
    assert d.version >= 1 and d.sha256 == sha256_hex(data)
    phrases = dict(d.fatigue)
    assert all(p in phrases for p in REQUIRED)
    assert len(phrases) >= 38
    # every default can be overridden from rules.txt: parse "疲劳词:<phrase>≤9" back to the same phrase
    rs = parse_rules("\n".join(f"疲劳词:{p}≤9" for p in phrases))
    assert [r.phrase for r in rs.fatigue] == list(phrases) and rs.problems == ()


@pytest.mark.parametrize(
    "data",
    [
        b'version = 1\n[fatigue]\n"a b" = 1\n',
        b"version = 0\n[fatigue]\n",
        b"[fatigue]\n",
        b'version = 1\n[fatigue]\n"x" = -1\n',
        b"\xff",
    ],
)
def test_invalid_defaults_are_rejected(data: bytes) -> None:
    with pytest.raises(InputError) as exc:
        parse_defaults(data)
    assert exc.value.code == "RULES_DEFAULTS_INVALID"


def test_book_rules_override_defaults_without_contradiction() -> None:
    e = eff("禁止:不由得\n疲劳词:一丝≤5、后宫≤1\n")
    by = {r.phrase: r for r in e.rules}
    assert (by["不由得"].kind, by["不由得"].severity, by["不由得"].origin.label) == (
        "forbidden",
        "error",
        "rules.txt line 1",
    )
    assert (by["一丝"].limit, by["一丝"].origin.label) == (5, "rules.txt line 2")
    assert (by["仿佛"].kind, by["仿佛"].origin.label) == ("fatigue", f"default v{load_defaults().version}")
    assert by["后宫"].limit == 1
    assert len(e.rules) == len(load_defaults().fatigue) + 1


def test_unusable_book_rules_raise_with_codes() -> None:
    with pytest.raises(InputError) as exc:
        eff("疲劳词:不由得\n")
    assert exc.value.code == "RULES_SYNTAX" and exc.value.where == "rules.txt:1"
    with pytest.raises(InputError) as exc:
        eff("禁止:后宫\n\n疲劳词:后宫≤2\n")
    assert exc.value.code == "RULES_CONTRADICTION" and "line 1" in exc.value.what and "line 3" in exc.value.what


def test_sha256_covers_semantics_not_layout() -> None:
    base = eff("禁止:后宫、系统面板\n疲劳词:一丝≤2\n偏好:多对话\n").sha256
    assert eff("# comment\n\n禁止：系统面板 后宫   # x\n疲劳词:一丝<=2\n偏好:多对话\n没看懂的行\n").sha256 == base
    assert eff("禁止:后宫、系统面板\n疲劳词:一丝≤3\n偏好:多对话\n").sha256 != base
    assert eff("禁止:后宫\n疲劳词:一丝≤2\n偏好:多对话\n").sha256 != base
    assert eff("禁止:后宫、系统面板\n疲劳词:一丝≤2\n偏好:少对话\n").sha256 != base
    assert eff("禁止:后宫、系统面板\n疲劳词:一丝≤2\n偏好:多对话\n", LengthLimits(max_chars=10)).sha256 != base


def test_preferences_block_from_effective_set() -> None:
    assert preferences_block(eff("偏好:多对话,快节奏\n偏好:第二条\n")) == "多对话,快节奏\n第二条"


def test_length_outcomes() -> None:
    assert check_length(10, LengthLimits())[0].outcome == "skipped"
    out, violated = check_length(10, LengthLimits(min_chars=20, max_chars=30))
    assert out.outcome == "failed" and violated == [("min_chars", 20)]
    out, violated = check_length(31, LengthLimits(max_chars=30))
    assert out.outcome == "failed" and violated == [("max_chars", 30)]
    assert check_length(30, LengthLimits(min_chars=30, max_chars=30))[0].outcome == "passed"
    out, violated = check_length(3, LengthLimits(min_chars=20), prologue=True)
    assert out.outcome == "skipped" and "prologue" in (out.reason or "") and violated == []


def test_compiled_rules_severities_and_limits() -> None:
    e = eff("禁止:后宫\n疲劳词:哈哈≤1\n")
    texts = ["后宫里哈哈哈，哈哈", "哈哈哈", "没有"]
    found = CompiledRules(e).check_texts(texts)
    assert [(f.rule, f.target, f.actual, f.severity) for f in found[0]] == [
        ("forbidden", "后宫", 1, "error"),
        ("fatigue", "哈哈", 2, "warning"),
    ]
    assert found[1] == [] and found[2] == []  # 哈哈 once in 哈哈哈: at the limit, no finding
    assert found[0][1].hits() == [(0, 3, 5), (0, 7, 9)]


def test_check_body_reports_like_muse_check() -> None:
    e = eff("禁止:后宫\n", LengthLimits(min_chars=6))
    length, items = CompiledRules(e).check_body("后宫。\n\n后宫")
    assert (length.outcome, length.chars) == ("failed", 5)
    assert [(f.rule, f.target, f.limit, f.actual, f.hits) for f in items] == [
        ("forbidden", "后宫", None, 2, [(0, 0, 2), (1, 5, 7)]),
        ("length", "min_chars", 6, 5, []),
    ]


def test_batches_give_the_same_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    from novelmuse.rules import _check

    e = eff("禁止:后宫\n疲劳词:哈哈≤0\n")
    texts = ["后宫哈哈哈", "", "哈哈", "后宫\n\n后宫", "无"] * 3
    monkeypatch.setattr(_check, "PLAIN_PYTHON_WORK", -1)  # the vectorised path, which scans in batches
    monkeypatch.setattr(_check, "PLAIN_PYTHON_RULES", -1)
    whole = [[(f.target, f.actual, f.hits()) for f in fs] for fs in CompiledRules(e).check_texts(texts)]
    monkeypatch.setattr(_check, "BATCH_CHARS", 4)
    batched = [[(f.target, f.actual, f.hits()) for f in fs] for fs in CompiledRules(e).check_texts(texts)]
    assert batched == whole and len(whole) == len(texts)
    assert CompiledRules(e).check_texts([]) == []
