"""The studio in a real browser (Debian's headless chromium over the DevTools pipe): open the printed link, walk
every page — each screenshot kept under `.artifacts/studio/` (CI's artefacts) — confirm an outline with a click
and find exactly what `muse outline confirm` records; run the check from the desk; move the memory's chapter
slider. No page may ask for anything outside the studio, and none may log a script error or a CSP violation."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from tests.conftest import muse_subprocess
from tests.reports.cdp import Browser, find_chromium
from tests.reports.tools import require

from .running import ARTIFACTS, SECRET, Studio, copy_sample, start


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    s = start(copy_sample(tmp_path_factory.mktemp("studio-browser") / "book"))
    yield s
    assert "Traceback" not in s.stop()


@pytest.fixture(scope="module")
def browser(studio: Studio) -> Iterator[Browser]:
    with Browser(require(find_chromium(), "chromium"), width=1400, height=1000) as b:
        b.page("Log.enable")
        visit(b, studio.url)  # the printed link: sets the cookie, then redirects to the desk
        yield b


def visit(b: Browser, url: str) -> None:
    mark = len(b.events)
    b.page("Page.navigate", url=url)
    b.wait_event("Page.loadEventFired", since=mark)


def shot(b: Browser, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    b.screenshot(ARTIFACTS / f"{name}.png")


def click(b: Browser, selector: str) -> None:
    """A real mouse click on the element, then wait for the page it leads to."""
    box = b.js(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
        " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    mark = len(b.events)
    b.click(*box)
    b.wait_event("Page.loadEventFired", since=mark)


def problems(b: Browser) -> list[str]:
    """Script errors, CSP violations and failed loads the browser logged."""
    out = []
    for ev in b.events:
        if ev.get("method") == "Log.entryAdded" and ev["params"]["entry"]["level"] == "error":
            out.append(ev["params"]["entry"]["text"])
        if ev.get("method") == "Runtime.exceptionThrown":
            out.append(str(ev["params"]["exceptionDetails"].get("text")))
    return out


def test_the_printed_link_opens_the_desk_and_hides_the_token(browser: Browser, studio: Studio) -> None:
    assert browser.js("location.href") == studio.base + "/"
    assert browser.js("document.cookie") == ""  # HttpOnly: no script sees the token
    assert "What needs you" in browser.js("document.body.innerText")
    shot(browser, "01-desk")


@pytest.mark.parametrize(
    ("path", "name", "expect"),
    [
        ("/chapters", "02-chapters", "张翼德怒鞭督邮"),
        ("/outlines", "04-outlines", "outlines/0011.yaml"),
        ("/memory.html?as_of=6", "06-memory", "Cards as of chapter"),
        ("/memory.html?q=%E8%B2%82%E8%9D%89&as_of=10#search", "07-memory-search", "貂蝉"),
        ("/spend.html", "08-spend", "No model call has been recorded"),
        ("/experiments.html", "09-experiments", "No replay run has been recorded"),
        ("/judging.html", "10-judging", "Blind judge panels"),
    ],
)
def test_every_page_renders(browser: Browser, studio: Studio, path: str, name: str, expect: str) -> None:
    visit(browser, studio.base + path)
    text = browser.js("document.body.innerText")
    assert expect in text
    assert SECRET not in browser.js("document.documentElement.outerHTML")
    shot(browser, name)


def test_the_chapter_page_highlights_the_rule_hits_in_the_text(browser: Browser, studio: Studio) -> None:
    visit(browser, studio.base + "/chapters/0002.html")
    marks = browser.js("Array.from(document.querySelectorAll('.hl.k-rule.s-error')).map(e => e.textContent)")
    assert marks == ["后宫"]
    font = browser.js("getComputedStyle(document.querySelector('.text')).fontSize")
    leading = browser.js("getComputedStyle(document.querySelector('.text')).lineHeight")
    assert font == "18px" and leading == "36px"
    shot(browser, "03-chapter")


def test_confirming_an_outline_with_a_click_records_what_the_cli_records(browser: Browser, studio: Studio) -> None:
    visit(browser, studio.base + "/outlines/0011.html")
    assert "unconfirmed" in browser.js("document.querySelector('.chips').innerText")
    shot(browser, "05-outline")
    click(browser, "form[action$='/confirm'] button")
    assert "outline 11 confirmed" in browser.js("document.querySelector('.notice').innerText")
    assert browser.js("document.querySelector('.chips .badge').innerText") == "confirmed"
    shown = muse_subprocess("outline", "show", "11", "--json", "--book", studio.book)
    doc = json.loads(shown.stdout)
    assert doc["confirmation"]["state"] == "confirmed"
    assert doc["confirmation"]["confirmed_sha256"] == doc["sha256"]
    shot(browser, "05-outline-confirmed")
    browser.js("document.querySelector('.outline-editor').scrollIntoView()")
    assert browser.js("document.querySelector('.outline-editor textarea').value").startswith(
        (studio.book / "outlines" / "0011.yaml").read_text(encoding="utf-8")[:20]
    )
    shot(browser, "05-outline-yaml-editor")


def test_the_desk_runs_the_check(browser: Browser, studio: Studio) -> None:
    visit(browser, studio.base + "/")
    click(browser, "form[action='/actions/check'] button")
    assert "check failed: 1 error(s)" in browser.js("document.querySelector('.notice').innerText")


def test_releasing_the_memory_slider_shows_the_ledger_as_of_that_chapter(browser: Browser, studio: Studio) -> None:
    visit(browser, studio.base + "/memory.html?as_of=10")
    mark = len(browser.events)
    browser.js(
        "(() => { const r = document.getElementById('asof'); r.value = 4; r.dispatchEvent(new Event('change')); })()"
    )
    browser.wait_event("Page.loadEventFired", since=mark)
    time.sleep(0.1)
    assert "as_of=4" in browser.js("location.search")
    assert "Active foreshadows as of chapter 4" in browser.js("document.body.innerText")


def test_no_page_asked_for_anything_elsewhere_or_logged_an_error(browser: Browser, studio: Studio) -> None:
    urls = browser.requested_urls()
    assert urls and all(u.startswith(studio.base) for u in urls), [u for u in urls if not u.startswith(studio.base)]
    assert problems(browser) == []
