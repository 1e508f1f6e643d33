"""The raw vault: private modes whatever the umask, exclusive content-addressed files, no path escape,
lease-based recovery of crashed attempts (with a real crashed subprocess)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from novelmuse.llm import Vault, VaultError, check_object_name
from novelmuse.text import sha256_hex

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path / ".muse" / "vault")


@pytest.fixture(params=[0o000, 0o022, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_modes_are_private_whatever_the_umask(vault: Vault, umask: int) -> None:
    lease = vault.lease("call_A", 1, "run_X")
    digest = lease.put("请求内容".encode())
    lease.complete()
    obj = vault.root / "raw" / digest[:2] / digest
    assert obj.read_bytes() == "请求内容".encode()
    assert mode(obj) == 0o600
    assert mode(vault.root / "leases" / "call_A-1.done") == 0o600  # completed leases are renamed .done
    assert not (vault.root / "leases" / "call_A-1.lease").exists()
    for d in (vault.root, vault.root / "raw", vault.root / "leases", obj.parent):
        assert mode(d) == 0o700


def test_loosened_directory_is_made_private_again(vault: Vault) -> None:
    vault.lease("call_A", 1, "run_X").put(b"x")
    os.chmod(vault.root, 0o755)
    vault.lease("call_A", 2, "run_X").put(b"y")
    assert mode(vault.root) == 0o700


def test_names_are_content_addresses_and_identical_objects_are_shared(vault: Vault) -> None:
    lease = vault.lease("call_A", 1, "run_X")
    a = lease.put(b"same")
    b = vault.lease("call_A", 2, "run_X").put(b"same")
    assert a == b == sha256_hex(b"same")
    assert vault.read(a) == b"same"


def test_object_not_matching_its_name_is_refused(vault: Vault) -> None:
    digest = vault.lease("call_A", 1, "run_X").put(b"original")
    obj = vault.root / "raw" / digest[:2] / digest
    obj.chmod(0o600)
    obj.write_bytes(b"tampered")
    with pytest.raises(VaultError) as info:
        vault.lease("call_A", 2, "run_X").put(b"original")
    assert info.value.code == "VAULT_CORRUPT"


def test_lease_is_exclusive(vault: Vault) -> None:
    vault.lease("call_A", 1, "run_X")
    with pytest.raises(VaultError) as info:
        vault.lease("call_A", 1, "run_X")
    assert info.value.code == "VAULT_LEASE_EXISTS"


@pytest.mark.parametrize(
    "name", ["..", "../../etc/passwd", "/etc/passwd", "a" * 63, "A" * 64, "g" * 64, "0" * 64 + "/x", ""]
)
def test_unsafe_object_names_are_refused(vault: Vault, name: str) -> None:
    with pytest.raises(VaultError) as info:
        vault.read(name)
    assert info.value.code == "VAULT_UNSAFE_PATH"
    with pytest.raises(VaultError):
        check_object_name(name)


@pytest.mark.parametrize("call_id", ["..", "../x", "/abs", "a/b", "call A"])
def test_unsafe_lease_names_are_refused(vault: Vault, call_id: str) -> None:
    with pytest.raises(VaultError) as info:
        vault.lease(call_id, 1, "run_X")
    assert info.value.code == "VAULT_UNSAFE_PATH"


def test_planted_symlink_for_an_object_is_refused(vault: Vault, tmp_path: Path) -> None:
    target = tmp_path / "outside.txt"
    target.write_bytes(b"secret outside")
    data = b"payload"
    digest = sha256_hex(data)
    vault.lease("call_A", 1, "run_X")  # creates the directories
    sub = vault.root / "raw" / digest[:2]
    sub.mkdir(mode=0o700)
    (sub / digest).symlink_to(target)
    with pytest.raises(VaultError) as info:
        vault.lease("call_A", 2, "run_X").put(data)
    assert info.value.code == "VAULT_UNSAFE_PATH"
    with pytest.raises(VaultError):
        vault.read(digest)
    assert target.read_bytes() == b"secret outside"


def test_planted_symlink_for_a_directory_is_refused(vault: Vault, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    data = b"payload"
    digest = sha256_hex(data)
    vault.lease("call_A", 1, "run_X")
    (vault.root / "raw" / digest[:2]).symlink_to(outside, target_is_directory=True)
    with pytest.raises(VaultError) as info:
        vault.lease("call_A", 2, "run_X").put(data)
    assert info.value.code == "VAULT_UNSAFE_PATH"
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("which", ["vault", "leases", "raw"])
def test_planted_symlink_for_vault_directories_is_refused(tmp_path: Path, which: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / ".muse" / "vault"
    if which == "vault":
        root.parent.mkdir()
        root.symlink_to(outside, target_is_directory=True)
    else:
        root.mkdir(parents=True)
        (root / which).symlink_to(outside, target_is_directory=True)
    with pytest.raises(VaultError) as info:
        Vault(root).lease("call_A", 1, "run_X")
    assert info.value.code == "VAULT_UNSAFE_PATH"
    assert list(outside.iterdir()) == []


def dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def plant_lease(vault: Vault, name: str, pid: int, run_id: str, intents: list[str], done: bool) -> None:
    lines = [f'{{"attempt": 1, "call_id": "{name}", "pid": {pid}, "run_id": "{run_id}"}}']
    lines += [f'{{"intent": "{d}"}}' for d in intents]
    if done:
        lines.append('{"done": "2026-01-01T00:00:00Z"}')
    path = vault.root / "leases" / f"{name}-1.lease"
    path.write_text("\n".join(lines) + "\n")


def test_recovery_removes_orphans_of_dead_holders_only(vault: Vault) -> None:
    good = vault.lease("call_GOOD", 1, "run_1")
    shared = good.put(b"shared request")
    kept = good.put(b"good response")
    good.complete()
    active = vault.lease("call_ACTIVE", 1, "run_live")
    live_obj = active.put(b"in flight")
    crashed = vault.lease("call_CRASH", 1, "run_dead")
    orphan = crashed.put(b"orphan response")
    crashed.put(b"shared request")
    report = vault.recover(lambda run_id: run_id == "run_live")
    assert report.to_json() == {
        "leases": 3,
        "completed": 1,
        "active": 1,
        "crashed": 1,
        "orphans_removed": 1,
        "modes_tightened": 0,
        "recovered_calls": ["call_CRASH"],
        "interrupted_runs": [],  # the holder (this process) lives: its run had just ended
        "interrupted_attempts": 0,  # receipts are the session's to close (recover_vault), not the vault's
    }
    assert not vault.has(orphan)
    assert vault.read(shared) == b"shared request" and vault.read(kept) == b"good response"
    assert vault.read(live_obj) == b"in flight"
    assert (vault.root / "leases" / "call_CRASH-1.recovered").exists()
    assert vault.recover(lambda run_id: True).crashed == 0  # idempotent


def test_recovery_with_a_dead_pid_and_running_run(vault: Vault) -> None:
    vault.lease("call_X", 1, "run_1")  # creates directories
    orphan = sha256_hex(b"orphan")
    sub = vault.root / "raw" / orphan[:2]
    sub.mkdir(mode=0o700, exist_ok=True)
    (sub / orphan).write_bytes(b"orphan")
    plant_lease(vault, "call_DEAD", dead_pid(), "run_running", [orphan], done=False)
    report = vault.recover(lambda run_id: True)
    assert report.crashed == 1 and report.orphans_removed == 1
    assert report.interrupted_runs == ["run_running"]
    assert not (sub / orphan).exists()


def test_a_done_line_without_the_rename_counts_as_completed(vault: Vault) -> None:
    vault.lease("call_X", 1, "run_1")
    kept = sha256_hex(b"kept")
    sub = vault.root / "raw" / kept[:2]
    sub.mkdir(mode=0o700, exist_ok=True)
    (sub / kept).write_bytes(b"kept")
    plant_lease(vault, "call_OLD", dead_pid(), "run_old", [kept], done=True)
    plant_lease(vault, "call_NEW", dead_pid(), "run_old", [kept], done=False)
    report = vault.recover(lambda run_id: False)
    assert report.completed == 1 and report.crashed == 2 and report.orphans_removed == 0
    assert (sub / kept).exists()


def test_recovery_after_a_real_crash(tmp_path: Path) -> None:
    """A subprocess writes a lease and a request, then dies (os._exit) before completing it."""
    vault_dir = tmp_path / ".muse" / "vault"
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(ROOT / "src")!r})
        from pathlib import Path
        from novelmuse.llm import Vault
        v = Vault(Path({str(vault_dir)!r}))
        done = v.lease("call_DONE", 1, "run_C")
        done.put(b"completed request")
        done.complete()
        lease = v.lease("call_CRASH", 1, "run_C")
        print(lease.put(b"half-finished request"), flush=True)
        os._exit(9)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    orphan = proc.stdout.strip()
    vault = Vault(vault_dir)
    assert vault.has(orphan)
    report = vault.recover(lambda run_id: True)  # the run row still says running: the pid decides
    assert report.crashed == 1 and report.completed == 1 and report.orphans_removed == 1
    assert not vault.has(orphan)
    assert vault.has(sha256_hex(b"completed request"))


def test_recovery_on_a_missing_vault_is_a_no_op(tmp_path: Path) -> None:
    report = Vault(tmp_path / "nothing" / "vault").recover(lambda r: False)
    assert report.leases == 0 and not (tmp_path / "nothing").exists()


def test_cli_vault_recover_refuses_a_planted_vault_symlink(tmp_path: Path, muse: Any) -> None:
    """A symlinked .muse/vault is refused with one error line and exit 3, and nothing is written through it."""
    book = tmp_path / "book"
    (book / ".muse").mkdir(parents=True)
    (book / "book.toml").write_text('[book]\ntitle = "x"\n', encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (book / ".muse" / "vault").symlink_to(outside, target_is_directory=True)
    r = muse("vault", "recover", "--book", book, "--json")
    assert r.exit_code == 3
    assert json.loads(r.stdout)["error"]["code"] == "VAULT_UNSAFE_PATH"
    assert r.stderr.startswith("error[VAULT_UNSAFE_PATH]") and "Traceback" not in r.stderr
    assert list(outside.iterdir()) == []


def test_a_failed_write_never_leaves_a_partial_object(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    lease = vault.lease("call_A", 1, "run_X")
    data = b"x" * 100_000
    real_write = os.write
    calls = {"n": 0}

    def flaky_write(fd: int, buf: Any) -> int:
        calls["n"] += 1
        if len(buf) == len(data):
            return real_write(fd, bytes(buf[:10]))  # a short write first …
        if len(buf) == len(data) - 10:
            raise OSError(28, "No space left on device")  # … then the disk is full
        return real_write(fd, buf)  # lease lines

    monkeypatch.setattr(os, "write", flaky_write)
    with pytest.raises(VaultError) as info:
        lease.put(data)
    assert info.value.code == "VAULT_IO"
    monkeypatch.setattr(os, "write", real_write)
    digest = sha256_hex(data)
    assert not vault.has(digest)
    assert list((vault.root / "raw" / digest[:2]).iterdir()) == []  # the temporary file is gone too
    lease.put(data)  # a later attempt stores it whole
    assert vault.read(digest) == data


def test_recovery_removes_temporary_files_of_a_crashed_writer(vault: Vault) -> None:
    vault.lease("call_X", 1, "run_1")
    digest = sha256_hex(b"never published")
    sub = vault.root / "raw" / digest[:2]
    sub.mkdir(mode=0o700, exist_ok=True)
    (sub / f"{digest}.4242.0.tmp").write_bytes(b"never pub")
    plant_lease(vault, "call_DEAD", dead_pid(), "run_1", [digest], done=False)
    report = vault.recover(lambda run_id: True)
    assert report.crashed == 1 and list(sub.iterdir()) == []


def test_processes_storing_the_same_object_at_once_all_succeed(tmp_path: Path) -> None:
    """Content addressing means two writers may store identical bytes at the same moment: neither may see the
    other's half-written file (which would read as VAULT_CORRUPT)."""
    vault_dir = tmp_path / ".muse" / "vault"
    go = tmp_path / "go"
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT / "src")!r})
        from pathlib import Path
        from novelmuse.llm import Vault
        data = bytes(range(256)) * 40_000  # 10 MB: writing takes long enough to overlap
        go = Path({str(go)!r})
        while not go.exists():
            time.sleep(0.001)
        v = Vault(Path({str(vault_dir)!r}))
        for attempt in range(1, 4):
            v.lease("call_" + sys.argv[1], attempt, "run_R").put(data)
        print("ok")
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(i)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for i in range(4)
    ]
    time.sleep(0.5)  # let every writer import and wait at the line
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [err.decode()[-400:] for _, err in outs]
    digest = sha256_hex(bytes(range(256)) * 40_000)
    assert sorted(p.name for p in (vault_dir / "raw" / digest[:2]).iterdir()) == [digest]
