"""The gate signing key (Ed25519): the private key lives outside every book, the public key in book.toml.

`muse gate keygen` writes the private key (PEM, PKCS#8) to the user config's ``[gate] key_path`` (default
``<user config dir>/keys/gate_ed25519.pem``): the file is created exclusively (never overwritten, never
through a symlink) with mode 0600 in a 0700 directory owned by the user, and a path inside a book (any
directory holding a book.toml above it) is refused. Loading checks the same (like ssh: a key readable by
others is refused). The public key, ``ed25519:<base64>``, goes into book.toml ``[gate] signer``.

Nothing here ever returns, prints or stores the private key's bytes: `SigningKey` only signs, its repr shows
the public key, and it refuses to be pickled; error messages name paths and modes, never content.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..book import BOOK_FILE, BookConfig, expand_user_path, user_config_path
from ..errors import InputError
from ..text import sha256_hex

KEY_FILE_NAME = "gate_ed25519.pem"
_PREFIX = "ed25519:"
_MAX_KEY_BYTES = 4096
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class PublicKey:
    """An Ed25519 public key: the `signer` of book.toml, and what verifies every journal entry."""

    raw: bytes

    @property
    def text(self) -> str:
        """``ed25519:<base64 of the 32 raw bytes>`` — the form book.toml ``[gate] signer`` holds."""
        return _PREFIX + base64.b64encode(self.raw).decode("ascii")

    @property
    def key_id(self) -> str:
        """A short fingerprint (16 hex digits of the key's sha256), recorded in every entry it signs."""
        return sha256_hex(self.raw)[:16]

    def verify(self, signature: bytes, message: bytes) -> bool:
        """True when `signature` is this key's Ed25519 signature of `message`."""
        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True

    @classmethod
    def parse(cls, text: str, where: str = "book.toml [gate] signer") -> PublicKey:
        """Parse ``ed25519:<base64>`` (GATE_SIGNER_INVALID otherwise)."""
        raw = b""
        if text.startswith(_PREFIX):
            with contextlib.suppress(binascii.Error, ValueError):
                raw = base64.b64decode(text[len(_PREFIX) :], validate=True)
        if len(raw) != 32:
            raise InputError(
                "GATE_SIGNER_INVALID",
                "not an Ed25519 public key (expected ed25519:<base64 of 32 bytes>)",
                where,
                "paste the signer line `muse gate keygen` printed",
            )
        return cls(raw)


class SigningKey:
    """The private key, usable only to sign; it never yields its bytes (see the module doc)."""

    __slots__ = ("_key", "public")

    def __init__(self, key: Ed25519PrivateKey):
        self._key = key
        self.public = PublicKey(
            key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        )

    def sign(self, message: bytes) -> bytes:
        """The Ed25519 signature of `message`."""
        return self._key.sign(message)

    def __repr__(self) -> str:
        return f"SigningKey(public={self.public.text})"

    def __reduce__(self) -> NoReturn:
        raise TypeError("a SigningKey is never serialised")


def default_key_path() -> Path:
    """``<user config dir>/keys/gate_ed25519.pem`` (the user config dir follows $MUSE_CONFIG / $XDG_CONFIG_HOME)."""
    return user_config_path().parent / "keys" / KEY_FILE_NAME


def key_path(config: BookConfig) -> Path:
    """The private key's path: ``[gate] key_path`` of the user config (relative to its directory), or the default."""
    if config.gate.key_path is None:
        return default_key_path()
    path = expand_user_path(Path(config.gate.key_path))
    return path if path.is_absolute() else user_config_path().parent / path


def _book_around(path: Path) -> Path | None:
    """The nearest directory at or above `path`'s directory that holds a book.toml (None when there is none)."""
    for folder in path.resolve().parents:
        if (folder / BOOK_FILE).is_file():
            return folder
    return None


def _refuse_in_book(path: Path) -> None:
    book = _book_around(path)
    if book is not None:
        raise InputError(
            "GATE_KEY_IN_BOOK",
            f"the signing key path is inside the book at {book}",
            str(path),
            "set [gate] key_path in the user config to a path outside every book (default ~/.config/novelmuse/keys/)",
        )


def _unsafe(what: str, path: Path, fix: str) -> NoReturn:
    raise InputError(
        "GATE_KEY_UNSAFE", what, str(path), fix or "use the key `muse gate keygen` wrote, where it wrote it"
    )


def _check_private(st: os.stat_result, path: Path, what: str, directory: bool) -> None:
    """`path` (its stat `st`) must be a real file or directory of this user, closed to everyone else."""
    if not (stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode)):
        _unsafe(f"the {what} is not a {'directory' if directory else 'regular file'} (or is a symlink)", path, "")
    if st.st_uid != os.geteuid():
        _unsafe(f"the {what} belongs to another user", path, "use your own")
    if st.st_mode & 0o077:
        mode = "700" if directory else "600"
        _unsafe(f"the {what} is open to others (mode {st.st_mode & 0o777:o})", path, f"chmod {mode} {path}")


def _check_dir(folder: Path) -> None:
    _check_private(folder.lstat(), folder, "key directory", directory=True)


def generate_key(path: Path) -> PublicKey:
    """Create a new Ed25519 key at `path` (0600 in a 0700 directory), refusing to overwrite; its public key."""
    _refuse_in_book(path)
    folder = path.parent
    if not folder.exists():
        try:
            folder.mkdir(parents=True, mode=0o700)
            os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
        except OSError as exc:
            raise InputError(
                "GATE_KEY_WRITE", f"cannot create the key directory ({exc.strerror})", str(folder), "check the path"
            ) from exc
    _check_dir(folder)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
    except FileExistsError:
        existing = ""
        with contextlib.suppress(InputError):
            existing = f" (its public key is {load_signing_key(path).public.text})"
        raise InputError(
            "GATE_KEY_EXISTS",
            f"a signing key already exists{existing}",
            str(path),
            "keep it (an existing key is never overwritten), or move it away yourself to make a new one",
        ) from None
    except OSError as exc:
        raise InputError(
            "GATE_KEY_WRITE", f"cannot create the key file ({exc.strerror})", str(path), "check the path"
        ) from exc
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, pem)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)
    dir_fd = os.open(folder, os.O_RDONLY | _CLOEXEC)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return SigningKey(key).public


def load_signing_key(path: Path) -> SigningKey:
    """Load the private key at `path`; refuse one inside a book, a symlink, a file or directory open to others."""
    _refuse_in_book(path)
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        raise InputError(
            "GATE_KEY_MISSING", "no signing key", str(path), "run `muse gate keygen` (or set [gate] key_path)"
        ) from None
    except OSError as exc:
        raise InputError(
            "GATE_KEY_UNSAFE", f"cannot open the key ({exc.strerror})", str(path), "use a regular file"
        ) from exc
    try:
        _check_private(os.fstat(fd), path, "signing key", directory=False)
        _check_dir(path.parent)
        data = os.read(fd, _MAX_KEY_BYTES + 1)
    finally:
        os.close(fd)
    try:
        key = serialization.load_pem_private_key(data, password=None) if len(data) <= _MAX_KEY_BYTES else None
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(
            "GATE_KEY_INVALID",
            "not an unencrypted Ed25519 private key (PEM, PKCS#8)",
            str(path),
            "use the file `muse gate keygen` wrote",
        )
    return SigningKey(key)
