"""Issue 14 item 7: the seeds' bounds are caps, not defaults — a book.toml value above one is a config error that
names the seed's limit (a book may lower a bound, never raise it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..editorial.helpers import make_book


@pytest.mark.parametrize(
    ("table", "key", "value", "limit"),
    [
        ("review", "repair_rounds", 3, 1),  # seed 004: 最多一轮修复
        ("review", "rereview_rounds", 2, 1),  # … 一次复审
        ("review", "neutral_foreshadow_chapters", 4, 3),  # 前3章伏笔健康可给中性分
        ("memory", "max_plants_per_chapter", 4, 3),  # 每章 plant ≤ 3 (outlines and fact cards alike)
    ],
)
def test_a_value_above_the_seed_is_a_config_error_naming_the_limit(
    muse: Any, tmp_path: Path, table: str, key: str, value: int, limit: int
) -> None:
    book = make_book(tmp_path / "b", extra_toml=f"[{table}]\n{key} = {value}\n", gate=True)
    r = muse("check", "--book", book, "--json")
    assert r.exit_code == 2
    error = json.loads(r.stdout)["error"]
    assert error["code"] == "CONFIG_INVALID"
    assert f"{table}.{key} = {value} is above the limit of {limit}" in error["what"]


def test_a_value_at_or_below_the_cap_is_accepted(muse: Any, tmp_path: Path) -> None:
    toml = "[review]\nrepair_rounds = 0\nrereview_rounds = 1\nneutral_foreshadow_chapters = 3\n"
    book = make_book(tmp_path / "b", extra_toml=toml + "[memory]\nmax_plants_per_chapter = 2\n", gate=True)
    assert muse("check", "--book", book).exit_code in (0, 1)
