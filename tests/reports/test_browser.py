"""The report in a real browser: headless Chromium loads the pages from the file system.

Every highlight on the reviewed chapter's page is checked against the offsets stored in the database (and
the texts they index into); clicking a finding must scroll its span into view; no page may make a request
beyond its own file.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from novelmuse.text import sha256_hex

from .books import FORBIDDEN, reviewed_book, run_muse
from .cdp import Browser, find_chromium
from .tools import require

COLLECT = """(() => {
  const out = {versions: {}, links: [], marks: {}};
  for (const s of document.querySelectorAll('section.version')) {
    out.versions[s.id] = {sha: s.dataset.sha, text: s.querySelector('.text').textContent};
  }
  for (const el of document.querySelectorAll('.hl')) {
    const v = el.closest('section.version').id;
    for (const id of el.dataset.m.split(' ')) {
      out.marks[id] = out.marks[id] || {version: v, text: ''};
      out.marks[id].text += el.textContent;
    }
  }
  for (const a of document.querySelectorAll('a.go')) {
    out.links.push({mark: a.dataset.mark, version: a.dataset.version, start: +a.dataset.start, end: +a.dataset.end,
                    kind: a.closest('.finding').className});
  }
  return out;
})()"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("report")
    book = reviewed_book(root / "book")
    r = run_muse(root, "report", "--book", book, "--out", root / "site")
    assert r.code == 0, r.stderr
    return book, root / "site"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    exe = require(find_chromium(), "chromium")
    with Browser(exe) as b:
        yield b


