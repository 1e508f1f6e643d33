"""The crash and fault harness on a bounded sample of points (the full run is `python -m tests.reliability.harness`,
documented in the README): every 15th I/O point of `import`, `sync`, `review` and `judge` (the first and the
last always), crashed and failed with every fault that applies there, and kill -9 at the first write or commit;
then the invariants."""

from __future__ import annotations

from pathlib import Path

import pytest

from novelmuse.iopoints import KINDS

from .harness import FAULTS, SCENARIOS, Trials, kill_sample, select

#: The harness checks every trial's book itself; the `recover` scenario's template is a killed run on purpose.
pytestmark = pytest.mark.unsettled


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_crash_and_fault_sample(scenario: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "no-user-config.toml"))
    trials = Trials(scenario, tmp_path / "harness")  # type: ignore[arg-type]
    assert len(trials.points) >= 5  # the scenario reaches the file and store layers
    problems: list[str] = []
    tried = 0
    for index in select(len(trials.points), 15):
        problems += trials.crash_at(index)
        kind = trials.points[index][0]
        for fault, (kinds, _make) in FAULTS.items():
            if kind in kinds:
                problems += trials.fault_at(index, fault)
                tried += 1
    assert tried > 0
    for index in [i for i in kill_sample(trials.points) if trials.points[i][0] in ("write", "commit")][:1]:
        problems += trials.kill_at(index) or []
    assert problems == []


def test_every_point_kind_and_fault_is_exercised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scenarios together reach every kind of I/O point, and every fault applies to some point."""
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "no-user-config.toml"))
    seen = {kind for s in SCENARIOS[2:] for kind, _ in Trials(s, tmp_path / s.name).points}
    assert seen == set(KINDS)
    assert all(set(kinds) & seen for kinds, _make in FAULTS.values())


def _fault_run(tmp_path: Path, name: str, kind: str, fault: str, within: str = "") -> tuple[int, str, Path]:
    """Run scenario `name` with `fault` raised at its last point of `kind` whose target contains `within`; exit
    code, stderr, the book."""
    from .harness import run_muse

    scenario = next(s for s in SCENARIOS if s.name == name)
    trials = Trials(scenario, tmp_path / "harness")
    index = max(i for i, (k, target) in enumerate(trials.points) if k == kind and within in target)
    seen = iter(range(10**6))
    make = FAULTS[fault][1]

    def hook(point_kind: str, target: str) -> None:
        if next(seen) == index:
            raise make()

    work = trials.fresh("faulted")
    code, _out, err = run_muse(scenario.args(work), hook)  # type: ignore[arg-type]
    return code, err, scenario.book(work)


def test_a_full_disk_while_importing_is_file_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC at the last chapter file `muse import` writes: one line FILE_WRITE naming the file and how to fix it,
    exit 2, the chapters written before it whole, no temp file left."""
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "no-user-config.toml"))
    code, err, book = _fault_run(tmp_path, "import", "write", "ENOSPC", within="/chapters/")
    (line,) = [ln for ln in err.splitlines() if ln.startswith("error[")]
    assert code == 2 and line.startswith("error[FILE_WRITE]: cannot write (No space left on device)"), err
    assert "/chapters/" in line
    assert "check that the disk has space" in line
    assert not [p for p in book.rglob("*") if p.name.endswith(".tmp")]


def test_a_failing_commit_is_store_write_and_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLITE_FULL at the last commit of `muse sync`: STORE_WRITE, exit 2, the change rolled back and the database
    intact. (A fault at an early commit — a migration met by an optional cache write — is absorbed: the next
    connection applies it.)"""
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "no-user-config.toml"))
    code, err, book = _fault_run(tmp_path, "sync", "commit", "SQLITE_FULL")
    assert code == 2 and "error[STORE_WRITE]: cannot write the database (database or disk is full)" in err, err
    from .invariants import check_book

    assert check_book(book) == []
