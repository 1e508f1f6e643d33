"""YAML that expands without bound — aliases of aliases ("billion laughs"), or an alias inside what it names — is
refused where it is read (cards, outlines, sets, judge files, scripted answers), before it is built, never a hang.
Checked against a naive oracle: build the document and count its values with every alias expanded."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from novelmuse.book import _yamlfile, load_bounded_yaml

from ..conftest import SAMPLE_BOOK


def laughs(width: int, depth: int, indent: str = "") -> str:
    """A YAML sequence whose `depth` levels of aliases each repeat the one below `width` times."""
    lines = [f"{indent}- &l0 [{', '.join(['lol'] * width)}]"]
    for d in range(1, depth):
        lines.append(f"{indent}- &l{d} [{', '.join([f'*l{d - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def naive_count(value: Any) -> int:
    """Every value, every alias expanded (only for documents small enough to walk)."""
    if isinstance(value, list):
        return 1 + sum(naive_count(v) for v in value)
    if isinstance(value, dict):
        return 1 + sum(naive_count(k) + naive_count(v) for k, v in value.items())
    return 1


@settings(max_examples=150, deadline=None)
@given(width=st.integers(1, 6), depth=st.integers(1, 5), limit=st.integers(1, 400))
def test_refused_exactly_when_the_expanded_document_is_over_the_bound(width: int, depth: int, limit: int) -> None:
    text = laughs(width, depth)
    expanded = naive_count(yaml.safe_load(text))
    with patch.object(_yamlfile, "MAX_YAML_EXPANDED_NODES", limit):
        if expanded > limit:
            with pytest.raises(_yamlfile.YamlTooLarge):
                load_bounded_yaml(text)
        else:
            assert load_bounded_yaml(text) == yaml.safe_load(text)


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(_yamlfile.YamlTooLarge):
        load_bounded_yaml("a: &a [1, *a]\n")


@pytest.fixture
def book(tmp_path: Path) -> Path:
    root = tmp_path / "b"
    shutil.copytree(SAMPLE_BOOK, root, ignore=shutil.ignore_patterns(".muse"))
    return root


BOMB = laughs(10, 9, "  ")  # 10^9 values from ten lines


@pytest.mark.parametrize(
    ("relative", "text", "args", "code"),
    [
        (
            "cards/bomb.yaml",
            f"id: bomb\ntype: character\nname: 炸弹\naliases:\n{BOMB}",
            ["cards", "lint"],
            "CARD_SYNTAX",
        ),
        ("outlines/0003.yaml", f"chapter: 3\nbeats:\n{BOMB}", ["outline", "show", "3"], "OUTLINE_SYNTAX"),
        (
            "script.yaml",
            f"writer:\n  - output:\n      x:\n{laughs(10, 9, '        ')}",
            ["models", "check"],
            "SCRIPT_INVALID",
        ),
    ],
)
def test_a_bomb_is_refused_where_it_is_read_in_well_under_a_second(  # type: ignore[no-untyped-def]
    muse, book: Path, relative: str, text: str, args: list[str], code: str
) -> None:
    (book / relative).write_text(text, encoding="utf-8")
    if relative == "script.yaml":
        with (book / "book.toml").open("a", encoding="utf-8") as fh:
            fh.write('\n[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n\n[roles]\nwriter = "s:m"\n')
    started = time.perf_counter()
    r = muse(*args, "--book", book)
    assert time.perf_counter() - started < 5
    said = r.stdout + r.stderr
    assert r.exit_code in (1, 2) and code in said and "aliases expand to more than" in said, said  # lint: a finding
