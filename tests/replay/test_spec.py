"""The gate spec: the issue's default thresholds, pinned by sha256; an edit without a version bump fails to load."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest

from novelmuse.book import HARD_KINDS
from novelmuse.errors import InputError
from novelmuse.replay import gate_spec_bytes, load_gate_spec
from novelmuse.text import sha256_hex

SPECS = Path(str(resources.files("novelmuse.replay") / "specs"))


def test_the_default_spec_is_the_one_that_measures_and_v1_is_kept_but_retired() -> None:
    spec = load_gate_spec()
    assert (spec.id, spec.version, spec.issues) == ("writer-gate-spec-v2", 2, True)
    assert (spec.set.min_items, spec.set.min_items_per_scene_type) == (12, 2)
    assert (spec.gate_a.min_kappa, spec.gate_a.min_fails_each_side, spec.gate_a.arms) == (0.6, 3, ["A", "C"])
    assert spec.gate_a.min_agreement is None
    assert (spec.gate_b.baseline, spec.gate_b.candidate, spec.gate_b.diagnostic) == ("A", "C", ["B"])
    assert (spec.gate_b.min_effect, spec.gate_b.max_p_value) == (0.5, 0.05) and spec.gate_b.measures_improvement
    assert (spec.gate_b.min_general_mean_delta, spec.gate_b.min_scene_mean_delta) == (0, -0.5)
    assert spec.sha256 == sha256_hex((SPECS / spec.file).read_bytes())
    v1 = load_gate_spec(1)
    assert v1.gate_a.min_agreement == 0.9 and not v1.issues and not v1.gate_b.measures_improvement


def test_the_hard_kinds_are_the_outlines_constraint_kinds() -> None:
    """The spec's verdict kinds are the fine outline's hard-constraint kinds: a change there needs a new spec."""
    kinds = load_gate_spec().kinds
    assert set(kinds.hard_constraint) == set(HARD_KINDS)
    assert {"event", "result"} == set(kinds.hard_event)


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    folder = tmp_path / "specs"
    shutil.copytree(SPECS, folder)
    return folder


def test_an_edit_without_a_version_bump_fails_to_load(specs: Path) -> None:
    path = specs / "writer_gate.v2.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("min_kappa: 0.6", "min_kappa: 0.5"))
    with pytest.raises(InputError) as exc:
        load_gate_spec(folder=specs)
    assert exc.value.code == "GATE_SPEC_HASH_MISMATCH"
    with pytest.raises(InputError):
        gate_spec_bytes("writer-gate-spec-v2@2", folder=specs)


def test_a_new_version_is_a_new_registered_file(specs: Path) -> None:
    text = (specs / "writer_gate.v2.yaml").read_text(encoding="utf-8")
    v3 = text.replace("id: writer-gate-spec-v2\nversion: 2", "id: writer-gate-spec-v3\nversion: 3").replace(
        "min_kappa: 0.6", "min_kappa: 0.7"
    )
    (specs / "writer_gate.v3.yaml").write_text(v3, encoding="utf-8")
    registry = specs / "registry.yaml"
    entry = (
        f"  - id: writer-gate-spec-v3\n    version: 3\n    file: writer_gate.v3.yaml\n    sha256: {sha256_hex(v3)}\n"
    )
    registry.write_text(registry.read_text(encoding="utf-8") + entry, encoding="utf-8")
    assert load_gate_spec(folder=specs).gate_a.min_kappa == 0.7
    assert load_gate_spec(2, folder=specs).gate_a.min_kappa == 0.6  # old reports stay checkable
    assert load_gate_spec(1, folder=specs).gate_a.min_agreement == 0.9
    with pytest.raises(InputError) as exc:
        load_gate_spec(4, folder=specs)
    assert exc.value.code == "GATE_SPEC_NOT_REGISTERED"


def _edit_and_repin(specs: Path, old: str, new: str) -> None:
    """Edit the current spec (v2) and pin the edited bytes in the registry (as a careless maintainer would)."""
    path = specs / "writer_gate.v2.yaml"
    before = sha256_hex(path.read_bytes())
    text = path.read_text(encoding="utf-8").replace(old, new)
    path.write_text(text, encoding="utf-8")
    registry = specs / "registry.yaml"
    registry.write_text(registry.read_text(encoding="utf-8").replace(before, sha256_hex(text)))


def test_a_file_that_names_another_version_is_refused(specs: Path) -> None:
    _edit_and_repin(specs, "version: 2", "version: 7")
    with pytest.raises(InputError) as exc:
        load_gate_spec(folder=specs)
    assert exc.value.code == "GATE_SPEC_NOT_REGISTERED"


def test_an_invalid_spec_is_named(specs: Path) -> None:
    _edit_and_repin(specs, "hard_event: [event, result]", "hard_event: [event, climax]")
    with pytest.raises(InputError) as exc:
        load_gate_spec(folder=specs)
    assert exc.value.code == "GATE_SPEC_INVALID" and "hard_event" in exc.value.what


def test_spec_bytes_by_locator() -> None:
    spec = load_gate_spec()
    data = gate_spec_bytes(spec.locator)
    assert data is not None and sha256_hex(data) == spec.sha256
    assert gate_spec_bytes("writer-gate-spec-v1@9") is None and gate_spec_bytes("nonsense") is None
    old = gate_spec_bytes("writer-gate-spec-v1@1")  # a retired spec stays readable: its reports stay checkable
    assert old is not None and sha256_hex(old) == load_gate_spec(1).sha256
