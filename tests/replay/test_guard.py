"""The writer configuration hash and the fine-outline entry guard: admitted only by verified, passed Gate A and
Gate B receipts of the current writer configuration whose gate inputs the store rebuilds; every other journal
is refused, naming the gate, the configuration or the seq."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from novelmuse.book import Book, find_book
from novelmuse.errors import FailedClosed
from novelmuse.replay import (
    EntryGuard,
    GateSpec,
    _writer_config,
    check_fine_outline_entry,
    load_gate_spec,
    require_fine_outline_entry,
    writer_config,
    writer_config_sha256,
)
from novelmuse.replay._chain import encode_entry
from novelmuse.replay._keys import SigningKey
from novelmuse.roles import _task
from novelmuse.text import sha256_hex

from ..roles.test_tasks import bump, edit, prompts_copy  # noqa: F401  (prompts_copy: a fixture)
from ._helpers import Store, honest_doc, issue, sample

JOURNAL = Path(".muse/gates/journal.jsonl")


def guard(book: Book, store: Store | None) -> EntryGuard:
    return check_fine_outline_entry(book, gate_inputs=store.rebuild if store is not None else None)


def codes(g: EntryGuard) -> list[tuple[int | None, str]]:
    return [(f.seq, f.code) for f in g.findings]


@pytest.fixture
def store() -> Store:
    return Store()


@pytest.fixture
def admitted(gate_book: Book, store: Store) -> Book:
    """A journal holding passed Gate A (seq 1, 2) and Gate B (seq 3, 4) receipts of the current writer."""
    issue(gate_book, "A", store)
    issue(gate_book, "B", store)
    g = guard(gate_book, store)
    assert g.admitted and g.receipts == {"A": 2, "B": 4} and g.findings == [], g.findings
    return gate_book


def lines(book: Book) -> list[bytes]:
    return (book.root / JOURNAL).read_bytes().splitlines(keepends=True)


def write_lines(book: Book, new: list[bytes]) -> None:
    (book.root / JOURNAL).write_bytes(b"".join(new))


# ── the writer configuration ─────────────────────────────────────────────────────────────────────────────


def _with_toml(book: Book, extra: str) -> Book:
    with (book.root / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write(extra)
    return find_book(book.root)


def test_the_writer_configuration_binds_prompts_models_arm_spec_and_budgets(gate_book: Book, tmp_path: Path) -> None:
    config = writer_config(gate_book)
    tasks = {(t.role, t.task) for t in config.tasks}
    assert {("writer", "write"), ("writer", "write_final"), ("writer", "correction")} <= tasks
    assert {("extractor", "extract"), ("judge", "writer_replay")} <= tasks
    assert not {t for t in tasks if t[1] in ("models_check", "rewrite", "polish") or t[0] in ("reviewer", "editor")}
    assert (config.arm, config.baseline_arm) == ("C", "A")
    assert config.gate_spec.sha256 == load_gate_spec().sha256
    assert [m.role for m in config.models] == ["writer", "detector", "extractor", "judge"]
    assert all(m.kind is None for m in config.models)  # no model configured yet
    base = config.sha256
    assert base == writer_config_sha256(gate_book) == writer_config(gate_book).sha256  # deterministic

    providers = (
        '\n[providers.ds]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        '[providers.cli]\nkind = "claude-cli"\npath = "/opt/claude"\nsha256 = "' + "a" * 64 + '"\nversion = "2.1.211"\n'
    )
    book = _with_toml(gate_book, providers + '[roles]\ndefault = "ds:deepseek-chat"\n')
    with_model = writer_config_sha256(book)
    assert with_model != base
    (book.root / "book.toml").write_text(
        (book.root / "book.toml").read_text(encoding="utf-8") + 'reviewer = "cli:claude-opus-4"\n', encoding="utf-8"
    )
    assert writer_config_sha256(find_book(book.root)) == with_model  # the reviewer is not part of the writer
    text = (book.root / "book.toml").read_text(encoding="utf-8")
    (book.root / "book.toml").write_text(text + 'judge = "cli:claude-opus-4"\n', encoding="utf-8")
    judged = find_book(book.root)
    pin = next(m for m in writer_config(judged).models if m.role == "judge")
    assert (pin.kind, pin.model, pin.binary_version) == ("claude-cli", "claude-opus-4", "2.1.211")
    assert writer_config_sha256(judged) != with_model
    (book.root / "book.toml").write_text(text.replace("a" * 64, "b" * 64) + 'judge = "cli:claude-opus-4"\n')
    assert writer_config_sha256(find_book(book.root)) != writer_config_sha256(judged)  # another CLI binary

    budget = _with_toml(gate_book, "\n[writing]\nretrieval_chars = 5000\n")
    assert writer_config_sha256(budget) != base

    assert writer_config(gate_book, spec=spec_v2(tmp_path)).sha256 != base


def spec_v2(tmp_path: Path) -> GateSpec:
    """A newer registered version of the gate spec (a stricter κ threshold), in a folder of its own."""
    spec_dir = tmp_path / "specs"
    shutil.copytree(Path(load_gate_spec.__code__.co_filename).parent / "specs", spec_dir)
    v3 = (spec_dir / "writer_gate.v2.yaml").read_text(encoding="utf-8").replace("version: 2", "version: 3", 1)
    v3 = v3.replace("min_kappa: 0.6", "min_kappa: 0.7")
    (spec_dir / "writer_gate.v3.yaml").write_text(v3, encoding="utf-8")
    registry = yaml.safe_load((spec_dir / "registry.yaml").read_text(encoding="utf-8"))
    registry["specs"].append(
        {"id": "writer-gate-spec-v2", "version": 3, "file": "writer_gate.v3.yaml", "sha256": sha256_hex(v3.encode())}
    )
    (spec_dir / "registry.yaml").write_text(yaml.safe_dump(registry), encoding="utf-8")
    return load_gate_spec(3, folder=spec_dir)


def test_a_receipt_that_binds_another_spec_than_its_configuration_names_is_refused(
    gate_book: Book, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken (or lying) issuer claims the writer configuration of spec v2 for runs measured by spec v1."""
    v2 = spec_v2(tmp_path)
    monkeypatch.setattr(_writer_config, "load_gate_spec", lambda: v2)
    issue(gate_book, "A", store)  # binds spec v1, claims the configuration under v2
    issue(gate_book, "B", store, run="RUN2")
    g = guard(gate_book, store)
    assert not g.admitted and g.verified == "passed"
    assert [(f.seq, f.code) for f in g.findings if f.seq] == [
        (2, "GUARD_RECEIPT_INCONSISTENT"),
        (4, "GUARD_RECEIPT_INCONSISTENT"),
    ]


