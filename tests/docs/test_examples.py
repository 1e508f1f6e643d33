"""Examples the guides give for you to copy are valid as written: the card of the story-memory guide lints clean in
the sample book, and the local-endpoint configuration of the models guide validates as book.toml."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

from novelmuse.book import BookConfig

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"


def _blocks(page: str, lang: str) -> list[str]:
    text = (GUIDE / page).read_text(encoding="utf-8")
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def test_the_card_example_lints_clean(tmp_path: Path, muse: Any) -> None:
    book = tmp_path / "sanguo"
    shutil.copytree(ROOT / "examples" / "sanguo", book, ignore=shutil.ignore_patterns(".muse"))
    card = next(b for b in _blocks("memory.md", "yaml") if b.startswith("# cards/"))
    name = card.splitlines()[0].removeprefix("# ")
    (book / name).write_text(card, encoding="utf-8")
    result = muse("cards", "lint", "--book", book)
    assert result.exit_code == 0, result.stdout + result.stderr
    shown = muse("cards", "show", "云长", "--as-of", "80", "--book", book, "--json")
    assert shown.exit_code == 0 and '"dead"' in shown.stdout


def test_the_local_endpoint_example_is_a_valid_configuration() -> None:
    block = next(b for b in _blocks("models.md", "toml") if 'kind = "ollama"' in b)
    config = BookConfig.model_validate(tomllib.loads(block))
    assert config.role_target("writer") == ("local", "qwen2.5:14b")
    local = config.providers["local"]
    assert local.base_url == "http://127.0.0.1:11434/v1" and local.key_optional  # type: ignore[union-attr]
