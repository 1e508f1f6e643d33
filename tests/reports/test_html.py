"""The generated HTML, parsed (not string-matched): skipped never looks passed, text is always escaped, every
page is self-contained."""

from __future__ import annotations

import json
from pathlib import Path

import lxml.html
import pytest

from ..editorial.helpers import make_book
from .books import run_muse

HOSTILE = '<script>alert("x")</script> & <b>粗</b> &amp; "引号" \'单\''


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, object]]:
    """Two chapters, no model configured; chapter 1 reviewed (its model steps skipped); chapter 2 holds markup."""
    root = tmp_path_factory.mktemp("html")
    book = make_book(root / "book", chapters=2)
    ch2 = book / "chapters" / "0002.md"
    heading, _, body = ch2.read_text(encoding="utf-8").partition("\n")
    ch2.write_text(f"{heading}\n{HOSTILE}\n{body}", encoding="utf-8")
    assert run_muse(root, "review", "1", "--book", book).code in (0, 1, 4)
    r = run_muse(root, "report", "--book", book, "--out", root / "site", "--json")
    assert r.code == 0, r.stderr
    return book, root / "site", json.loads(r.stdout)


def _parse(path: Path) -> lxml.html.HtmlElement:
    return lxml.html.fromstring(path.read_bytes())


def _cls(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


def _has(el: lxml.html.HtmlElement, name: str) -> bool:
    return name in (el.get("class") or "").split()


def test_skipped_review_is_shown_as_skipped_never_as_passed(site: tuple[Path, Path, dict[str, object]]) -> None:
    _, out, _ = site
    overview = _parse(out / "index.html")
    rows = {int(tr.findtext("td")): tr for tr in overview.xpath(f"//table[{_cls('chapters')}]/tbody/tr")}
    row1 = rows[1]
    assert row1.get("data-review") == "skipped"
    badge = row1.xpath(f"td//*[{_cls('badge')}]")[0]
    assert _has(badge, "r-skipped") and not _has(badge, "r-finalized")
    assert badge.text_content().strip() == "⊘ skipped(no model configured)"
    assert "✓" not in row1.text_content()
    assert rows[2].get("data-review") == "not_reviewed"
    for tr in rows.values():  # no gate has run: never a tick
        gate = tr.xpath("td")[7]
        assert gate.text_content().strip() == "⊘ not evaluated" and gate.xpath(f".//*[{_cls('b-skipped')}]")
    page = _parse(out / "chapters" / "0001.html")
    steps = {
        li.xpath(f".//*[{_cls('step')}]")[0].text: li.xpath(f".//*[{_cls('badge')}]")[0]
        for li in page.xpath(f"//ol[{_cls('steps')}]/li")
    }
    assert steps["rules"].text_content().strip() == "✓ passed" and _has(steps["rules"], "b-passed")
    for name in ("consistency_review", "editor_review"):
        b = steps[name]
        assert _has(b, "b-skipped") and not _has(b, "b-passed")
        assert b.text_content().strip() == "⊘ skipped(no model configured)"


def test_chapter_markup_is_shown_as_text(site: tuple[Path, Path, dict[str, object]]) -> None:
    _, out, _ = site
    page = _parse(out / "chapters" / "0002.html")
    text = page.xpath(f"//section[{_cls('version')}]//div[{_cls('text')}]")[0]
    assert HOSTILE in text.text_content()
    assert not text.xpath(".//script") and not text.xpath(".//b")
    assert len(page.xpath("//script")) == 1  # the report's own script, and nothing from the chapter
    raw = (out / "chapters" / "0002.html").read_text(encoding="utf-8")
    assert "<script>alert" not in raw and "&lt;script&gt;alert" in raw


def test_pages_are_self_contained(site: tuple[Path, Path, dict[str, object]]) -> None:
    _, out, result = site
    pages = [out / "index.html", out / "memory.html", out / "desk.html", out / "judging.html", out / "replay.html"]
    pages += sorted((out / "chapters").iterdir())
    assert result["pages"] == len(pages) and result["chapters"] == [1, 2]
    for p in pages:
        doc = _parse(p)
        assert not doc.xpath("//link[@rel='stylesheet'] | //script[@src] | //img[@src] | //iframe | //object | //embed")
        for a in doc.xpath("//a[@href]"):
            href = a.get("href")
            assert "://" not in href and not href.startswith("//"), href
            target = href.split("#")[0]
            if target:
                assert (p.parent / target).resolve().is_file(), f"{p.name}: broken link {href}"
        csp = doc.xpath("//meta[@http-equiv='Content-Security-Policy']")[0].get("content")
        assert "default-src 'none'" in csp


def test_report_of_one_chapter_and_bad_out(site: tuple[Path, Path, dict[str, object]], tmp_path: Path) -> None:
    book, _, _ = site
    r = run_muse(tmp_path, "report", "--book", book, "--chapter", "2", "--out", tmp_path / "one", "--json")
    assert r.code == 0, r.stderr
    assert json.loads(r.stdout)["chapters"] == [2]
    assert sorted(p.name for p in (tmp_path / "one" / "chapters").iterdir()) == ["0002.html"]
    rows = _parse(tmp_path / "one" / "index.html").xpath(f"//table[{_cls('chapters')}]/tbody/tr")
    assert [tr.findtext("td") for tr in rows] == ["2"]
    (tmp_path / "file").write_text("x", encoding="utf-8")
    r = run_muse(tmp_path, "report", "--book", book, "--out", tmp_path / "file", "--json")
    assert r.code == 2 and json.loads(r.stdout)["error"]["code"] == "REPORT_OUT"
    assert run_muse(tmp_path, "report", "--book", book, "--chapter", "9").code == 2  # CHAPTER_NOT_FOUND


def test_the_memory_page_names_a_relations_target_as_the_author_does(muse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """关羽 结义兄弟 → 刘备, not → liu-bei: the page shows the target card's name, never its id."""
    import shutil

    from ..conftest import SAMPLE_BOOK

    book = tmp_path / "sanguo"
    shutil.copytree(SAMPLE_BOOK, book, ignore=shutil.ignore_patterns(".muse"))
    r = muse("report", "--book", book, "--out", tmp_path / "site")
    assert r.exit_code == 0, r.stderr
    page = (tmp_path / "site" / "memory.html").read_text(encoding="utf-8")
    named, by_id = json.dumps(["结义兄弟", "刘备"])[1:-1], json.dumps(["结义兄弟", "liu-bei"])[1:-1]
    assert named in page and by_id not in page  # the page's data is JSON (non-ASCII escaped)