def bump_write_prompt(copy: Path, extra: str) -> None:
    """Tune the writer's write prompt and register the next version of every task that renders it."""
    template = copy / "writer" / "write.txt"
    edit(template, template.read_text(encoding="utf-8") + extra)
    registry = yaml.safe_load((copy / "prompts.yaml").read_text(encoding="utf-8"))
    latest = {(e["role"], e["task"]): e for e in sorted(registry["tasks"], key=lambda e: e["version"])}
    for (role, task), entry in sorted(latest.items()):
        if "writer/write.txt" in entry["files"]:
            bump(copy, role, task, entry["files"])


@pytest.mark.usefixtures("prompts_copy")  # the roles load an editable copy of their templates
def test_after_the_writer_prompt_changes_old_receipts_no_longer_admit(admitted: Book, store: Store) -> None:
    before = writer_config_sha256(admitted)
    bump_write_prompt(_task._prompts_dir(), "\n章末务必留下悬念。\n")
    after = writer_config_sha256(admitted)
    assert after != before
    g = guard(admitted, store)
    assert not g.admitted and g.verified == "passed" and g.receipts == {"A": None, "B": None}
    assert [(f.code, f.gate) for f in g.findings] == [("GUARD_NO_RECEIPT", "A"), ("GUARD_NO_RECEIPT", "B")]
    assert after in g.findings[0].what and before[:12] in g.findings[0].what and "seq 2" in g.findings[0].what
    with pytest.raises(FailedClosed) as exc:
        require_fine_outline_entry(admitted, gate_inputs=store.rebuild)
    assert exc.value.code == "FINE_OUTLINE_GUARD" and exc.value.exit_code == 3 and after[:12] in exc.value.what
    # the replay experiments rerun for the new writer: admitted again
    issue(admitted, "A", store, run="RUN3")
    issue(admitted, "B", store, run="RUN4")
    assert guard(admitted, store).receipts == {"A": 6, "B": 8}


