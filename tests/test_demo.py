"""`python3 dev.py demo` = examples/demo.py: the tour runs end to end, says what it shows, changes nothing tracked."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT, SAMPLE_BOOK

DEMO = ROOT / "examples" / "demo.py"


def _tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every file under `root` except the (gitignored) state directory .muse."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".muse" not in p.relative_to(root).parts
    }


def _git_status() -> str:
    proc = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", "examples", ".gitignore"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def _sections(out: str) -> dict[int, str]:
    """The demo's output split at its `==> [N/M]` step headers: step number → header line and output."""
    parts = re.split(r"^(?===> \[\d+/\d+\])", out, flags=re.M)
    return {int(m.group(1)): p for p in parts if (m := re.match(r"==> \[(\d+)/\d+\]", p))}


def test_demo_runs_end_to_end_and_leaves_the_sample_book_untouched(tmp_path: Path) -> None:
    before_tree, before_git = _tree_digest(SAMPLE_BOOK), _git_status()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUSE_")}
    proc = subprocess.run(
        [sys.executable, str(DEMO), "--workdir", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    steps = _sections(proc.stdout)
    assert sorted(steps) == list(range(1, 25))
    by_command = {s.splitlines()[1]: s for s in steps.values()}

    check_all = by_command["$ muse check --book examples/sanguo"]
    assert "后宫" in check_all.splitlines()[0] and "exit 1 is expected" in check_all.splitlines()[0]
    assert re.search(r"error\s*│\s*forbidden\s*│\s*后宫", check_all) and "FAILED:" in check_all
    assert "fact cards STALE" in by_command["$ muse sync --book examples/sanguo"]
    assert "F-outer-troops" in by_command["$ muse ledger --as-of 2 --book examples/sanguo"]
    assert "青龙偃月刀" in by_command["$ muse cards show 云长 --as-of 5 --book examples/sanguo"]

    no_model = by_command["$ muse review 1 --book examples/sanguo"]
    assert re.search(r"consistency_review\s+skipped\(no model configured\)", no_model)
    assert re.search(r"editor_review\s+skipped\(no model configured\)", no_model)
    assert "not_reviewed" in no_model.splitlines()[2]

    outline = by_command["$ muse outline draft 12 --dry-run --book examples/sanguo"]
    assert "would refuse a real run" in outline and "GUARD_NO_RECEIPT" in outline
    assert "陶谦三让徐州" in outline and "no model call, nothing written" in outline

    status = by_command["$ muse status --book examples/sanguo"]
    assert "chapter 2 (chapters/0002.md): forbidden 后宫" in status and "→ muse review 2" in status
    assert "fact cards STALE" in status and "rules.txt line 8" in status

    copy = tmp_path / "sanguo"
    book = f"--book {copy}"
    scripted = by_command[f"$ muse review 2 --diff {book}"]
    assert "SCRIPTED" in scripted.splitlines()[0]
    assert "NOT a real model" in proc.stdout
    assert re.search(r"forbidden_rewrite\s+passed\s+rewrote paragraphs \[19\]", scripted)
    assert re.search(r"editor_review\s+passed\s+verdict accept", scripted)
    assert "review: 1 chapter(s) for the models" in scripted.splitlines()[2]  # the plan, before any request
    head = next(line for line in scripted.splitlines() if line.startswith("第2回 "))
    assert "「官拜河东太守」" in scripted and "finalized" in head
    assert "董太后{+的+}宫中" in scripted  # the diff: the one inserted character, in its context
    # the review ends with the quality gate on the final text, judged against chapter 2's evidence pack
    assert "quality gate 第2回: passed" in scripted and "hard block source_safety: passed" in scripted
    assert "evidence: memory (" in scripted and "OUTLINE_NOT_CONFIRMED" in scripted

    calls = by_command[f"$ muse calls {book}"]
    receipts = [line for line in calls.splitlines()[2:] if "(scripted)" in line]
    assert sorted(line.split()[3] for line in receipts) == ["editor", "judge", "judge", "reviewer", "writer"]

    applied = by_command[f"$ muse review 2 --apply {book}"]
    assert "accepted: written to chapters/0002.md; the text it replaced is kept as revision" in applied
    assert re.search(r"quality_gate\s+│\s+passed\s+│\s+reused", applied)  # the stored decision: nothing judged again
    assert "quality gate 第2回: passed  (resumed" in applied
    incomplete = by_command[f"$ muse check --chapter 2 --normalize {book}"].split("\n", 2)[2]  # output only
    assert "INCOMPLETE" in incomplete and "偏好:写得更有古典味道一些" in incomplete and "后宫" not in incomplete
    assert "written" in by_command[f"$ muse rules normalize --write {book}"]
    assert "# 归一化前原文: 写得更有古典味道一些" in (copy / "rules.txt").read_text(encoding="utf-8")
    after = by_command[f"$ muse check --chapter 2 {book}"].split("\n", 2)[2]  # output only
    assert "0 error(s)" in after and "passed: 1 chapter(s) checked, 0 error(s)" in after
    assert "后宫" not in after and not re.search(r"│\s*error\s*│", after)

    judged = next(s for c, s in by_command.items() if c.startswith("$ muse judge --profile quality_gate"))
    assert "SCRIPTED" in judged.splitlines()[0] and "stable" in judged.splitlines()[2]
    assert "c_4aee = A examples/sanguo/chapters/0002.md" in judged and "c_129f = B " in judged
    assert judged.count("hard block source_safety fired (rule layer)") == 1  # the original, holding 后宫
    assert "quality gate c_129f: passed" in judged and "quality gate c_4aee: failed" in judged

    chapter = (copy / "chapters" / "0002.md").read_text(encoding="utf-8")
    assert "后宫" not in chapter and "皇子协养于董太后的宫中" in chapter
    assert "后宫" in (SAMPLE_BOOK / "chapters" / "0002.md").read_text(encoding="utf-8")
    report = by_command[f"$ muse report --out {tmp_path / 'report'} {book}"]
    assert f"report written: {tmp_path / 'report' / 'index.html'}" in report
    assert (tmp_path / "report" / "chapters" / "0002.html").is_file()
    for page in sorted((tmp_path / "report" / "chapters").glob("*.html")):  # every finding is marked in the text
        html = page.read_text(encoding="utf-8")
        marked = {m for ids in re.findall(r'data-m="([^"]+)"', html) for m in ids.split()}
        linked = set(re.findall(r'href="#m-(m\d+)"', html))
        assert linked <= marked, (page.name, sorted(linked - marked))
    assert (
        "exported 10 chapter(s)"
        in by_command[f"$ muse export --format epub --out {tmp_path / 'sanguo.epub'} --force {book}"]
    )
    written = by_command[f"$ muse write 11 --arm C --apply {book}"]
    assert "arm C: forced by --arm (promotion would use arm A, the baseline" in written
    assert "SCRIPTED" in written.splitlines()[0] and "write chapter 11 (arm C): passed" in written
    assert re.search(r"manifest round 1: [0-9a-f]{64} ← [0-9a-f]{64}", written)
    assert "evidence 1-1 style 「关羽」: served" in written
    assert re.search(r"detector\s+│\s+failed", written) and re.search(r"repair_1\s+│\s+passed", written)
    assert "✗ T2" in written and "✗ entity:典韦" in written and "(the detector claimed 1.00)" in written
    assert "accept: at most 3 call(s)" in written  # the accept's bill, before its judges are called
    assert re.search(r"manifest\s+│\s+passed\s+│\s+rebuilds identically", written)
    assert "accepted: written to chapters/0011.md" in written
    desk = by_command[f"$ muse drafts {book}"]
    assert desk.count("accepted (apply)") == 2
    kept = by_command[f"$ muse revisions 2 {book}"]
    assert "muse review 2 --apply" in kept and "restore" in kept
    new = (copy / "chapters" / "0011.md").read_text(encoding="utf-8")
    assert new.startswith("# 第十一回　刘皇叔北海救孔融") and "却说曹操于黄昏时分引军至西寨" in new
    assert "0 error(s)" in by_command[f"$ muse check --chapter 11 {book}"]
    assert not (SAMPLE_BOOK / "chapters" / "0011.md").exists()
    assert "demo finished: 24 steps" in proc.stdout
    assert _tree_digest(SAMPLE_BOOK) == before_tree
    assert _git_status() == before_git


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """examples/demo.py imported as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("novelmuse_demo", DEMO)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "novelmuse_demo", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_an_unexpected_exit_code_stops_the_demo(
    demo: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = demo.Step("a chapter that does not exist", ("review", "99", "--book", str(SAMPLE_BOOK)))
    after = demo.Step("never reached", ("version",))
    monkeypatch.setattr(demo, "sample_steps", lambda: [bad, after])
    monkeypatch.setattr(demo, "scripted_steps", lambda copy: [])
    assert demo.main(["--workdir", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert "demo stopped: step 1 `muse review 99" in out.err and "exited 2, expected 0" in out.err
    assert "never reached" not in out.out


def test_the_demo_only_recreates_a_copy_it_made(demo: ModuleType, tmp_path: Path) -> None:
    foreign = tmp_path / "sanguo"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(SystemExit, match="DEMO_DIR_NOT_OURS"):
        demo.make_copy(tmp_path)
    assert (foreign / "notes.txt").read_text(encoding="utf-8") == "mine"
    copy = demo.make_copy(tmp_path / "fresh")
    (copy / "chapters" / "0002.md").write_text("# changed\n", encoding="utf-8")
    again = demo.make_copy(tmp_path / "fresh")  # recreated from the sample book
    assert (again / "chapters" / "0002.md").read_bytes() == (SAMPLE_BOOK / "chapters" / "0002.md").read_bytes()
    toml = (again / "book.toml").read_text(encoding="utf-8")
    assert toml.startswith((SAMPLE_BOOK / "book.toml").read_text(encoding="utf-8").rstrip("\n"))
    assert 'kind = "scripted"' in toml and 'default = "script:scripted-demo-1"' in toml


def test_a_second_demo_in_the_same_workdir_is_refused(demo: ModuleType, tmp_path: Path) -> None:
    import fcntl  # the lock is POSIX flock

    with open(tmp_path / "demo.lock", "a", encoding="utf-8") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(SystemExit, match="DEMO_BUSY"):
            demo.main(["--workdir", str(tmp_path)])
    assert not (tmp_path / "sanguo").exists()  # refused before touching anything
