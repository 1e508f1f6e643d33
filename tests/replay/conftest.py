"""Fixtures: a user config directory of its own (the signing key lives there, outside the book) and a book."""

from __future__ import annotations

from pathlib import Path

import pytest

from novelmuse.book import Book

from ._helpers import make_gate_book


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "userconf" / "config.toml"
    monkeypatch.setenv("MUSE_CONFIG", str(path))
    return path


@pytest.fixture
def gate_book(tmp_path: Path, user_config: Path) -> Book:
    return make_gate_book(tmp_path / "book", user_config)
