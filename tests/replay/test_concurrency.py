"""8 issuers in 8 processes append to one journal at once: one linear chain of the right length, no fork, no
lost entry, every issuer's entries exactly where it was told they are."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path
from typing import Any

from novelmuse.book import Book, find_book
from novelmuse.replay import GateInput, GateIssuer, ReceiptBindings, verify_journal

from ._helpers import honest_doc, prepare_run

WORKERS = 8
ROUNDS = 4


def _issue_many(root: str, gi: GateInput, bindings: ReceiptBindings, start: Any, out: Any) -> None:
    book = find_book(Path(root))
    got = []
    with GateIssuer.open(book) as issuer:
        start.wait(timeout=60)
        for _ in range(ROUNDS):
            issued = issuer.issue("A", gi, bindings)
            assert issued.receipt_entry is not None
            got.append((issued.report_entry.seq, issued.report_entry.sha256, issued.receipt_entry.seq,
                        issued.receipt_entry.sha256))  # fmt: skip
    out.put(got)


def test_eight_concurrent_issuers_make_one_linear_chain(gate_book: Book) -> None:
    runs = [prepare_run(gate_book, honest_doc(), run=f"RUN{k}") for k in range(WORKERS)]
    ctx = mp.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_issue_many, args=(str(gate_book.root), gi, b, start, out)) for gi, b in runs]
    for p in procs:
        p.start()
    start.set()
    results = [out.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    total = WORKERS * ROUNDS * 2
    journal = (gate_book.root / ".muse/gates/journal.jsonl").read_bytes().splitlines()
    assert len(journal) == total
    entries = [json.loads(line) for line in journal]
    assert [e["seq"] for e in entries] == list(range(1, total + 1))
    claimed = {}
    for got in results:
        for report_seq, report_sha, receipt_seq, receipt_sha in got:
            claimed[report_seq], claimed[receipt_seq] = report_sha, receipt_sha
            assert entries[receipt_seq - 1]["body"]["report_seq"] == report_seq
    assert sorted(claimed) == list(range(1, total + 1))  # no entry lost, none written twice
    assert all(entries[seq - 1]["sha256"] == sha for seq, sha in claimed.items())
    report = verify_journal(gate_book, all_signatures=True)
    assert report.ok, report.problems
    assert (report.entries, report.signatures_checked) == (total, total)
    rows = gate_book.db.execute("SELECT seq FROM gate_entries ORDER BY seq").fetchall()
    assert [r[0] for r in rows] == list(range(1, total + 1))
