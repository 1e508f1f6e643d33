"""A book project on disk: find it, load its configuration, list and read its chapters."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..errors import InputError
from ..limits import MAX_CHAPTER_NUMBER
from ..store import ChapterRecord, connect, registered_chapters, utc_now
from ..text import HeadingUnit, LineIndex, chapter_label, count_chars, heading_unit, sha256_hex, split_paragraphs
from ._config import BookConfig, load_config
from ._files import sweep_temp_files
from ._revisions import AlsoRecord, FileRevision, RevisionKind, replace_author_file, settle_revisions
from ._userfile import BOOK_FILE, check_book_dirs, listed_files, read_user_file, read_user_files

_CHAPTER_NAME = re.compile(r"^(\d{1,6})\.md$")
#: Chapter files whose heading lines decide the book's heading unit (a book does not switch units midway).
UNIT_SAMPLE = 50


@dataclass(frozen=True)
class Chapter:
    """One chapter file: ``chapters/NNNN.md``.

    The file's first line is the heading when it starts with ``# `` (e.g. ``# 第一回　宴桃园豪杰三结义``);
    everything after that line is the body, which is what rules, reviews and judges read. Offsets
    reported anywhere are offsets into `body`.
    """

    number: int
    path: Path
    heading: str  # without the leading "# "; "" when the file has no heading line
    body: str
    sha256: str  # of the whole file's bytes
    first_line: int = 1  # the file line the body starts on: 2 under a heading line

    @property
    def title(self) -> str:
        """The heading line's text (or ``第N章`` when the file has none)."""
        return self.heading or f"第{self.number}章"

    @cached_property
    def _lines(self) -> LineIndex:
        return LineIndex(self.body, self.first_line)

    def file_line(self, offset: int) -> int:
        """The 1-based line of the chapter file holding body offset `offset` — with the file's path, the location a
        person can open (``chapters/0023.md:17``); every terminal location and the HTML report use it."""
        return self._lines.line(offset)


def parse_chapter_file(number: int, path: Path, data: bytes) -> Chapter:
    """Split a chapter file's bytes into heading and body (UTF-8, BOM tolerated)."""
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = bom + exc.start  # from the start of the file, BOM included (utf-8-sig's own offset is not)
        line = data[:offset].count(b"\n") + 1
        raise InputError(
            "CHAPTER_ENCODING",
            f"chapter file is not UTF-8: invalid byte 0x{data[offset]:02x} at byte offset {offset} (line {line})",
            str(path),
            "save it as UTF-8",
        ) from exc
    heading, body, first_line = "", text, 1
    if text.startswith("# "):
        first, _, rest = text.partition("\n")
        heading, body, first_line = first[2:].strip(), rest, 2
    return Chapter(number, path, heading, body, sha256_hex(data), first_line)


def numbered_files(folder: Path, pattern: re.Pattern[str], *, code: str, what: str) -> dict[int, Path]:
    """Number → file, in number order, for every file in `folder` whose name matches `pattern` (group 1 is the
    number; other names and directories are ignored; a missing folder has none). A FIFO, device or broken link
    with such a name is never silently left out, nor opened (a FIFO would hang the reader): it is an InputError
    ``<KIND>_READ`` (the kind from `code`, e.g. CHAPTER_DUPLICATE → CHAPTER_READ). Two files with one number
    (``0001.md`` and ``1.md``) are an InputError `code`: "two <what> for chapter N"."""
    if not folder.is_dir():
        return {}
    out: dict[int, Path] = {}
    for p in listed_files(folder, lambda name: pattern.match(name) is not None, code.rsplit("_", 1)[0]):
        m = pattern.match(p.name)
        assert m is not None
        n = int(m.group(1))
        if n > MAX_CHAPTER_NUMBER:
            raise InputError(
                "CHAPTER_NUMBER_TOO_LARGE",
                f"{p.name} is numbered beyond the cap of {MAX_CHAPTER_NUMBER:,} for chapter numbers",
                str(p),
                "rename or remove it",
            )
        if n in out:
            raise InputError(
                code,
                f"two {what} for chapter {n}: {out[n].name} and {p.name}",
                str(folder),
                "remove or renumber one of them",
            )
        out[n] = p
    return dict(sorted(out.items()))


