"""Fuzzing every parser of outside input (issue 18 item 7): the checked-in seed corpus, then hypothesis mutations.

Short run (in the suite): every seed, then `SHORT_EXAMPLES` mutated inputs per target. Long run (nightly):

    .venv/bin/python -m pytest tests/fuzz --hypothesis-profile=fuzz-nightly -q

(`fuzz-nightly`: 20,000 inputs per target, no deadline; a failing input is kept in `.hypothesis/` and printed —
add it to `tests/fuzz/corpus/<target>/` with the fix.) The mutations are AFL's byte-level ones — flips,
inserts, deletions, duplicated and spliced ranges, and a dictionary of tokens that matter to these parsers
(heading words, YAML and TOML syntax, numbers at and past their caps, invalid UTF-8, NUL, BOMs) — applied to
a seed drawn from the corpus, so the search starts from well-formed inputs and walks into their edges.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .targets import TARGETS

CORPUS = Path(__file__).resolve().parent / "corpus"
SHORT_EXAMPLES = 60

#: Tokens worth inserting whole (AFL's dictionary): the syntax these parsers branch on.
TOKENS = [
    t.encode("utf-8")
    for t in [
        "第", "章", "回", "节", "卷", "Chapter ", "一百", "零", "两", "万", "亿", "０", "９", "999999", "-1",
        "\n", "\r\n", "\t", "　", ": ", "- ", "  ", "[", "]", "{", "}", "\"", "'", "#", "=", ",", "..", "/",
        "true", "null", ".nan", ".inf", "1e999", "9223372036854775807", "&a", "*a", "!!python/object", "<<: ",
        "禁止:", "疲劳词:", "偏好:", "<=", "/章", "[book]", "[[x]]", "title = ", "id: ", "name: ", "chapter: ",
        "\ufeff", "\u200b", "\u202e",
    ]
] + [b"\x00", b"\xff", b"\xc3", b"\xe4\xb8", b"\xef\xbb\xbf"]  # fmt: skip


def _seeds(target: str) -> list[bytes]:
    return [p.read_bytes() for p in sorted((CORPUS / target).iterdir()) if p.is_file()]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """A seed with up to eight byte-level mutations."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 8))):
        op = draw(st.sampled_from(["flip", "insert", "token", "delete", "duplicate", "splice"]))
        at = draw(st.integers(0, len(data)))
        if op == "flip" and data:
            i = min(at, len(data) - 1)
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == "token":
            data[at:at] = draw(st.sampled_from(TOKENS)) * draw(st.integers(1, 3))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif op == "duplicate":
            end = at + draw(st.integers(1, 256))
            data[at:at] = data[at:end] * draw(st.integers(1, 4))
        elif op == "splice":
            other = draw(st.sampled_from(seeds))
            start = draw(st.integers(0, len(other)))
            data[at:at] = other[start : start + draw(st.integers(1, 512))]
    return bytes(data)


def test_every_target_has_a_seed_corpus() -> None:
    assert sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) == sorted(TARGETS)
    assert all(_seeds(name) for name in TARGETS)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_seeds(name: str) -> None:
    """Every seed of the corpus keeps its target's contract."""
    for data in _seeds(name):
        TARGETS[name](data)


def test_the_judge_seed_is_a_valid_report() -> None:
    """The corpus's judge report passes the contract (so mutations start from a report that gets deep)."""
    import json

    from novelmuse.judging import check_report
    from novelmuse.roles.judge import JudgeReport
    from tests.judging.test_contract import BLIND, RUBRIC

    report = JudgeReport.model_validate(json.loads((CORPUS / "judge_report" / "good.json").read_bytes()))
    assert check_report(report, BLIND, RUBRIC).ok


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_mutations(name: str) -> None:
    """Mutated seeds keep the contract: a result or a MuseError, never another exception."""
    target, seeds = TARGETS[name], _seeds(name)
    profile = settings()  # the loaded profile: the suite's (short run) or fuzz-nightly (its own count)
    examples = profile.max_examples if profile.max_examples >= 1000 else SHORT_EXAMPLES

    @settings(max_examples=examples, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(mutated(seeds))
    def run(data: bytes) -> None:
        target(data)

    run()
