"""kill -9 in the middle of a replay run, then resume (issue 12's check): finished samples are not repeated and
the result equals an uninterrupted run's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from novelmuse.book import find_book
from novelmuse.replay import build_gate_input, resolve_set

from ..conftest import ROOT
from .replay_helpers import RoleFake, registered, replay_book, run

CHILD = """
import sys
from pathlib import Path
from novelmuse.book import find_book
from novelmuse.replay import resolve_set
from tests.replay.replay_helpers import RoleFake, run

book = find_book(Path(sys.argv[1]))
run(book, resolve_set(book, "one"), RoleFake(delay_s=0.4), concurrency=1)
"""


def _comparable(book: Any, run_id: str) -> list[Any]:
    """What a run decided, without its ids: per sample its hashes, verdicts and scores."""
    gi = build_gate_input(book, run_id)
    return [
        (s.item_id, s.arm, s.ok, s.candidate_sha256, s.manifest_sha256, s.detector, s.panel, s.scores)
        for s in gi.samples
    ]


def test_kill_9_then_resume_repeats_no_finished_sample_and_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    book = replay_book(tmp_path / "b")
    registered(book)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(book.root)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        done = 0
        while time.monotonic() < deadline and child.poll() is None:
            row = book.db.execute("SELECT COUNT(*) FROM replay_samples WHERE status = 'done'").fetchone()
            done = int(row[0])
            if done >= 1:
                break
            time.sleep(0.05)
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    book = find_book(book.root)
    finished = {(r[0], r[1]) for r in book.db.execute("SELECT item_id, arm FROM replay_samples WHERE status = 'done'")}
    assert 1 <= len(finished) < 3
    fake = RoleFake()
    out = run(book, resolve_set(book, "one"), fake, concurrency=1)
    assert out.resumed and out.ok
    writers = [r for r, _ in fake.calls].count("writer")
    assert writers == 3 - len(finished)  # only the unfinished samples were written again
    twin = replay_book(tmp_path / "twin")
    uninterrupted = run(twin, registered(twin), RoleFake(), concurrency=1)
    assert _comparable(book, out.run_id) == _comparable(twin, uninterrupted.run_id)
