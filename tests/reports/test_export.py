"""`muse export`: the TXT round trip through the real importer, Markdown, and EPUB checked by epubcheck."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .books import run_muse
from .tools import epubcheck_command

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sanguo"


def _files(book: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((book / "chapters").iterdir())}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export") / "sanguo"
    shutil.copytree(SAMPLE / "chapters", root / "chapters")
    shutil.copy2(SAMPLE / "book.toml", root / "book.toml")
    return root


def test_txt_export_imports_back_to_identical_chapter_files(sample: Path, tmp_path: Path) -> None:
    r = run_muse(tmp_path, "export", "--book", sample, "--out", tmp_path / "book.txt", "--json")
    assert r.code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["round_trip"] == "verified" and doc["warnings"] == [] and doc["chapters"] == list(range(1, 11))
    again = tmp_path / "again"
    r = run_muse(tmp_path, "import", tmp_path / "book.txt", "--into", again)
    assert r.code == 0, r.stderr
    assert _files(again) == _files(sample)


def test_txt_round_trip_with_prologue_crlf_and_range(tmp_path: Path) -> None:
    source = "楔子：天下大势。\r\n\r\n第一章 起\r\n甲乙丙。\r\n\r\n第二章 承\r\n丁戊。\r\n第三章 转\r\n己庚辛。\r\n"
    (tmp_path / "src.txt").write_bytes(source.encode("utf-8"))
    book = tmp_path / "book"
    assert run_muse(tmp_path, "import", tmp_path / "src.txt", "--into", book).code == 0
    assert run_muse(tmp_path, "export", "--book", book, "--out", tmp_path / "all.txt").code == 0
    assert (tmp_path / "all.txt").read_bytes() == source.encode("utf-8")  # prologue, headings and CRLF as they were
    r = run_muse(tmp_path, "export", "--book", book, "--range", "1-2", "--out", tmp_path / "part.txt", "--json")
    assert json.loads(r.stdout)["chapters"] == [1, 2]
    part = tmp_path / "part"
    assert run_muse(tmp_path, "import", tmp_path / "part.txt", "--into", part).code == 0
    assert _files(part) == {k: v for k, v in _files(book).items() if k in ("0001.md", "0002.md")}


def test_txt_export_names_what_cannot_come_back(tmp_path: Path) -> None:
    book = tmp_path / "book"
    (book / "chapters").mkdir(parents=True)
    (book / "book.toml").write_text('[book]\ntitle = "t"\n', encoding="utf-8")
    (book / "chapters" / "0001.md").write_text("# 第一章 起\n没有换行结尾", encoding="utf-8")
    (book / "chapters" / "0002.md").write_text("# 第二章 承\n正文\n第三章 混进正文的标题行\n后文\n", encoding="utf-8")
    r = run_muse(tmp_path, "export", "--book", book, "--out", tmp_path / "b.txt", "--json")
    assert r.code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["round_trip"] == "not_exact"
    assert any("chapter 1 does not end with a line break" in w for w in doc["warnings"])
    assert any("read as chapter headings" in w for w in doc["warnings"])
    assert run_muse(tmp_path, "export", "--book", book, "--out", tmp_path / "b.txt").code == 2  # EXPORT_EXISTS
    assert run_muse(tmp_path, "export", "--book", book, "--out", tmp_path / "b.txt", "--force").code == 0


def test_markdown_export(sample: Path, tmp_path: Path) -> None:
    assert run_muse(tmp_path, "export", "--book", sample, "--format", "md", "--out", tmp_path / "b.md").code == 0
    lines = (tmp_path / "b.md").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# 三国演义（前十回）"
    assert next(ln for ln in lines if ln.startswith("## ")) == "## 第一回　宴桃园豪杰三结义　斩黄巾英雄首立功"
    assert sum(ln.startswith("## ") for ln in lines) == 10


def test_epub_passes_epubcheck_with_toc_and_metadata(sample: Path, tmp_path: Path) -> None:
    cmd = epubcheck_command()
    out = tmp_path / "b.epub"
    r = run_muse(tmp_path, "export", "--book", sample, "--format", "epub", "--range", "1-4", "--out", out)
    assert r.code == 0, r.stderr
    check = subprocess.run([*cmd, str(out)], capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "0 fatals / 0 errors / 0 warnings" in check.stdout
    from ebooklib import ITEM_DOCUMENT, epub

    read = epub.read_epub(str(out), {"ignore_ncx": True})
    docs = [i for i in read.get_items_of_type(ITEM_DOCUMENT) if i.get_name().startswith("chapter-")]
    assert len(docs) == 4
    assert [t.title for t in read.toc] == [
        (sample / "chapters" / f"{n:04d}.md").read_text(encoding="utf-8").partition("\n")[0][2:] for n in range(1, 5)
    ]
    assert read.get_metadata("DC", "title")[0][0] == "三国演义（前十回）"
    assert read.get_metadata("DC", "creator")[0][0] == "罗贯中"
    assert read.get_metadata("DC", "language")[0][0] == "zh"
    body = docs[0].get_content().decode("utf-8")
    assert "话说天下大势，分久必合，合久必分" in body
