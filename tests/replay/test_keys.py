"""The signing key: outside every book, 0600 in 0700, never overwritten, never through a symlink, never shown."""

from __future__ import annotations

import os
import pickle
import stat
from pathlib import Path

import pytest

from novelmuse.book import find_book, init_book, load_config, load_user_config
from novelmuse.errors import InputError
from novelmuse.replay import PublicKey, default_key_path, generate_key, key_path, load_signing_key


def code_of(fn, *args):  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as exc:
        fn(*args)
    return exc.value.code


def test_keygen_writes_0600_in_0700_and_never_overwrites(user_config: Path) -> None:
    path = default_key_path()
    assert path == user_config.parent / "keys" / "gate_ed25519.pem"
    public = generate_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    key = load_signing_key(path)
    assert key.public == public and PublicKey.parse(public.text) == public
    assert key.public.verify(key.sign(b"m"), b"m") and not key.public.verify(key.sign(b"m"), b"n")
    before = path.read_bytes()
    with pytest.raises(InputError) as exc:
        generate_key(path)
    assert exc.value.code == "GATE_KEY_EXISTS" and public.text in exc.value.what
    assert path.read_bytes() == before


def test_the_key_never_shows_itself(user_config: Path) -> None:
    path = default_key_path()
    generate_key(path)
    key = load_signing_key(path)
    secret = path.read_bytes().split(b"\n")[1].decode()
    assert secret not in repr(key) and "PRIVATE" not in repr(key)
    with pytest.raises(TypeError):
        pickle.dumps(key)


def test_a_key_inside_a_book_is_refused(tmp_path: Path, user_config: Path) -> None:
    init_book(tmp_path / "book")
    inside = tmp_path / "book" / "secrets" / "k.pem"
    assert code_of(generate_key, inside) == "GATE_KEY_IN_BOOK"
    assert not inside.exists()


def test_loose_modes_symlinks_and_foreign_files_are_refused(tmp_path: Path, user_config: Path) -> None:
    path = default_key_path()
    generate_key(path)
    os.chmod(path, 0o644)
    assert code_of(load_signing_key, path) == "GATE_KEY_UNSAFE"
    os.chmod(path, 0o600)
    os.chmod(path.parent, 0o755)
    assert code_of(load_signing_key, path) == "GATE_KEY_UNSAFE"
    os.chmod(path.parent, 0o700)
    link = path.parent / "link.pem"
    os.symlink(path, link)
    assert code_of(load_signing_key, link) == "GATE_KEY_UNSAFE"
    junk = path.parent / "junk.pem"
    junk.write_bytes(b"not a key")
    os.chmod(junk, 0o600)
    assert code_of(load_signing_key, junk) == "GATE_KEY_INVALID"
    assert code_of(load_signing_key, path.parent / "missing.pem") == "GATE_KEY_MISSING"
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o755)
    assert code_of(generate_key, loose / "k.pem") == "GATE_KEY_UNSAFE"  # an existing directory open to others


def test_key_path_comes_from_the_user_config_only(tmp_path: Path, user_config: Path) -> None:
    user_config.parent.mkdir(parents=True)
    user_config.write_text('[gate]\nkey_path = "mykeys/gate.pem"\n', encoding="utf-8")
    assert key_path(load_user_config()) == user_config.parent / "mykeys" / "gate.pem"
    init_book(tmp_path / "book")
    assert key_path(find_book(tmp_path / "book").config) == user_config.parent / "mykeys" / "gate.pem"
    toml = tmp_path / "book" / "book.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[gate]\nkey_path = "/tmp/x.pem"\n', encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_config(toml)
    assert exc.value.code == "CONFIG_INVALID" and "user config" in exc.value.what


def test_a_bad_signer_line_is_a_config_error(tmp_path: Path, user_config: Path) -> None:
    init_book(tmp_path / "book")
    toml = tmp_path / "book" / "book.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[gate]\nsigner = "rsa:abc"\n', encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_config(toml)
    assert exc.value.code == "CONFIG_INVALID" and "gate.signer" in exc.value.what
    with pytest.raises(InputError) as exc:
        PublicKey.parse("ed25519:" + "A" * 43 + "=x")
    assert exc.value.code == "GATE_SIGNER_INVALID"