def read_chapter_file(number: int, path: Path) -> Chapter:
    """Read and parse one chapter file whose path is already known (CHAPTER_READ when it cannot be read, e.g. a
    FIFO; BOOK_LINK_OUTSIDE for a link leaving the book) — for callers that list the chapters once and read many
    of them."""
    return parse_chapter_file(number, path, read_user_file(path, what="chapter file", kind="CHAPTER"))


def read_chapter_files(paths: Mapping[int, Path], book_root: Path) -> list[Chapter]:
    """`read_chapter_file` of every chapter in `paths` (number → file) of the book at `book_root`, in that
    order: one directory descriptor for all of them (`read_user_files`), the same refusals and errors."""
    data = read_user_files(list(paths.values()), what="chapter file", kind="CHAPTER", book_root=book_root)
    return [parse_chapter_file(n, p, d) for (n, p), d in zip(paths.items(), data, strict=True)]


@dataclass
class Book:
    """An opened book project: its root directory and configuration."""

    root: Path
    config: BookConfig

    @property
    def chapters_dir(self) -> Path:
        return self.root / "chapters"

    @property
    def outlines_dir(self) -> Path:
        return self.root / "outlines"

    @property
    def cards_dir(self) -> Path:
        return self.root / "cards"

    @property
    def rules_path(self) -> Path:
        return self.root / "rules.txt"

    @property
    def state_dir(self) -> Path:
        return self.root / ".muse"

    @property
    def db_path(self) -> Path:
        return self.state_dir / "muse.db"

    @property
    def vault_dir(self) -> Path:
        return self.state_dir / "vault"

    @cached_property
    def db(self) -> sqlite3.Connection:
        """The book's database, opened (and migrated) on first use."""
        return connect(self.db_path)

    def replace_file(
        self,
        path: Path,
        data: bytes | None,
        *,
        expect_sha256: str,
        kind: RevisionKind,
        command: str,
        chapter: int | None = None,
        note: str = "",
        also: AlsoRecord | None = None,
    ) -> FileRevision:
        """Replace (or, with `data` None, remove) one of the author's files, keeping the bytes it had in the
        revision store (`muse revisions`); see `book._revisions.replace_author_file`."""
        return replace_author_file(
            self.db,
            self.root,
            self.state_dir,
            path,
            data,
            expect_sha256=expect_sha256,
            kind=kind,
            command=command,
            chapter=chapter,
            note=note,
            also=also,
        )

    def settle(self) -> None:
        """Finish what a killed replacement of an author's file left pending (see `settle_revisions`)."""
        settle_revisions(self.db, self.root)

    def chapter_paths(self) -> dict[int, Path]:
        """Chapter number → file, for every ``chapters/NNNN.md`` (other files are ignored)."""
        return numbered_files(self.chapters_dir, _CHAPTER_NAME, code="CHAPTER_DUPLICATE", what="files")

    def probe_chapter_file(self, number: int) -> Path | None:
        """The file of chapter `number` found without listing the folder: of the names it may have (``7.md`` …
        ``000007.md``) the one that exists and is not a directory; None when none or more than one does (the
        listing would refuse the book: two files for one chapter). For callers that locate a few chapters."""
        digits = str(number)
        found: list[Path] = []
        for width in range(len(digits), 7):
            path = self.chapters_dir / f"{digits.zfill(width)}.md"
            try:
                st = os.stat(path)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode):
                found.append(path)
        return found[0] if len(found) == 1 else None

    def chapter_numbers(self) -> list[int]:
        return list(self.chapter_paths())

    def chapter_path(self, number: int) -> Path:
        """Where chapter `number` lives (whether or not it exists yet)."""
        return self.chapter_paths().get(number) or self.chapters_dir / f"{number:04d}.md"

    def read_chapter(self, number: int) -> Chapter:
        """Read one chapter; a missing number is a clear error listing what exists."""
        paths = self.chapter_paths()
        if number not in paths:
            have = f"{min(paths)}–{max(paths)}" if paths else "none"
            raise InputError(
                "CHAPTER_NOT_FOUND",
                f"chapter {number} does not exist (chapters present: {have})",
                str(self.chapters_dir),
                "pick an existing chapter number or import the book first",
            )
        return read_chapter_file(number, paths[number])

    def select_chapters(
        self, chapter: int | None = None, span: tuple[int, int] | None = None, *, present: list[int] | None = None
    ) -> list[int]:
        """Chapter numbers for `--chapter N` / `--range A-B` / everything; unknown numbers are errors. `present`:
        the chapter numbers, when the caller has just listed them."""
        have = self.chapter_numbers() if present is None else present
        if chapter is not None:
            if chapter not in have:
                self.read_chapter(chapter)  # raises CHAPTER_NOT_FOUND with what exists
            return [chapter]
        if span is not None:
            a, b = span
            picked = [n for n in have if a <= n <= b]
            if not picked:
                raise InputError(
                    "CHAPTER_NOT_FOUND",
                    f"no chapter in range {a}-{b} (chapters present: "
                    + (f"{min(have)}–{max(have)})" if have else "none)"),
                    str(self.chapters_dir),
                    "pick a range that exists",
                )
            return picked
        return have

    @cached_property
    def heading_unit(self) -> HeadingUnit | None:
        """The unit the book's chapter headings use (章, 回, 节 or Chapter): the most common among the heading
        lines of the first UNIT_SAMPLE chapter files; None when none of them has a numbered heading."""
        lines: list[str] = []
        paths = [path for number, path in list(self.chapter_paths().items())[:UNIT_SAMPLE] if number != 0]
        try:
            files: list[bytes | None] = list(
                read_user_files(paths, what="chapter file", kind="CHAPTER", book_root=self.root)
            )
        except InputError:  # one is unreadable: reading it for real reports the problem; the others still count
            files = []
            for path in paths:
                try:
                    files.append(read_user_file(path, what="chapter file", kind="CHAPTER", book_root=self.root))
                except InputError:
                    files.append(None)
        for first in files:
            if first is None:
                continue
            line = first.split(b"\n", 1)[0].decode("utf-8", "replace")
            if line.startswith("# "):
                lines.append(line[2:])
        return heading_unit(lines)

    def chapter_label(self, number: int) -> str:
        """How this book names chapter `number` in messages, from its own headings: 第23回 in a book of 回,
        第23章, Chapter 23; 序 for the prologue (chapter 0). Use it wherever a chapter is named to the author."""
        return chapter_label(self.heading_unit, number)

    def chapter_record(self, chapter: Chapter) -> ChapterRecord:
        """The registry row for a chapter as it is on disk now."""
        return ChapterRecord(
            number=chapter.number,
            path=str(chapter.path.relative_to(self.root)),
            sha256=chapter.sha256,
            chars=count_chars(chapter.body),
            paragraphs=len(split_paragraphs(chapter.body)),
            registered_at=utc_now(),
        )

    def registered(self) -> dict[int, ChapterRecord]:
        return registered_chapters(self.db)