# ── the guard ────────────────────────────────────────────────────────────────────────────────────────────


def test_an_empty_journal_or_one_gate_only_is_refused_naming_the_gate(gate_book: Book, store: Store) -> None:
    g = guard(gate_book, store)
    current = writer_config_sha256(gate_book)
    assert not g.admitted and g.verified == "empty"
    assert [(f.code, f.gate) for f in g.findings] == [("GUARD_NO_RECEIPT", "A"), ("GUARD_NO_RECEIPT", "B")]
    assert current in g.findings[1].what
    issue(gate_book, "A", store)
    g = guard(gate_book, store)
    assert g.receipts == {"A": 2, "B": None} and [(f.code, f.gate) for f in g.findings] == [("GUARD_NO_RECEIPT", "B")]
    assert "Gate B" in require_error(gate_book, store)


def require_error(book: Book, store: Store | None) -> str:
    with pytest.raises(FailedClosed) as exc:
        require_fine_outline_entry(book, gate_inputs=store.rebuild if store is not None else None)
    assert exc.value.code == "FINE_OUTLINE_GUARD"
    return exc.value.what


def test_failed_and_insufficient_reports_admit_nothing(gate_book: Book, store: Store) -> None:
    failed = honest_doc()
    sample(failed, "i03", "C").update(ok=False, anomaly={"category": "schema", "code": "MODEL_SCHEMA_INVALID"})
    issue(gate_book, "A", store, doc=honest_doc(n=5))  # insufficient
    issue(gate_book, "B", store, doc=failed, run="RUN2")  # failed
    g = guard(gate_book, store)
    assert g.verified == "passed" and g.entries == 2 and g.receipts == {"A": None, "B": None} and not g.admitted


def test_receipts_of_another_configuration_do_not_count(gate_book: Book, store: Store) -> None:
    issue(gate_book, "A", store)
    issue(gate_book, "B", store, run="RUN2", config=sha256_hex("some other writer"))
    g = guard(gate_book, store)
    assert g.receipts == {"A": 2, "B": None}
    assert sha256_hex("some other writer")[:12] in g.findings[0].what and "seq 4" in g.findings[0].what


def test_without_a_gate_input_builder_nothing_is_admitted(admitted: Book) -> None:
    g = guard(admitted, None)
    assert not g.admitted and g.findings[0].code == "GATE_INPUT_BUILDER_MISSING"
    assert (2, "GATE_ARTEFACT_CHANGED") in codes(g) and (4, "GATE_ARTEFACT_CHANGED") in codes(g)
    assert "GATE_INPUT_BUILDER_MISSING" in require_error(admitted, None)


def test_a_hand_written_gate_input_never_admits(gate_book: Book, store: Store) -> None:
    """Someone with the signing key issues a Gate B receipt from a gate input they wrote themselves: it was
    issued and signed, the chain is intact — and the store rebuilds no such run, so it is named by seq."""
    issue(gate_book, "A", store)
    issue(gate_book, "B", None, run="FORGED")
    g = guard(gate_book, store)
    assert not g.admitted and (4, "GATE_ARTEFACT_CHANGED") in codes(g)
    assert "GATE_INPUT_NOT_IN_STORE" in next(f.what for f in g.findings if f.seq == 4)
    # a gate input file edited into a better one after the run: the store rebuilds what the run really produced
    issue(gate_book, "B", store, run="RUN3")
    real = store.runs[".muse/replay/RUN3/gate-input.json"]
    better = real.model_copy(update={"samples": [s.model_copy(update={"scores": {}}) for s in real.samples]})
    store.runs[".muse/replay/RUN3/gate-input.json"] = better
    assert (6, "GATE_ARTEFACT_CHANGED") in codes(guard(gate_book, store))


