"""`muse sync` extracts fact cards with bounded concurrency (`[calls] concurrency`), commits them in chapter order,
asks before a bill above `[budget] confirm_above`, and says what it spent — what `muse cost --run` says. The
extractor is a model behind a real loopback OpenAI-compatible server that plants one foreshadow per chapter."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..conftest import SANGUO
from ..llm.loopback import LoopbackServer, Reply

KEY_ENV = "MUSE_SYNC_TEST_KEY"
CHAPTERS = 8


def _bodies() -> dict[int, str]:
    from novelmuse.text import split_chapters

    split = split_chapters(SANGUO.read_text(encoding="utf-8"))
    return {p.number: p.body.strip() for p in split.chapters if p.number <= CHAPTERS}


class Extractor:
    """Answers each chapter (named in the prompt's title line) with one plant quoting its first sentence, after
    `delay` seconds; records the prompts and how many requests were in flight at once."""

    def __init__(self, bodies: dict[int, str], delay: float = 0.0) -> None:
        self.bodies, self.delay = bodies, delay
        self.prompts: dict[int, str] = {}
        self.lock = threading.Lock()

    def __call__(self, body: Any) -> Reply:
        text = "\n".join(m["content"] for m in body["messages"])
        n = next(k for k, b in sorted(self.bodies.items(), reverse=True) if b[:40] in text)
        with self.lock:
            self.prompts[n] = text
        quote = re.split(r"[。！？]", self.bodies[n])[0][:30]
        plant = {"op": "plant", "id": f"F-sync-{n}", "description": f"第{n}回的伏笔", "payoff_chapter": None}
        content = {"events": [], "foreshadows": [{**plant, "quote": quote}], "relations": [], "states": []}
        # the server waits while the request counts as in flight (a sleep here, before it is counted, would leave
        # the overlap of requests to the luck of how fast the answers are written)
        return Reply(content=content, delay_s=self.delay)


@pytest.fixture
def bodies() -> dict[int, str]:
    return _bodies()


def _book(root: Path, base_url: str, bodies: dict[int, str], concurrency: int, *, yes_price: bool = True) -> Path:
    (root / "chapters").mkdir(parents=True)
    for n, text in bodies.items():
        (root / "chapters" / f"{n:04d}.md").write_text(f"# 第{n}回\n{text}\n", encoding="utf-8")
    price = '[prices."loop-extractor"]\ninput = 0.01\noutput = 0.02\n\n' if yes_price else ""
    (root / "book.toml").write_text(
        '[book]\ntitle = "sync"\n\n'
        f"[calls]\nconcurrency = {concurrency}\n\n"
        f'[providers.s]\nkind = "openai"\nbase_url = "{base_url}"\napi_key_env = "{KEY_ENV}"\ntransport = "http"\n'
        "max_concurrency = 8\n\n"
        f'[roles]\nextractor = "s:loop-extractor"\n\n{price}',
        encoding="utf-8",
    )
    return root


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-sync-test-key-0123456789")


@pytest.fixture
def slow(bodies: dict[int, str]) -> Iterator[tuple[LoopbackServer, Extractor]]:
    extractor = Extractor(bodies, delay=0.3)
    with LoopbackServer("openai", responder=extractor) as srv:
        yield srv, extractor


def test_extraction_runs_concurrently_and_commits_in_chapter_order(
    muse, tmp_path: Path, key: None, bodies: dict[int, str], slow: tuple[LoopbackServer, Extractor]
) -> None:
    srv, extractor = slow
    root = _book(tmp_path / "b", srv.base_url, bodies, concurrency=4)
    started = time.perf_counter()
    r = muse("sync", "--json", "--book", root)
    took = time.perf_counter() - started
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["facts_extracted"] == list(range(1, CHAPTERS + 1))
    assert 2 <= srv.max_in_flight <= 4
    assert took < CHAPTERS * 0.3  # sequential calls would take at least this long
    from novelmuse.book import find_book

    book = find_book(root)
    rows = book.db.execute("SELECT chapter FROM fact_cards ORDER BY id").fetchall()
    assert [row[0] for row in rows] == list(range(1, CHAPTERS + 1))  # committed in chapter order
    # chapter k's prompt lists what chapters ≤ k − 4 planted, not the chapters still in flight
    assert "F-sync-1" in extractor.prompts[5] and "F-sync-2" not in extractor.prompts[5]
    assert "F-sync-4" in extractor.prompts[8] and "F-sync-5" not in extractor.prompts[8]
    assert not any("F-sync" in extractor.prompts[k] for k in range(1, 5))
    # one line per chapter off a terminal, with the spend so far; the summary is what `muse cost --run` says
    assert "chapter 8 · fact card extracted · 8/8 · 8 call(s), spent" in r.stderr
    cost = json.loads(muse("cost", "--run", doc["run_id"], "--book", root, "--json").stdout)["total"]
    assert doc["spent"] == {k: cost[k] for k in ("calls", "input_tokens", "output_tokens", "cost")}


def test_concurrency_one_gives_each_chapter_every_earlier_plant(
    muse, tmp_path: Path, key: None, bodies: dict[int, str]
) -> None:
    extractor = Extractor(bodies)
    with LoopbackServer("openai", responder=extractor) as srv:
        root = _book(tmp_path / "b", srv.base_url, bodies, concurrency=1)
        assert muse("sync", "--book", root).exit_code == 0
        assert srv.max_in_flight == 1
    for k in range(2, CHAPTERS + 1):
        assert all(f"F-sync-{j}：" in extractor.prompts[k] for j in range(1, k)), k


def test_an_unpriced_paid_extractor_is_asked_about_and_refused_without_a_terminal(
    muse, tmp_path: Path, key: None, bodies: dict[int, str]
) -> None:
    extractor = Extractor(bodies)
    with LoopbackServer("openai", responder=extractor) as srv:
        root = _book(tmp_path / "b", srv.base_url, bodies, concurrency=4, yes_price=False)
        r = muse("sync", "--book", root)
        assert r.exit_code == 2 and "BILL_NOT_CONFIRMED" in r.stderr
        assert f"fact extraction: {CHAPTERS} calls to s:loop-extractor" in r.stderr  # the plan, printed first
        assert "unknown" in r.stderr and srv.count == 0
        assert muse("sync", "--yes", "--book", root).exit_code == 0
        assert srv.count == CHAPTERS


def test_a_failed_extraction_stops_the_calls_in_flight_and_leaves_no_stray_error(
    muse, tmp_path: Path, key: None, bodies: dict[int, str], caplog: pytest.LogCaptureFixture
) -> None:
    import gc

    with LoopbackServer("openai", default=Reply(status=401)) as srv:
        root = _book(tmp_path / "b", srv.base_url, bodies, concurrency=4)
        r = muse("sync", "--json", "--book", root)
    gc.collect()  # a task whose failure nobody retrieved is reported when it is collected
    assert r.exit_code == 3, r.stderr
    doc = json.loads(r.stdout)
    assert doc["facts_error"] == {"chapter": 1, "code": "MODEL_AUTH"} and doc["facts_extracted"] == []
    assert doc["facts_stale"] == list(range(1, CHAPTERS + 1))
    assert not [rec for rec in caplog.records if rec.name == "asyncio"], [rec.message for rec in caplog.records]
