"""`muse gate keygen / verify / show / reindex`, and the planted-key test: after a full run with the key set,
its bytes are in no file of the book and in no output."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from novelmuse.book import Book, find_book, init_book
from novelmuse.replay import GateIssuer, default_key_path, load_signing_key
from novelmuse.text import sha256_hex

from ..conftest import muse_subprocess
from ._helpers import Store, honest_doc, prepare_run, sample

JOURNAL = Path(".muse/gates/journal.jsonl")


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Store:
    """The runs the replay orchestrator would have recorded: `muse gate verify/show` rebuild every gate input
    from the store, never from its file, so the chain tests' hand-made runs are served as if recorded."""
    recorded = Store()
    monkeypatch.setattr("novelmuse.cli._cmd_gate.gate_input_rebuilder", lambda book: recorded.rebuild)
    return recorded


@pytest.fixture
def cli(muse, user_config: Path, monkeypatch: pytest.MonkeyPatch, store: Store):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MUSE_CONFIG", str(user_config))  # the muse fixture points it elsewhere
    return muse


def _add_signer(root: Path, signer: str) -> Book:
    with (root / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[gate]\nsigner = "{signer}"\n')
    return find_book(root)


def _issue_some(book: Book, store: Store) -> None:
    failed = honest_doc()
    sample(failed, "i01", "A").update(ok=False, anomaly={"category": "judge", "code": "JUDGE_UNSTABLE"})
    with GateIssuer.open(book) as issuer:
        for gate, doc, run in [("A", honest_doc(), "R1"), ("B", honest_doc(), "R1"), ("B", failed, "R2")]:
            gi, bindings = prepare_run(book, doc, run)
            store.runs[bindings.gate_input.locator] = gi
            issuer.issue(gate, gi, bindings)  # type: ignore[arg-type]


def test_keygen_prints_the_public_key_and_never_overwrites(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    init_book(tmp_path / "book")
    r = cli("gate", "keygen", "--json", cwd=tmp_path / "book")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["key_path"] == str(default_key_path()) and doc["signer"].startswith("ed25519:")
    assert doc["book"] == str((tmp_path / "book").resolve())
    again = cli("gate", "keygen", cwd=tmp_path)  # outside any book: the user config alone
    assert again.exit_code == 2 and again.stderr.startswith("error[GATE_KEY_EXISTS]")
    assert doc["signer"] in again.stderr  # the existing key's public key, so a second book can use it
    human = cli("gate", "keygen", "--book", tmp_path / "book")
    assert human.exit_code == 2


def test_verify_show_and_reindex(cli, gate_book: Book, store: Store) -> None:  # type: ignore[no-untyped-def]
    r = cli("gate", "verify", "--json", "--book", gate_book.root)
    assert r.exit_code == 0 and json.loads(r.stdout)["outcome"] == "empty"
    _issue_some(gate_book, store)
    r = cli("gate", "verify", "--book", gate_book.root)
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "passed" in r.stdout and "5 entries (3 report(s), 2 receipt(s))" in r.stdout
    r = cli("gate", "show", "--json", "--book", gate_book.root)
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and [(e["seq"], e["kind"], e["outcome"]) for e in doc["listing"]] == [
        (1, "report", "passed"),
        (2, "receipt", "passed"),
        (3, "report", "passed"),
        (4, "receipt", "passed"),
        (5, "report", "failed"),
    ]
    assert doc["listing"][1]["run_config_sha256"] == sha256_hex("config of R1")
    by_config = {c["run_config_sha256"]: c for c in doc["configurations"]}
    one = by_config[sha256_hex("config of R1")]
    assert (one["runs"], one["evaluations"], one["current"]) == (1, 2, False)
    assert {g: (e["seq"], e["outcome"], e["receipt_seq"]) for g, e in one["latest"].items()} == {
        "A": (1, "passed", 2),
        "B": (3, "passed", 4),
    }
    r = cli("gate", "show", "--book", gate_book.root)
    assert "2 evaluation(s) over 1 replay run(s)" in r.stdout
    assert "Gate B, latest (the one that counts): passed — seq 3, run R1" in r.stdout
    assert "JUDGE_UNSTABLE" in r.stdout and "→ receipt 2" in r.stdout
    assert f"earned by writer configuration {sha256_hex('config of R1')[:16]}…" in r.stdout
    gate_book.db.execute("DELETE FROM gate_entries")
    r = cli("gate", "reindex", "--json", "--book", gate_book.root)
    assert r.exit_code == 0 and json.loads(r.stdout)["indexed"] == 5


def test_a_tampered_journal_exits_3_naming_the_seq(cli, gate_book: Book, store: Store) -> None:  # type: ignore[no-untyped-def]
    _issue_some(gate_book, store)
    path = gate_book.root / JOURNAL
    path.write_bytes(path.read_bytes().replace(b'"outcome":"failed"', b'"outcome":"passed"'))
    r = cli("gate", "verify", "--book", gate_book.root)
    assert r.exit_code == 3
    assert r.stderr.startswith("error[GATE_JOURNAL_INVALID]:") and "first at seq 5 (GATE_ENTRY_HASH)" in r.stderr
    r = cli("gate", "verify", "--json", "--book", gate_book.root)
    doc = json.loads(r.stdout)  # exactly one JSON document
    assert r.exit_code == 3 and doc["ok"] is False and doc["problems"][0]["seq"] == 5


def test_verify_needs_the_signer(cli, tmp_path: Path, gate_book: Book, store: Store) -> None:  # type: ignore[no-untyped-def]
    _issue_some(gate_book, store)
    toml = gate_book.root / "book.toml"
    toml.write_text(toml.read_text(encoding="utf-8").split("[gate]")[0], encoding="utf-8")
    r = cli("gate", "verify", "--json", "--book", gate_book.root)
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "GATE_SIGNER_MISSING"
    # the key exists: the fix is the line to add (its public key), not "make a key"
    public = load_signing_key(default_key_path()).public.text
    human = cli("gate", "verify", "--book", gate_book.root)
    assert f'signer = "{public}"' in human.stderr and "keygen" not in human.stderr
    default_key_path().unlink()
    assert "run `muse gate keygen`" in cli("gate", "verify", "--book", gate_book.root).stderr


def _secret_forms(pem: bytes) -> list[bytes]:
    key = serialization.load_pem_private_key(pem, password=None)
    raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    body = b"".join(pem.splitlines()[1:-1])
    return [raw, raw.hex().encode(), base64.b64encode(raw), base64.b64encode(raw).rstrip(b"="), body, body[16:48]]


def test_the_private_key_is_nowhere_in_the_book_or_any_output(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, user_config: Path, store: Store
) -> None:
    root = tmp_path / "book"
    init_book(root)
    first = cli("gate", "keygen", cwd=root)
    signer = first.stdout.split('signer = "')[1].split('"')[0]
    refused = [cli("gate", "keygen", "--json", cwd=root)]  # an existing key: its error names the PUBLIC key only
    book = _add_signer(root, signer)
    _issue_some(book, store)
    ran = [first]
    for args in (["verify"], ["verify", "--json", "--all-signatures"], ["show"], ["show", "--json"], ["reindex"]):
        ran.append(cli("gate", *args, "--book", root))
    env = {"MUSE_CONFIG": str(user_config)}
    # a real process has no recorded replay run behind these hand-made gate inputs: verify refuses them (拒绝自算
    # JSON) — the secret is in none of that output either
    refused.append(muse_subprocess("gate", "show", "--json", "--book", root, env=env))
    refused.append(muse_subprocess("gate", "keygen", "--book", root, env=env))
    assert [r.exit_code for r in ran] == [0] * len(ran) and [r.exit_code for r in refused] == [2, 3, 2]
    secrets = _secret_forms(default_key_path().read_bytes())
    for out in ran + refused:
        text = (out.stdout + out.stderr).encode()
        assert not any(s in text for s in secrets)
    files = [p for p in root.rglob("*") if p.is_file()]
    assert {"journal.jsonl", "muse.db", "gate-input.json"} <= {p.name for p in files}
    for path in files:
        data = path.read_bytes()
        assert not any(s in data for s in secrets), path


def test_a_hand_written_gate_input_never_verifies(cli, gate_book: Book, store: Store) -> None:  # type: ignore[no-untyped-def]
    """Issue 13 (拒绝自算 JSON): a receipt bound to a gate-input.json that no recorded replay run rebuilds fails
    `muse gate verify` by seq, even signed by the book's own key and re-hashing byte for byte as a file."""
    _issue_some(gate_book, store)
    store.runs.clear()  # the same journal, but no run in the store behind its gate inputs
    r = cli("gate", "verify", "--json", "--book", gate_book.root)
    doc = json.loads(r.stdout)
    assert r.exit_code == 3 and doc["ok"] is False
    assert {(p["seq"], p["code"]) for p in doc["problems"]} == {
        (2, "GATE_ARTEFACT_CHANGED"),
        (4, "GATE_ARTEFACT_CHANGED"),
        (5, "GATE_ARTEFACT_CHANGED"),
    }
    assert all("GATE_INPUT_NOT_IN_STORE" in p["what"] for p in doc["problems"])