def test_every_kind_of_tampering_is_refused_naming_the_seq(admitted: Book, store: Store) -> None:
    original = lines(admitted)
    # a flipped byte in the Gate A report
    line = bytearray(original[0])
    at = line.index(b'"outcome":"') + 12
    line[at] = ord("X")
    write_lines(admitted, [bytes(line), *original[1:]])
    g = guard(admitted, store)
    assert not g.admitted and g.findings[0].seq == 1 and "seq 1" in require_error(admitted, store)
    # a deleted entry (the Gate A receipt)
    write_lines(admitted, [original[0], *original[2:]])
    g = guard(admitted, store)
    assert not g.admitted and (3, "GATE_ENTRY_SEQ") in codes(g), codes(g)
    # a reordered journal
    write_lines(admitted, [original[2], original[3], original[0], original[1]])
    assert not guard(admitted, store).admitted
    # a forged signature on the last entry (another key)
    entry = json.loads(original[3])
    forged = SigningKey(Ed25519PrivateKey.generate()).sign(b"novelmuse-gate-journal-v1\n" + entry["sha256"].encode())
    entry["signature"] = base64.b64encode(forged).decode("ascii")
    line4 = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode() + b"\n"
    write_lines(admitted, [*original[:3], line4])
    assert (4, "GATE_SIGNATURE") in codes(guard(admitted, store))
    # a whole new receipt entry signed by another key, appended: chain intact, signature not the book's
    body = json.loads(original[3])["body"]
    prev = sha256_hex(original[3].rstrip(b"\n"))
    extra, _ = encode_entry(5, prev, "receipt", body, SigningKey(Ed25519PrivateKey.generate()))
    write_lines(admitted, [*original, extra + b"\n"])
    assert (5, "GATE_SIGNATURE") in codes(guard(admitted, store))
    # restored: admitted again
    write_lines(admitted, original)
    assert guard(admitted, store).admitted


def test_a_bound_artefact_that_no_longer_rehashes_is_named(admitted: Book, store: Store) -> None:
    manifest = next((admitted.root / ".muse" / "manifests").glob("RUN1-*.json"))
    manifest.write_text("edited after the run", encoding="utf-8")
    g = guard(admitted, store)
    assert not g.admitted and (4, "GATE_ARTEFACT_CHANGED") in codes(g)


def test_a_book_without_a_signer_cannot_be_verified(admitted: Book, store: Store) -> None:
    text = (admitted.root / "book.toml").read_text(encoding="utf-8")
    (admitted.root / "book.toml").write_text(text.split("\n[gate]")[0] + "\n", encoding="utf-8")
    g = guard(find_book(admitted.root), store)
    assert not g.admitted and g.verified == "not_run" and g.findings[0].code == "GATE_SIGNER_MISSING"


def test_receipts_bind_the_code_changing_one_constant_changes_the_writer(gate_book: Book, tmp_path: Path) -> None:
    """Finding 6: arm C's retrieval constants edited in writing/_arms.py left every receipt valid. The writer
    configuration now binds the source of the gated modules: a copy of the package with one constant changed is
    another writer (computed in a subprocess that imports the copy)."""
    import subprocess
    import sys

    from novelmuse.replay._writer_config import CODE_MODULES

    assert "writing/_arms.py" in CODE_MODULES and "replay/_gates.py" in CODE_MODULES
    src = Path(writer_config.__code__.co_filename).parents[2]
    copy = tmp_path / "src"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
    arms = copy / "novelmuse" / "writing" / "_arms.py"
    text = arms.read_text(encoding="utf-8")
    constant = next(line for line in text.splitlines() if line.split("=")[0].strip().isupper() and "=" in line)
    name, _, value = constant.partition("=")
    arms.write_text(text.replace(constant, f"{name}= {value.strip()} + 1  # changed", 1), encoding="utf-8")
    probe = (
        "import sys, pathlib; from novelmuse.book import find_book; from novelmuse.replay import writer_config_sha256;"
        "print(writer_config_sha256(find_book(pathlib.Path(sys.argv[1]))))"
    )

    def config_of(path: Path) -> str:
        proc = subprocess.run(
            [sys.executable, "-c", probe, str(gate_book.root)],
            env={"PYTHONPATH": str(path), "PATH": "/usr/bin:/bin", "MUSE_CONFIG": "/nonexistent/config.toml"},
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    assert config_of(src) == writer_config_sha256(gate_book)
    assert config_of(copy) != writer_config_sha256(gate_book)
