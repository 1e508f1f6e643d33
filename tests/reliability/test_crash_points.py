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