def _open(root: Path) -> Book:
    check_book_dirs(root)  # a book directory linked outside the book is refused before any use
    book = Book(root, load_config(root / BOOK_FILE))
    sweep_temp_files(root)  # what a killed writer left (e.g. chapters/.0003.md.<pid>.x.tmp of a killed import)
    return book


def expand_user_path(path: Path) -> Path:
    """`path` with a leading ``~`` or ``~user`` expanded; PATH_UNKNOWN_USER (exit 2) for a user this system does
    not have, or no home directory (instead of the bare RuntimeError of `Path.expanduser`)."""
    try:
        return path.expanduser()
    except RuntimeError:
        head = str(path).split("/", 1)[0]
        raise InputError(
            "PATH_UNKNOWN_USER",
            f"{head} names no home directory on this system",
            str(path)[:120],
            "write the path out in full",
        ) from None


def find_book(explicit: Path | None = None, start: Path | None = None) -> Book:
    """Open the book at `explicit` (``--book DIR``), else the nearest directory upward holding book.toml."""
    if explicit is not None:
        root = expand_user_path(explicit).resolve()
        if not (root / BOOK_FILE).is_file():
            raise InputError(
                "BOOK_NOT_FOUND",
                f"no {BOOK_FILE} in this directory",
                str(root),
                "run `muse init DIR` to create a book, or pass the book's directory with --book",
            )
        return _open(root)
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / BOOK_FILE).is_file():
            return _open(candidate)
    raise InputError(
        "BOOK_NOT_FOUND",
        f"no {BOOK_FILE} here or in any parent directory",
        str(here),
        "run `muse init DIR` to create a book, or pass --book DIR",
    )
