"""Receipts bind hashes that can be verified later; `muse calls` / `muse cost` / `muse vault recover`;
an API key in the environment never reaches the database, the vault or any output."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from novelmuse.book import Book
from novelmuse.errors import FailedClosed
from novelmuse.iopoints import hooked
from novelmuse.llm import (
    Message,
    ModelCallFailed,
    ModelSession,
    ProviderRequest,
    ProviderResponse,
    Usage,
    Vault,
    cost_summary,
    list_receipts,
    schema_sha256,
    strict_json_schema,
)
from novelmuse.llm._prices import PriceTable
from novelmuse.text import canonical_json, sha256_hex, sha256_json

from ..conftest import muse_subprocess
from .calls import task_call
from .conftest import FakeProvider, ok_response


class Verdict(BaseModel):
    verdict: str
    score: float


MESSAGES = [Message(role="system", content="评分"), Message(role="user", content="第一回　宴桃园豪杰三结义")]
PRICES = '\n[prices."scripted-model-1"]\ninput = 1.0\noutput = 2.0\n'


def call_all(book: Book, roles: list[str], **open_kw: Any) -> tuple[list[Any], str]:
    async def go() -> tuple[list[Any], str]:
        out: list[Any] = []
        async with ModelSession.open(book, run_kind="test", **open_kw) as session:
            for role in roles:
                try:
                    out.append(
                        await session.call(
                            task_call(role=role, schema=Verdict, messages=MESSAGES, prompt_sha256="a" * 64)
                        )
                    )
                except ModelCallFailed as exc:
                    out.append(exc)
            return out, session.run_id

    return asyncio.run(go())


def test_receipt_hashes_verify_against_the_vault(make_book: Any) -> None:
    book = make_book(
        {"judge": [{"raw_text": "oops"}, {"output": {"verdict": "pass", "score": 7.5}}]}, extra_toml=PRICES
    )
    (result,), run_id = call_all(book, ["judge"])
    rows = list_receipts(book.db, run_id)
    assert [r.attempt for r in rows] == [1, 2] and len({r.id for r in rows}) == 2
    assert rows == sorted(rows, key=lambda r: r.id)
    vault = Vault(book.vault_dir)
    for row in rows:
        request = vault.read(row.request_sha256)
        assert sha256_hex(request) == row.request_sha256
        assert json.loads(request)["model"] == "scripted-model-1"
        assert row.response_sha256 is not None and sha256_hex(vault.read(row.response_sha256)) == row.response_sha256
        assert row.schema_sha256 == schema_sha256(strict_json_schema(Verdict))
        assert row.price_table_sha256 == PriceTable.load(book.config.prices).sha256
        assert row.prompt_sha256 == "a" * 64
        assert row.provider == "s" and row.provider_kind == "scripted" and row.role == "judge"
        assert row.started_at <= row.ended_at and row.latency_ms is not None and row.latency_ms >= 0
        assert row.requested_model == row.resolved_model == "scripted-model-1"
    # the request hash is sha256_json of the canonical request (what C3's providers and replays recompute)
    first = json.loads(vault.read(rows[0].request_sha256))
    assert sha256_json(first) == rows[0].request_sha256
    assert canonical_json(first).encode() == vault.read(rows[0].request_sha256)
    # usage counted from characters by the scripted provider, cost from the pinned book price
    chars_in = sum(len(m.content) for m in MESSAGES)
    assert rows[0].input_tokens == chars_in and rows[0].output_tokens == len("oops")
    assert rows[0].cost == pytest.approx((chars_in * 1.0 + 4 * 2.0) / 1e6)
    assert result.cost == pytest.approx(sum(r.cost for r in rows))
    call = book.db.execute("SELECT * FROM model_calls WHERE id = ?", (result.call_id,)).fetchone()
    assert call["status"] == "ok" and call["final_receipt_id"] == rows[1].id and call["attempts"] == 2
    assert call["output_sha256"] == sha256_json({"verdict": "pass", "score": 7.5}) == result.output_sha256


def test_unknown_price_means_unknown_cost_never_zero(make_book: Any) -> None:
    book = make_book({"judge": [{"output": {"verdict": "x", "score": 1}}]}, model="unpriced-model")
    (result,), _ = call_all(book, ["judge"])
    assert result.cost is None and result.final_receipt.cost is None
    summary = cost_summary(book.db)
    assert summary.total.cost is None and summary.total.unknown_cost_attempts == 1


def test_receipts_are_written_ahead_of_each_request(make_book: Any) -> None:
    """While a request is in flight another connection already sees its `pending` receipt (and the call's row),
    after the completed receipts of the earlier attempts: a crash at any moment leaves a trace of every request."""
    book = make_book({"judge": []})
    seen: list[list[str]] = []

    def behaviour(request: ProviderRequest, n: int) -> ProviderResponse:
        rows = book.db.execute("SELECT outcome FROM receipts r JOIN model_calls c ON c.id = r.call_id ORDER BY r.id")
        seen.append([row[0] for row in rows])
        return ok_response(request, {"verdict": "x"} if n < 3 else {"verdict": "x", "score": 1})

    fake = FakeProvider("s", behaviour)
    call_all(book, ["judge"], providers={"s": fake})
    assert seen == [["pending"], ["failed", "pending"], ["failed", "failed", "pending"]]
    assert [r.outcome for r in list_receipts(book.db)] == ["failed", "failed", "ok"]


def test_cost_summary_by_role_and_run(make_book: Any) -> None:
    script = {
        "judge": [{"output": {"verdict": "a", "score": 1}}] * 2,
        "reviewer": [{"error": {"code": "MODEL_AUTH"}}],
    }
    book = make_book(script, extra_toml=PRICES)
    _, run1 = call_all(book, ["judge", "reviewer"])
    _, run2 = call_all(book, ["judge"])
    summary = cost_summary(book.db)
    by_role = {line.key: line for line in summary.by_role}
    assert by_role["judge"].calls == 2 and by_role["judge"].attempts == 2
    assert by_role["reviewer"].failed_attempts == 1 and by_role["reviewer"].cost == 0.0
    assert [line.key for line in summary.by_run] == [run1, run2]
    assert summary.by_run[0].status == "failed" and summary.by_run[1].status == "ok"
    assert summary.total.attempts == 3  # each session replays the script from its start
    assert summary.total.cost == pytest.approx(sum(r.cost or 0 for r in list_receipts(book.db)))
    assert cost_summary(book.db, run2).total.calls == 1


def test_cli_calls_cost_and_vault_recover(make_book: Any, muse: Any) -> None:
    book = make_book({"judge": [{"raw_text": "no"}, {"output": {"verdict": "ok", "score": 2}}]}, extra_toml=PRICES)
    _, run_id = call_all(book, ["judge"])
    r = muse("calls", "--book", book.root, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [x["outcome"] for x in doc["receipts"]] == ["failed", "ok"]
    assert doc["receipts"][0]["error_code"] == "MODEL_OUTPUT_NOT_JSON"
    (call,) = doc["calls"]
    assert call["status"] == "ok" and call["attempts"] == 2 and call["run_id"] == run_id
    assert call["final_receipt_id"] == doc["receipts"][1]["id"]
    assert call["diagnostics"]["codes"] == {"MODEL_OUTPUT_NOT_JSON": 1}
    assert [x["id"] for x in json.loads(muse("calls", "--book", book.root, "--run", run_id, "--json").stdout)[
        "receipts"
    ]] == [x["id"] for x in doc["receipts"]]  # fmt: skip
    for command in ("calls", "cost"):  # a mistyped run id is an error, not an empty listing
        r = muse(command, "--book", book.root, "--run", "run_nope", "--json")
        assert r.exit_code == 2 and "error[RUN_NOT_FOUND]" in r.stderr and "run_nope" in r.stderr
        assert json.loads(r.stdout)["error"]["code"] == "RUN_NOT_FOUND"
    r = muse("calls", "--book", book.root)
    assert r.exit_code == 0 and "failed[MODEL_OUTPUT_NOT_JSON]" in r.stdout and "2 attempts in 1 calls" in r.stdout
    r = muse("cost", "--book", book.root, "--json")
    doc = json.loads(r.stdout)
    assert doc["total"]["attempts"] == 2 and doc["by_role"][0]["key"] == "judge"
    assert doc["by_run"][0]["key"] == run_id and doc["total"]["cost"] > 0
    r = muse("cost", "--book", book.root)
    assert r.exit_code == 0 and "judge" in r.stdout
    r = muse("vault", "recover", "--book", book.root, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["completed"] == 2


def test_cli_cost_shows_unknown_not_zero(make_book: Any, muse: Any) -> None:
    book = make_book({"judge": [{"output": {"verdict": "x", "score": 1}}]}, model="unpriced-model")
    call_all(book, ["judge"])
    r = muse("cost", "--book", book.root)
    assert "unknown" in r.stdout
    assert json.loads(muse("cost", "--book", book.root, "--json").stdout)["total"]["cost"] is None


def test_cost_survives_absurd_counts_already_stored(make_book: Any, muse: Any) -> None:
    """Rows written before usage was bounded may hold 2^63−1 tokens (SUM overflowed: `muse cost` failed for
    good) or a cost of 1e300: such an attempt's usage and cost are unknown, never summed, and counted."""
    book = make_book({"judge": [{"output": {"verdict": "x", "score": 1}}] * 3}, extra_toml=PRICES)
    _, run_id = call_all(book, ["judge", "judge", "judge"])
    db = book.db
    first, second, _third = (r.id for r in list_receipts(db, run_id))
    db.execute("UPDATE receipts SET input_tokens = ?, output_tokens = ? WHERE id = ?", (2**63 - 1, 2**63 - 1, first))
    db.execute("UPDATE receipts SET cost = 1e300 WHERE id = ?", (second,))
    r = muse("cost", "--book", book.root, "--json")
    assert r.exit_code == 0, r.stderr
    total = json.loads(r.stdout)["total"]
    assert total["cost"] is None and total["unknown_cost_attempts"] == 2 and total["attempts"] == 3
    assert 0 < total["input_tokens"] < 10**6  # the two sane rows' counts only
    r = muse("cost", "--book", book.root)
    assert r.exit_code == 0 and "unknown" in r.stdout, r.stderr
    assert muse("calls", "--book", book.root).exit_code == 0

    async def join() -> Any:  # a joined run sums its spend from the same rows
        async with ModelSession.open(book, run_kind="test", run_id=run_id) as session:
            return session.budget

    budget = asyncio.run(join())
    assert budget.cost_unknown and budget.spent_tokens < 10**6


def test_cli_on_a_book_without_calls(make_book: Any, muse: Any) -> None:
    book = make_book(None)
    assert "no model calls" in muse("calls", "--book", book.root).stdout
    assert "no model calls" in muse("cost", "--book", book.root).stdout
    assert muse("vault", "recover", "--book", book.root).exit_code == 0


KEY = "sk-live-NEVER-LEAK-7c1d2e3f4a5b6c7d"


def test_a_key_in_the_environment_never_reaches_db_vault_or_output(
    make_book: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The key sits in the environment of every process, including the configured key variable of a
    second provider; it must appear in no file under the book and no output of any command."""
    monkeypatch.setenv("MUSE_TEST_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    extra = '\n[providers.o]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "MUSE_TEST_API_KEY"\n'
    script = {
        "judge": [{"raw_text": "bad"}, {"output": {"verdict": "v", "score": 1}}],
        "reviewer": [{"error": {"code": "MODEL_AUTH", "status": 401}}],
        "editor": [{"output": {"verdict": "v", "score": 1}, "model": "other"}],
    }
    book = make_book(script, extra_toml=extra + PRICES)
    call_all(book, ["judge", "reviewer", "editor"])
    env = {"MUSE_TEST_API_KEY": KEY, "OPENAI_API_KEY": KEY}
    outputs = [
        muse_subprocess(*args, "--book", book.root, env=env)
        for args in (("calls",), ("calls", "--json"), ("cost", "--json"), ("vault", "recover", "--json"))
    ]
    assert all(o.exit_code == 0 for o in outputs), [o.stderr for o in outputs]
    for out in outputs:
        assert KEY not in out.stdout and KEY not in out.stderr
    files = [p for p in book.root.rglob("*") if p.is_file()]
    assert any(p.suffix == ".done" for p in files) and any("raw" in p.parts for p in files)
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path


def test_usage_of_fake_provider_cache_tokens_priced(make_book: Any) -> None:
    book = make_book({"judge": []}, extra_toml=PRICES)
    fake = FakeProvider(
        "s", lambda req, n: ok_response(req, {"verdict": "v", "score": 1}, usage=Usage(1000, 100, 2000, 0))
    )
    (result,), _ = call_all(book, ["judge"], providers={"s": fake})
    # cache reads fall back to the input rate when the table has none
    assert result.cost == pytest.approx((1000 * 1.0 + 100 * 2.0 + 2000 * 1.0) / 1e6)


def _killed_at(book: Book, kind: str, nth: int) -> str:
    """Run one judge call in a real process that kills itself (SIGKILL) at the `nth` I/O point of `kind`
    (`iopoints`): a deterministic crash, not a race against a timer. Returns the dead process's run id."""
    root = Path(__file__).resolve().parents[2]
    script = textwrap.dedent(
        f"""
        import asyncio, os, signal, sys
        from pathlib import Path
        sys.path.insert(0, {str(root / "src")!r})
        sys.path.insert(0, {str(root)!r})
        from pydantic import BaseModel
        from novelmuse.book import find_book
        from novelmuse.iopoints import hooked
        from novelmuse.llm import Message, ModelSession
        from tests.llm.calls import task_call

        class Verdict(BaseModel):
            verdict: str
            score: float

        seen = []

        def kill_at(kind, target):
            seen.append(kind)
            if seen.count({kind!r}) == {nth}:
                os.kill(os.getpid(), signal.SIGKILL)

        async def go():
            session = ModelSession.open(find_book(Path({str(book.root)!r})), run_kind="doomed")
            session.start()
            print(session.run_id, flush=True)
            call = task_call(role="judge", schema=Verdict, messages=[Message(role="user", content="x")])
            with hooked(kill_at):
                await session.call(call)

        asyncio.run(go())
        """
    )
    env = {**os.environ, "MUSE_CONFIG": "/nonexistent/user-config.toml"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return proc.stdout.strip()


def _recover(book: Book) -> Any:
    async def reopen() -> Any:
        async with ModelSession.open(book, run_kind="next") as session:
            return session.recovery

    return asyncio.run(reopen())


def test_a_crashed_session_is_recovered_by_the_next(make_book: Any) -> None:
    """A real process is killed at the moment it sends its second attempt (after its pending receipt, lease and
    request are durable); the next session's recovery removes the orphan request, closes the pending receipt as
    interrupted (cost unknown: `muse cost` never under-reports), the call as failed and the run as interrupted.
    The first attempt's completed receipt is kept."""
    book = make_book({"judge": [{"raw_text": "bad"}, {"output": {"verdict": "v", "score": 1}}]}, extra_toml=PRICES)
    run_id = _killed_at(book, "send", 2)
    leases = book.vault_dir / "leases"
    (lease,) = [p for p in leases.iterdir() if p.suffix == ".lease"]
    orphan = json.loads(lease.read_text().splitlines()[1])["intent"]
    assert Vault(book.vault_dir).has(orphan)
    assert [r.outcome for r in list_receipts(book.db, run_id)] == ["failed", "pending"]

    report = _recover(book)
    assert report.crashed == 1 and report.orphans_removed == 1 and report.interrupted_runs == [run_id]
    assert report.interrupted_attempts == 1
    assert not Vault(book.vault_dir).has(orphan)
    db = book.db
    assert db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()[0] == "interrupted"
    call = db.execute("SELECT status, error_code, attempts FROM model_calls WHERE run_id = ?", (run_id,)).fetchone()
    assert tuple(call) == ("failed", "MODEL_INTERRUPTED", 2)
    receipts = list_receipts(db, run_id)
    assert [(r.outcome, r.error_code) for r in receipts] == [
        ("failed", "MODEL_OUTPUT_NOT_JSON"),
        ("interrupted", "MODEL_INTERRUPTED"),
    ]
    assert receipts[0].cost is not None and receipts[1].cost is None and receipts[1].ended_at
    line = cost_summary(db, run_id).total
    assert line.cost is None and line.unknown_cost_attempts == 1 and line.known_cost == receipts[0].cost


def test_a_run_killed_before_any_lease_is_closed_by_its_pid(make_book: Any, muse: Any) -> None:
    """Killed before the first lease file exists (at its write point), the run is named by no lease: its pid and
    process start time close it as interrupted and its pending receipt as interrupted; `muse cost` shows the
    cost as unknown; the next command that asks a model says so."""
    book = make_book({"judge": [{"output": {"verdict": "v", "score": 1}}]}, extra_toml=PRICES)
    run_id = _killed_at(book, "write", 1)
    assert not any((book.vault_dir / "leases").iterdir())
    pid = book.db.execute("SELECT pid FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
    assert isinstance(pid, int) and pid != os.getpid()
    cost = json.loads(muse("cost", "--json", cwd=book.root).stdout)  # in flight, before recovery: unknown too
    assert cost["total"]["cost"] is None and cost["total"]["unknown_cost_attempts"] == 1
    calls = json.loads(muse("calls", "--json", cwd=book.root).stdout)
    assert [(r["outcome"], r["ended_at"], r["cost"]) for r in calls["receipts"]] == [("pending", None, None)]
    assert "#1 pending" in muse("calls", cwd=book.root).stdout
    result = muse("vault", "recover", "--json", cwd=book.root)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["interrupted_runs"] == [run_id] and doc["interrupted_attempts"] == 1 and doc["crashed"] == 0
    assert book.db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()[0] == "interrupted"
    assert [r.outcome for r in list_receipts(book.db, run_id)] == ["interrupted"]


def test_the_next_command_says_what_it_recovered(make_book: Any, muse: Any) -> None:
    """A command whose run starts after a killed one prints (stderr) that requests were in flight and their cost
    is unknown: a re-run never sends again silently."""
    book = make_book({"judge": [{"output": {"verdict": "v", "score": 1}}]}, extra_toml=PRICES)
    run_id = _killed_at(book, "send", 1)
    result = muse("models", "check", cwd=book.root)
    assert f"1 earlier run(s) had died ({run_id}); 1 model request(s) they had in flight" in result.stderr
    assert "cost unknown" in result.stderr
    again = muse("models", "check", cwd=book.root)
    assert "earlier run" not in again.stderr  # said once: the next run has nothing left to recover


@pytest.mark.parametrize("refused", ["INSERT", pytest.param("UPDATE", marks=pytest.mark.unsettled)])
def test_an_unrecordable_receipt_fails_the_call_closed(make_book: Any, refused: str) -> None:
    """If the pending receipt cannot be written, nothing is sent; if the accepted attempt's receipt cannot be
    completed, the output is not handed back (its pending receipt stays, cost unknown)."""
    book = make_book({"judge": [{"output": {"verdict": "v", "score": 1}}]})
    sent: list[str] = []

    async def go() -> None:
        async with ModelSession.open(book, run_kind="test") as session:
            session.conn.execute(
                f"CREATE TEMP TRIGGER refuse BEFORE {refused} ON receipts BEGIN SELECT RAISE(ABORT, 'disk full'); END"
            )
            with hooked(lambda kind, target: sent.append(kind) if kind == "send" else None):
                await session.call(task_call(role="judge", schema=Verdict, messages=MESSAGES))

    with pytest.raises(FailedClosed) as info:
        asyncio.run(go())
    assert info.value.code == "RECEIPT_WRITE_FAILED" and info.value.exit_code == 3
    receipts = list_receipts(book.db)
    if refused == "INSERT":
        assert receipts == [] and sent == []
    else:
        assert sent == ["send"] and [(r.outcome, r.cost) for r in receipts] == [("pending", None)]


def test_a_killed_writer_leaves_no_temp_debris(tmp_path: Path) -> None:
    """A chapter write killed between its temp file and the rename leaves `chapters/.0001.md.<pid>.….tmp`; the next
    command that opens the book removes it (a live writer's temp file is left alone)."""
    from novelmuse.book import find_book
    from novelmuse.book._files import atomic_write_text

    root = tmp_path / "book"
    (root / "chapters").mkdir(parents=True)
    (root / "book.toml").write_text('[book]\ntitle = "测试"\n', encoding="utf-8")
    script = (
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2] / 'src')!r})\n"
        "from pathlib import Path\n"
        "from novelmuse.book._files import atomic_write_text\n"
        "from novelmuse.iopoints import hooked\n"
        "def kill(kind, target):\n"
        "    if kind == 'rename': os.kill(os.getpid(), signal.SIGKILL)\n"
        "with hooked(kill):\n"
        f"    atomic_write_text(Path({str(root / 'chapters' / '0001.md')!r}), '第一回\\n正文')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    (debris,) = (root / "chapters").iterdir()
    assert debris.name.startswith(".0001.md.") and debris.name.endswith(".tmp")
    live = root / "chapters" / f".0002.md.{os.getpid()}.abcdefgh.tmp"
    live.write_text("in progress")
    find_book(root)
    assert sorted(p.name for p in (root / "chapters").iterdir()) == [live.name]
    atomic_write_text(root / "chapters" / "0001.md", "第一回\n正文")
    assert (root / "chapters" / "0001.md").read_text(encoding="utf-8") == "第一回\n正文"
