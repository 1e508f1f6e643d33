"""Writing a chapter from the studio in a real browser, with the scripted models of the demo (loopback, no
network): confirm the outline, see the plan and its bill, confirm, follow the run's steps live (server-sent
events) to its end, open the draft on the desk — and find the run and the draft exactly as `muse` records them."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import muse_subprocess
from tests.reports.cdp import Browser, find_chromium
from tests.reports.tools import require

from .running import ROOT, Studio, start
from .test_browser import click, shot, visit

sys.path.insert(0, str(ROOT / "examples"))
import demo


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    s = start(demo.make_copy(Path(tmp_path_factory.mktemp("studio-write"))))
    yield s
    assert "Traceback" not in s.stop()


@pytest.fixture(scope="module")
def browser(studio: Studio) -> Iterator[Browser]:
    with Browser(require(find_chromium(), "chromium"), width=1400, height=1000) as b:
        visit(b, studio.url)
        yield b


def wait_for(b: Browser, expression: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not b.js(expression):
        assert time.monotonic() < deadline, f"never true: {expression}"
        time.sleep(0.2)


def script_the_accept(book: Path, text: str) -> None:
    """The scripted models' answers for accepting the author's revision, as the demo scripts the accept of the
    writer's draft: the detector on exactly this text (its sha256), and the quality gate's two judges under the
    candidate id the gate derives from it — every quote still verbatim in the revised text."""
    from novelmuse.judging import candidate_ids
    from novelmuse.text import sha256_hex

    sha = sha256_hex(text)
    path = book / "demo-script.yaml"
    script = yaml.safe_load(path.read_text(encoding="utf-8"))
    detector = json.loads(json.dumps(script["detector"][-1]).replace(script["detector"][-1]["match"], sha))
    assert all(v["quote"] in text for v in detector["output"]["verdicts"])
    script["detector"].append(detector)
    (cid,) = candidate_ids(f"gate-11-{sha[:16]}", "0", 1)
    gate = next(e for e in script["judge"] if e.get("match") == "c_8096")
    script["judge"] += [json.loads(json.dumps(gate, ensure_ascii=False).replace("c_8096", cid))] * 2
    path.write_text(yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")


def test_confirm_write_watch_and_open_the_draft(browser: Browser, studio: Studio) -> None:
    visit(browser, studio.base + "/outlines/0011.html")
    click(browser, "form[action$='/confirm'] button")
    visit(browser, studio.base + "/write?chapter=11&arm=C")
    text = browser.js("document.getElementById('plan').innerText")
    assert "The bill" in text and "writer" in text and "detector" in text
    shot(browser, "11-write-plan")
    click(browser, "form[action='/write/start'] button")
    assert "/jobs/" in browser.js("location.pathname")
    wait_for(browser, "document.getElementById('job-state').textContent === 'finished'")
    steps = browser.js("Array.from(document.querySelectorAll('#job-steps li')).map(li => li.textContent)")
    assert steps[0].startswith("bill confirmed")
    assert any(s.startswith("evidence_1: passed") for s in steps)  # an evidence round
    assert any(s.startswith("detector: failed") for s in steps)  # the gate blocked the first draft …
    assert any(s.startswith("repair_1: passed") for s in steps)  # … its repair …
    assert steps[-1].startswith("detector: passed")  # … passed the gate
    assert browser.js("document.getElementById('job-spent').textContent") == "unknown (no price)"
    shot(browser, "12-write-progress")
    click(browser, "#job-end a.btn")
    assert browser.js("location.pathname") == "/drafts"
    shot(browser, "13-drafts")
    drafts = json.loads(muse_subprocess("drafts", "--json", "--book", studio.book).stdout)["drafts"]
    final = [d for d in drafts if d["chapter"] == 11 and d["final"]]
    assert len(final) == 1 and final[0]["status"] == "passed"
    assert final[0]["short"] in browser.js("document.body.innerText")
    assert not (studio.book / "chapters" / "0011.md").exists()  # a draft waits for the author's decision
    # the draft's page: the detector's items marked in its text
    click(browser, f"a[href='/drafts/{final[0]['short']}']")
    marks = browser.js("document.querySelectorAll('.draft-text .hl.det').length")
    assert marks > 0
    sources = browser.js("document.getElementById('sources') ? document.querySelectorAll('.sources li').length : -1")
    assert sources > 0  # the manifest's passages of earlier chapters, each linked
    shot(browser, "14-draft")
    # revise one paragraph in place, then accept the revision
    browser.js(
        "(() => { document.querySelector('details.revise').open = true;"
        " const t = document.querySelector('form[action$=\"/revise\"] textarea');"
        " t.value = t.value.trimEnd() + '（作者补一句：曹操大败而回。）'; })()"
    )
    click(browser, "form[action$='/revise'] button")
    notice = browser.js("document.querySelector('.notice').innerText")
    assert "your revision is draft" in notice, notice
    revised = browser.js("document.querySelector('form[action$=\"/revise\"] textarea').value")
    shot(browser, "15-draft-revised")
    script_the_accept(studio.book, revised.replace("\r\n", "\n"))
    click(browser, "form[action$='/accept'] button")
    wait_for(browser, "['finished', 'error', 'cancelled'].includes(document.getElementById('job-state').textContent)")
    end = browser.js("document.getElementById('job-end').innerText")
    shot(browser, "16-accept")
    assert browser.js("document.getElementById('job-state').textContent") == "finished", end
    assert end.startswith("accepted"), end
    chapter = studio.book / "chapters" / "0011.md"
    assert chapter.read_text(encoding="utf-8").endswith(revised.replace("\r\n", "\n") + "\n")  # the book style
    after = json.loads(muse_subprocess("drafts", "--json", "--book", studio.book).stdout)["drafts"]
    decided = [d for d in after if d["origin"] == "author_revision" and d["chapter"] == 11]
    assert len(decided) == 1 and decided[0]["decision"]["decision"] == "accept"
    assert decided[0]["decision"]["mode"] == "manual"
    revs = json.loads(muse_subprocess("revisions", "11", "--json", "--book", studio.book).stdout)
    assert revs["current_sha256"] is not None
    assert [r["id"] for r in revs["revisions"]] == [decided[0]["decision"]["file_revision_id"]]


def test_the_write_page_refuses_a_bill_that_was_not_shown(studio: Studio) -> None:
    r = studio.request(
        "POST", "/write/start", form={"csrf": studio.csrf(), "chapter": "11", "arm": "C", "bill": "0" * 64}
    )
    assert r.status == 303
    events = studio.request("GET", r.headers["location"] + "/events").body
    assert "STUDIO_BILL_CHANGED" in events and '"outcome": "error"' in events
