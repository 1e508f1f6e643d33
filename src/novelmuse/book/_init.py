"""`muse init DIR`: scaffold a book project (book.toml, rules.txt, chapters/, outlines/, cards/, plan/, .gitignore).

Nothing that exists is overwritten: an existing book.toml is refused (BOOK_EXISTS), an existing rules.txt or
.gitignore is kept as it is. If a write fails midway (read-only directory, full disk), what this call created
is removed again, so a failed init never leaves half a book behind.
"""

from __future__ import annotations

import contextlib
import json
import os
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from ..errors import InputError
from ._files import atomic_write_text, sweep_temp_files
from ._project import expand_user_path
from ._userfile import BOOK_FILE

BOOK_DIRS = ("chapters", "outlines", "cards", "plan")
GITIGNORE_LINE = ".muse/"


class InitResult(BaseModel):
    """What `init_book` did (also the --json document of `muse init`, under "ok": true).

    `book` is the book root; `created` and `kept` are paths relative to it (directories end in "/").
    """

    book: str
    created: list[str]
    kept: list[str]
    notes: list[str]


def _template(name: str) -> str:
    return (resources.files("novelmuse.book") / "templates" / name).read_text(encoding="utf-8")


def toml_string(value: str) -> str:
    """`value` as a TOML basic string (JSON escapes are valid TOML; DEL must be escaped too)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007F")


def book_toml_text(title: str) -> str:
    """The commented book.toml that `muse init` writes, with `title` filled in."""
    template = _template("book.toml")
    if template.count("$title") != 1:
        raise RuntimeError("the book.toml template must hold exactly one $title")
    return template.replace("$title", toml_string(title))


def rules_txt_text() -> str:
    """The commented rules.txt that `muse init` writes (examples in the seed-004 line syntax)."""
    return _template("rules.txt")


def _write_error(exc: OSError, path: Path) -> InputError:
    return InputError(
        "BOOK_WRITE",
        f"cannot write the book ({exc.strerror or exc})",
        str(path),
        "check that the directory is writable (and not read-only) and retry; nothing was left half-written",
    )


def remove_created(root: Path, created: list[str]) -> None:
    """Undo `init_book`: remove what it created (files first, then directories, deepest first)."""
    for rel in sorted(created, key=lambda r: r.count("/"), reverse=True):
        p = root / rel.rstrip("/")
        with contextlib.suppress(OSError):
            if p.is_dir() and not p.is_symlink():
                p.rmdir()  # only if still empty
            else:
                p.unlink()


def init_book(root: Path, *, title: str | None = None) -> InitResult:
    """Create a book project in `root` (created if missing; may already hold other files).

    Refuses (BOOK_EXISTS) when `root` already has a book.toml. The book.toml is written last, so
    `root` becomes a book only when everything else is in place.
    """
    root = expand_user_path(root).absolute()
    if root.exists() and not root.is_dir():
        raise InputError(
            "BOOK_NOT_A_DIRECTORY", "the book path exists and is not a directory", str(root), "pick a directory"
        )
    if (root / BOOK_FILE).exists():
        raise InputError(
            "BOOK_EXISTS",
            f"{BOOK_FILE} already exists; novelmuse never overwrites it",
            str(root / BOOK_FILE),
            "edit it by hand, or init a different directory",
        )
    created: list[str] = []
    kept: list[str] = []
    notes: list[str] = []
    made_root = not root.exists()
    if not made_root:
        sweep_temp_files(root)  # what an init or import killed midway left (e.g. .rules.txt.<pid>.….tmp)
    try:
        root.mkdir(parents=True, exist_ok=True)
        for name in BOOK_DIRS:
            d = root / name
            if d.is_dir():
                kept.append(f"{name}/")
            else:
                d.mkdir()
                created.append(f"{name}/")
        rules = root / "rules.txt"
        if rules.exists():
            kept.append("rules.txt")
        else:
            atomic_write_text(rules, rules_txt_text())
            created.append("rules.txt")
        gitignore = root / ".gitignore"
        if gitignore.exists():
            kept.append(".gitignore")
            lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
            if not any(line.strip() in (".muse", ".muse/", "/.muse", "/.muse/") for line in lines):
                notes.append(f"add `{GITIGNORE_LINE}` to .gitignore: it holds derived state and raw model I/O")
        else:
            atomic_write_text(gitignore, f"# novelmuse: derived state and the raw model vault\n{GITIGNORE_LINE}\n")
            created.append(".gitignore")
        atomic_write_text(root / BOOK_FILE, book_toml_text(title if title is not None else root.name))
        created.append(BOOK_FILE)
    except (OSError, InputError) as exc:
        remove_created(root, created)
        if made_root:
            with contextlib.suppress(OSError):
                os.rmdir(root)
        if isinstance(exc, InputError):
            raise InputError(
                "BOOK_WRITE", exc.what, exc.where, "check that the directory is writable and retry"
            ) from exc
        raise _write_error(exc, root) from exc
    return InitResult(book=str(root), created=created, kept=kept, notes=notes)
