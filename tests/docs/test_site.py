"""The documentation site: it builds with --strict, and what the code tells users to read exists in it.

Every "see docs/PAGE.md#ANCHOR" an error message or a help text names must be a page of the site and an anchor
on that page; the generated references hold an anchor for every book.toml table and every registered code.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from novelmuse.book import BookConfig
from novelmuse.errors import registry

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "novelmuse"
SEE = re.compile(r"docs/([\w./-]+\.md)(?:#([\w-]+))?")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once by `mkdocs build --strict` (a broken link, page or anchor fails the build)."""
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _page(site: Path, page: str) -> str:
    """The built HTML of docs/PAGE.md (directory URLs: guide/models.md → guide/models/index.html)."""
    stem = page.removesuffix(".md")
    html = site / ("index.html" if stem == "index" else f"{stem}/index.html")
    assert html.is_file(), f"docs/{page} is not a page of the site"
    return html.read_text(encoding="utf-8")


def _ids(html: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', html))


def _texts_of_source() -> list[tuple[str, str]]:
    """Every string constant of the source (f-strings' literal parts included), with where it is."""
    out: list[tuple[str, str]] = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append((f"{path.relative_to(SRC)}:{node.lineno}", node.value))
    return out


def test_no_message_sends_users_to_the_readme_or_design_documents() -> None:
    bad = [
        (where, text)
        for where, text in _texts_of_source()
        if re.search(r"see (the )?README|\.\./shared|seeds?/\d{3}", text)
    ]
    assert not bad, bad


def test_every_docs_reference_in_the_source_is_a_page_and_anchor(site: Path) -> None:
    seen = 0
    for where, text in _texts_of_source():
        for page, anchor in SEE.findall(text):
            seen += 1
            html = _page(site, page)
            assert not anchor or anchor in _ids(html), f"{where}: docs/{page}#{anchor}: no such anchor on the page"
    assert seen >= 5  # the messages that point at the documentation (plan, outlines, limits, config, replay, …)


def test_every_config_table_and_error_code_has_its_anchor(site: Path) -> None:
    config_ids = _ids(_page(site, "reference/configuration.md"))
    assert set(BookConfig.model_fields) <= config_ids
    error_ids = _ids(_page(site, "reference/errors.md"))
    missing = [code for code in registry() if code.lower() not in error_ids]
    assert not missing, missing


def test_the_site_is_offline_and_speaks_to_users(site: Path) -> None:
    """No web font or CDN is fetched, and no page sends readers to documents they do not have."""
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in text, html
        assert not re.search(r"\.\./shared|\bseed 00\d|\bissue \d+\b", text, re.IGNORECASE), html