def _db(book: Path, sql: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(book / ".muse" / "muse.db")
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _expected(book: Path) -> list[dict[str, Any]]:
    """Every finding of chapter 1 as stored: the text it indexes (by sha256), its offsets and its quote."""
    out: list[dict[str, Any]] = []
    for row in _db(book, "SELECT text_sha256, quote, start, end FROM review_issues"):
        out.append(
            {
                "kind": "consistency",
                "sha": row["text_sha256"],
                "start": row["start"],
                "end": row["end"],
                "quote": row["quote"],
            }
        )
    for row in _db(book, "SELECT text_sha256, dims_json FROM editor_reports"):
        for dim in json.loads(row["dims_json"]).values():
            out.append(
                {
                    "kind": "editor",
                    "sha": row["text_sha256"],
                    "start": dim["start"],
                    "end": dim["end"],
                    "quote": dim["evidence"],
                }
            )
    check = json.loads(run_muse(book.parent, "check", "--book", book, "--chapter", "1", "--json").stdout)
    body = (book / "chapters" / "0001.md").read_text(encoding="utf-8").partition("\n")[2]
    for f in check["chapters"][0]["findings"]:
        for _, start, end in f["hits"]:
            out.append({"kind": "rule", "sha": sha256_hex(body), "start": start, "end": end, "quote": f["target"]})
    return out


def test_every_highlight_is_the_quote_at_its_stored_offsets(site: tuple[Path, Path], browser: Browser) -> None:
    book, out = site
    browser.goto(out / "chapters" / "0001.html")
    page = browser.js(COLLECT)
    expected = _expected(book)
    kinds = {e["kind"] for e in expected}
    assert kinds == {"consistency", "editor", "rule"} and len({e["sha"] for e in expected}) == 3  # three texts
    stored = {r["sha256"]: r["text"] for r in _db(book, "SELECT sha256, text FROM texts")}
    by_sha = {v["sha"]: (key, v["text"]) for key, v in page["versions"].items()}
    for key, v in page["versions"].items():  # each text on the page is exactly the text it claims to be
        assert sha256_hex(v["text"]) == v["sha"], key
    unmatched = list(page["links"])
    for e in expected:
        assert e["sha"] in by_sha, f"the text of a {e['kind']} finding is not on the page"
        key, text = by_sha[e["sha"]]
        assert text[e["start"] : e["end"]] == e["quote"]
        if e["sha"] in stored:
            assert stored[e["sha"]] == text
        link = next(
            (ln for ln in unmatched if ln["version"] == key and (ln["start"], ln["end"]) == (e["start"], e["end"])),
            None,
        )
        assert link is not None, f"no highlight for {e}"
        unmatched.remove(link)
        assert e["kind"] in link["kind"]
        mark = page["marks"][link["mark"]]
        assert mark["version"] == key and mark["text"] == e["quote"]
    assert unmatched == []  # and nothing highlighted that is not stored
    assert any(e["quote"] == FORBIDDEN for e in expected)


def test_clicking_a_finding_scrolls_to_its_span_and_back(site: tuple[Path, Path], browser: Browser) -> None:
    _, out = site
    browser.goto(out / "chapters" / "0001.html")
    # the finding whose span is furthest down a text that is not shown at first
    target = browser.js(
        """(() => { const ls = [...document.querySelectorAll('a.go')].filter(a => a.dataset.version !== 'v0');
        ls.sort((a, b) => b.dataset.start - a.dataset.start); const a = ls[0];
        a.scrollIntoView({block: 'center'}); window.scrollTo(0, 0); a.scrollIntoView({block: 'nearest'});
        const r = a.getBoundingClientRect();
        return {mark: a.dataset.mark, version: a.dataset.version, x: r.x + r.width / 2, y: r.y + r.height / 2,
                hidden: document.getElementById(a.dataset.version).hidden}; })()"""
    )
    assert target["hidden"] is True
    before = browser.js("window.scrollY")
    browser.click(target["x"], target["y"])
    state = browser.js(
        f"""(() => {{ const seg = [...document.querySelectorAll('.hl')].find(
                el => el.dataset.m.split(' ').includes('{target["mark"]}'));
            const r = seg.getBoundingClientRect();
            return {{top: r.top, bottom: r.bottom, h: window.innerHeight, y: window.scrollY,
                     shown: !document.getElementById('{target["version"]}').hidden,
                     flash: seg.classList.contains('flash'), hash: location.hash}}; }})()"""
    )
    assert state["shown"] and state["flash"]
    assert state["top"] >= 0 and state["bottom"] <= state["h"], state
    assert state["y"] != before and state["hash"] == f"#m-{target['mark']}"
    # and back: clicking the highlighted text marks its finding in the side panel
    seg = browser.js(
        f"""(() => {{ const seg = [...document.querySelectorAll('.hl')].find(
                el => el.dataset.m.split(' ').includes('{target["mark"]}'));
            document.querySelectorAll('.finding.active').forEach(f => f.classList.remove('active'));
            const r = seg.getClientRects()[0]; return {{x: r.x + 2, y: r.y + r.height / 2}}; }})()"""
    )
    browser.click(seg["x"], seg["y"])
    active = browser.js("[...document.querySelectorAll('.finding.active')].map(f => f.dataset.marks)")
    assert len(active) == 1 and target["mark"] in active[0].split()


def test_pages_make_no_network_request_and_screenshots(
    site: tuple[Path, Path], browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _, out = site
    pages = [out / "index.html", out / "memory.html", out / "desk.html", out / "judging.html", out / "replay.html"]
    pages += sorted((out / "chapters").iterdir())
    start = len(browser.events)
    for p in pages:
        browser.goto(p)
        assert browser.js("document.querySelectorAll('main').length") == 1
    requested = [
        ev["params"]["request"]["url"] for ev in browser.events[start:] if ev["method"] == "Network.requestWillBeSent"
    ]
    assert sorted(requested) == sorted(p.resolve().as_uri() for p in pages)  # each page itself, nothing else
    errors = [ev for ev in browser.events[start:] if ev["method"] == "Runtime.exceptionThrown"]
    assert errors == []
    shots = tmp_path_factory.mktemp("screenshots")
    browser.goto(out / "index.html")
    browser.screenshot(shots / "overview.png", full_page=True)
    browser.goto(out / "chapters" / "0001.html")
    browser.screenshot(shots / "chapter-0001.png")
    for name in ("overview.png", "chapter-0001.png"):
        assert (shots / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and (shots / name).stat().st_size > 20_000


SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sanguo"


@pytest.fixture(scope="module")
def memory_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The report of a copy of the sample book (cards, outlines with foreshadows)."""
    import shutil

    root = tmp_path_factory.mktemp("memory")
    book = root / "sanguo"
    for name in ("chapters", "cards", "outlines"):
        shutil.copytree(SAMPLE / name, book / name)
    for name in ("book.toml", "rules.txt"):
        shutil.copy2(SAMPLE / name, book / name)
    r = run_muse(root, "report", "--book", book, "--out", root / "site")
    assert r.code == 0, r.stderr
    return book, root / "site"


def test_cards_as_of_the_selected_chapter_match_muse_cards_show(
    memory_site: tuple[Path, Path], browser: Browser
) -> None:
    book, out = memory_site
    browser.goto(out / "memory.html")
    names = browser.js("[...document.querySelectorAll('#cards .cardbox h3')].map(h => h.textContent)")
    assert "董卓" in names and "关羽" in names
    for chapter in (3, 9):
        browser.js(
            f"(() => {{ const r = document.getElementById('asof'); r.value = {chapter};"
            " r.dispatchEvent(new Event('input')); })()"
        )
        shown = browser.js(
            """(() => { const out = {};
              for (const box of document.querySelectorAll('#cards .cardbox')) {
                const rows = [...box.querySelectorAll('tbody tr')]
                  .map(tr => [...tr.children].map(td => td.textContent));
                out[box.querySelector('h3').textContent] = rows
                  .filter(r => !r[1].startsWith('→ ')).map(r => [r[0], r[1]]);
              } return out; })()"""
        )
        for name in ("董卓", "关羽", "孙坚"):
            doc = json.loads(
                run_muse(book, "cards", "show", name, "--as-of", str(chapter), "--book", book, "--json").stdout
            )
            expected = sorted([k, str(v["value"])] for k, v in doc["attributes"].items())
            assert sorted(shown[name]) == expected, (name, chapter)
    # the overdue foreshadows of the ledger are drawn red
    overdue = browser.js(
        "[...document.querySelectorAll('.track.overdue .tl-label')].map(t => t.firstChild.textContent)"
    )
    ledger = json.loads(run_muse(book, "ledger", "--as-of", "10", "--overdue", "--book", book, "--json").stdout)
    assert sorted(overdue) == sorted(item["id"] for item in ledger["items"]) and overdue
