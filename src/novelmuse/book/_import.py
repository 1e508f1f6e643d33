"""`muse import FILE --into DIR`: split an existing novel into chapter files, byte-exact.

- Chapter numbers come from the heading lines (see `text.split_chapters` for the heading rule).
- ``chapters/NNNN.md`` = ``# <heading line as in the source, stripped>\\n`` + the body exactly as in the
  source (the text between this heading line and the next), re-encoded as UTF-8 when the source was
  GB18030.
- One line-ending style per book (issue 15 item 7): a source whose every line break is CRLF gives CRLF chapter
  files (the heading line novelmuse writes ends in CRLF too); a source mixing CRLF and LF is normalised to LF
  (noted); otherwise LF.
- Text before the first heading is the prologue: ``chapters/0000.md`` (chapter 0) with the heading
  ``# 序``, which is novelmuse's, not the source's. A prologue of only whitespace is not written (noted).
- Numbering problems are reported with line numbers. A duplicate number or a number lower than the one
  before it is always refused (IMPORT_DUPLICATE_CHAPTERS / IMPORT_CHAPTER_ORDER): two chapters cannot share
  a file and guessing a renumbering would change the author's chapters. Missing numbers are refused
  (IMPORT_CHAPTER_GAPS) unless `allow_gaps`, which imports and lists them (``gaps`` and a note).
- Nothing existing is overwritten: a chapter file that already exists with other content refuses the whole
  import (IMPORT_CHAPTER_EXISTS, naming the first conflict); one with exactly the bytes the import would
  write is kept as it is, so an interrupted or repeated import can simply be run again. Everything is
  checked before anything is written; if a write still fails, the files written so far are removed again
  (and a book created by this import too).
- A heading that runs into its chapter's text on the same line is split where the book makes the end of its
  title certain (said per chapter in the notes and `ImportedChapter.inline`), otherwise the import is refused
  (IMPORT_INLINE_HEADING, naming every such line) — never absorbed into the chapter before it. Chapters far
  longer or shorter than the median are flagged (`length_outliers`, a note each).
- Every written chapter is registered in the store's chapter registry (sha256, chars, paragraphs).
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ..errors import InputError, MuseError
from ..limits import MAX_FILE_BYTES, MAX_IMPORT_BYTES
from ..store import register_chapters
from ..text import ChapterPart, HeadingLine, SplitText, chapter_label, decode_text, sha256_hex, split_chapters
from ._files import atomic_write_bytes
from ._init import init_book, remove_created
from ._project import Book, expand_user_path, find_book, parse_chapter_file
from ._userfile import BOOK_FILE, read_user_file

PROLOGUE_HEADING = "序"
_MAX_LISTED = 8


class ImportedChapter(BaseModel):
    """One chapter file written by the import."""

    number: int
    title: str  # the heading's title after the number ("" when the heading has none)
    heading: str  # the heading line as written into the file (after "# ")
    line: int  # 1-based line of the heading in the source (0 for the prologue)
    volume: int | None = None  # from a heading like 第一卷 潜龙 第一章 少年
    #: The heading ran into the chapter's text on its line and was split there, by this rule (text.split_chapters):
    #: untitled, indent, separator or couplet. None for a heading on a line of its own.
    inline: str | None = None
    chars: int
    paragraphs: int
    path: str  # relative to the book root
    sha256: str


class Gap(BaseModel):
    """Numbers missing between two consecutive headings."""

    missing_from: int
    missing_to: int
    after_number: int
    after_line: int
    before_number: int
    before_line: int


class Duplicate(BaseModel):
    """A chapter number used by more than one heading."""

    number: int
    lines: list[int]


class OutOfOrder(BaseModel):
    """A heading whose number is lower than the previous heading's (and not a duplicate)."""

    number: int
    line: int
    previous_number: int
    previous_line: int


class LengthOutlier(BaseModel):
    """A chapter far longer or shorter than the book's median (a missed heading merges two chapters)."""

    number: int
    chars: int
    median: float
    ratio: float  # chars / median


class HeadingNote(BaseModel):
    """A heading-like line kept inside a body (a volume line, or a heading of another unit)."""

    line: int
    text: str


class ImportReport(BaseModel):
    """The result of `muse import` (also its --json document, under "ok": true)."""

    book: str
    source: str
    source_sha256: str
    encoding: str
    line_ending: Literal["lf", "crlf"]  # of every chapter file written
    unit: str
    initialised: bool  # the book was created by this import
    prologue: ImportedChapter | None
    chapters: list[ImportedChapter]
    unchanged: list[int]  # chapters whose file was already there, byte-identical (a re-run): kept, not rewritten
    length_outliers: list[LengthOutlier]  # chapters over OUTLIER_FACTOR x the median length, or under 1/OUTLIER_FACTOR
    gaps: list[Gap]  # only with --allow-gaps (else the import is refused); duplicates are always refused
    volumes: list[HeadingNote]
    other_headings: list[HeadingNote]
    notes: list[str]


def check_numbering(chapters: list[ChapterPart]) -> tuple[list[Gap], list[Duplicate], list[OutOfOrder]]:
    """Gaps, duplicates and out-of-order numbers in the headings' order, each with line numbers."""
    seen: dict[int, list[int]] = {}
    gaps: list[Gap] = []
    disorder: list[OutOfOrder] = []
    prev: HeadingLine | None = None
    for part in chapters:
        hl = part.heading_line
        n = hl.heading.number
        seen.setdefault(n, []).append(hl.line_no)
        if prev is not None:
            p = prev.heading.number
            if n > p + 1:
                gaps.append(
                    Gap(
                        missing_from=p + 1,
                        missing_to=n - 1,
                        after_number=p,
                        after_line=prev.line_no,
                        before_number=n,
                        before_line=hl.line_no,
                    )
                )
            elif n <= p and len(seen[n]) == 1:
                disorder.append(OutOfOrder(number=n, line=hl.line_no, previous_number=p, previous_line=prev.line_no))
        prev = hl
    dups = [Duplicate(number=n, lines=lines) for n, lines in sorted(seen.items()) if len(lines) > 1]
    return gaps, dups, disorder


def _listed(items: list[str]) -> str:
    more = f" (+{len(items) - _MAX_LISTED} more)" if len(items) > _MAX_LISTED else ""
    return "; ".join(items[:_MAX_LISTED]) + more


def _gap_text(g: Gap, unit: str | None) -> str:
    """ "missing 第3回–第4回 between line 3 (第2回) and line 5 (第5回)", in the book's own words."""
    first, last = chapter_label(unit, g.missing_from), chapter_label(unit, g.missing_to)
    missing = first if g.missing_from == g.missing_to else f"{first}–{last}"
    before, after = chapter_label(unit, g.after_number), chapter_label(unit, g.before_number)
    return f"missing {missing} between line {g.after_line} ({before}) and line {g.before_line} ({after})"


def _excerpt(line: str, size: int = 40) -> str:
    return line if len(line) <= size else line[:size] + "…"


def _validate(split: SplitText, source: Path, allow_gaps: bool) -> list[Gap]:
    where = str(source)
    if not split.chapters:
        text = split.prologue
        cr_only = "\r" in text and "\n" not in text
        loose = split.ambiguous
        raise InputError(
            "IMPORT_NO_HEADINGS",
            "no chapter heading line found"
            + (" (the file breaks lines with CR only, so it is one long line)" if cr_only else "")
            + (
                f"; {len(loose)} line(s) start like a heading but go on with text, e.g. line {loose[0].line_no}: "
                f"`{_excerpt(loose[0].text)}`"
                if loose
                else ""
            ),
            where,
            "convert the line breaks to LF (\\n) and retry"
            if cr_only
            else "headings must be whole lines such as `第一章 标题`, `第12回`, `第一百零一章：标题` or `Chapter 3`"
            + (" — put a line break after each heading's title" if loose else ""),
        )
    if split.ambiguous:
        amb = split.ambiguous
        raise InputError(
            "IMPORT_INLINE_HEADING",
            f"{len(amb)} line(s) start with the next chapter's heading and go on with its text, and where the title "
            "ends is not certain (importing would merge those chapters into the ones before them): "
            + "; ".join(
                f"line {a.line_no} ({chapter_label(split.unit, a.number)}) `{_excerpt(a.text)}` — {a.why}" for a in amb
            ),
            where,
            "say where each chapter's text begins with --split LINE:COLUMN (e.g. --split "
            f"{amb[0].line_no}:COLUMN, one per line; nothing else of the file changes), or put a line break after "
            "each of those titles in the source file (nothing was imported)",
        )
    gaps, dups, disorder = check_numbering(split.chapters)
    if dups:
        toc = _table_of_contents(split.chapters, dups)
        volumes = _restarting_volumes(split, dups)
        if toc:
            fix = (
                f"lines {toc[0]}–{toc[1]} look like a table of contents (目录: headings with no text under them): "
                "delete them from the source file and retry"
            )
        elif volumes:
            fix = (
                f"the numbering restarts at volume headings (第N卷, line {', '.join(map(str, volumes[:_MAX_LISTED]))}"
                f"{'…' if len(volumes) > _MAX_LISTED else ''}): chapters are numbered through the whole book, so "
                "renumber them consecutively in the source file (duplicates are never guessed)"
            )
        else:
            fix = "renumber or merge those chapters in the source file (duplicates are never guessed)"
        raise InputError(
            "IMPORT_DUPLICATE_CHAPTERS",
            "duplicate chapter numbers: "
            + _listed([f"{d.number} at lines {', '.join(map(str, d.lines))}" for d in dups]),
            where,
            fix,
        )
    if disorder:
        backwards = [f"{o.number} (line {o.line}) after {o.previous_number} (line {o.previous_line})" for o in disorder]
        raise InputError(
            "IMPORT_CHAPTER_ORDER",
            "chapter numbers go backwards: " + _listed(backwards),
            where,
            "fix the numbering in the source file",
        )
    if gaps and not allow_gaps:
        raise InputError(
            "IMPORT_CHAPTER_GAPS",
            "chapter numbers are missing: " + _listed([_gap_text(g, split.unit) for g in gaps]),
            where,
            "fix the source, or pass --allow-gaps to import anyway",
        )
    if split.chapters[0].number == 0 and split.prologue.strip():
        raise InputError(
            "IMPORT_PROLOGUE_CONFLICT",
            f"a chapter numbered 0 (line {split.chapters[0].heading_line.line_no}) and a prologue both need "
            "chapters/0000.md",
            where,
            "give the prologue text its own heading or renumber chapter 0",
        )
    return gaps


def _table_of_contents(chapters: list[ChapterPart], dups: list[Duplicate]) -> tuple[int, int] | None:
    """(first line, last line) of a table of contents at the start of the novel, when that is what makes the
    duplicates: every duplicated number's first heading has no text under it and lies within the leading run
    of such empty headings (a TOC copied into downloaded novels, 目录). None otherwise."""
    run = 0
    while run < len(chapters) and not chapters[run].body.strip():
        run += 1
    if run < 2 or run == len(chapters):
        return None
    last_line = chapters[run - 1].heading_line.line_no
    if not all(d.lines[0] <= last_line for d in dups):
        return None
    return chapters[0].heading_line.line_no, last_line


def _restarting_volumes(split: SplitText, dups: list[Duplicate]) -> list[int]:
    """Lines of the volume headings (第N卷, alone or before a chapter heading on its line) that lie between two
    uses of a duplicated number: the novel restarts its chapter numbers in each volume. Empty otherwise."""
    marks = sorted(
        [v.line_no for v in split.volumes]
        + [p.heading_line.line_no for p in split.chapters if p.heading_line.heading.volume is not None]
    )
    between = {m for d in dups for m in marks if d.lines[0] < m <= d.lines[-1]}
    return sorted(between)


def _chapter_bytes(heading: str, body: str, eol: str) -> bytes:
    return f"# {heading}{eol}{body}".encode()


def line_ending_of(text: str) -> tuple[Literal["lf", "crlf"], str, list[str]]:
    """The line-ending style for the chapter files of `text`, the text to split (CRLF and LF mixed: normalised
    to LF), and notes. A lone CR is not a line break here and is kept as it is."""
    crlf = text.count("\r\n")
    if crlf == 0:
        return "lf", text, []
    lf = text.count("\n") - crlf
    if lf == 0:
        return "crlf", text, []
    note = f"the source mixes CRLF ({crlf} lines) and LF ({lf} lines) line breaks: the chapter files use LF throughout"
    return "lf", text.replace("\r\n", "\n"), [note]


def import_novel(
    source: Path,
    into: Path,
    *,
    allow_gaps: bool = False,
    title: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    splits: dict[int, int] | None = None,
) -> ImportReport:
    """Import the novel file `source` into the book at `into` (created and initialised if not a book yet).

    Re-running the same import is harmless: chapter files already there with exactly the bytes the
    import would write are kept (listed in `unchanged`) and registered; any other content refuses.
    `progress(done, total)` is called after each chapter file.
    """
    data = read_user_file(
        source,
        what="novel file",
        kind="IMPORT_SOURCE",
        max_bytes=MAX_IMPORT_BYTES,
        missing_code="IMPORT_SOURCE_NOT_FOUND",
    )
    decoded = decode_text(data, str(source))
    line_ending, text, eol_notes = line_ending_of(decoded.text)
    eol = "\r\n" if line_ending == "crlf" else "\n"
    split = split_chapters(text, splits)
    gaps = _validate(split, source, allow_gaps)
    notes = list(decoded.notes) + eol_notes

    files: list[tuple[int, str, str, int, bytes]] = []  # number, title, heading, line, bytes
    has_prologue = bool(split.prologue.strip())
    if has_prologue:
        files.append((0, PROLOGUE_HEADING, PROLOGUE_HEADING, 0, _chapter_bytes(PROLOGUE_HEADING, split.prologue, eol)))
        notes.append(f"text before the first heading kept as the prologue, chapter 0 (heading `# {PROLOGUE_HEADING}`)")
    elif split.prologue:
        notes.append(f"{len(split.prologue)} whitespace character(s) before the first heading were not kept")
    for part in split.chapters:
        h = part.heading_line.heading
        files.append((h.number, h.title, h.text, part.heading_line.line_no, _chapter_bytes(h.text, part.body, eol)))
    if gaps:
        notes.append("imported with --allow-gaps: " + _listed([_gap_text(g, split.unit) for g in gaps]))
    for v in split.volumes:
        notes.append(f"line {v.line_no}: volume heading `{v.heading.text}` kept inside the text, not a chapter")
    for o in split.other_headings:
        notes.append(f"line {o.line_no}: `{o.heading.text}` kept inside the text (chapters are split by {split.unit})")
    _refuse_oversized(files, source, split.unit)

    into = expand_user_path(into).absolute()
    initialised = not (into / BOOK_FILE).is_file()
    created: list[str] = []
    if initialised:
        default_title = title if title is not None else source.stem
        created = init_book(into, title=default_title).created
    try:
        book = find_book(into)
        existing = book.chapter_paths()
        targets = [book.chapters_dir / f"{number:04d}.md" for number, *_ in files]
        unchanged: list[int] = []
        for (number, *_, payload), target in zip(files, targets, strict=True):
            conflict = existing.get(number) or (target if target.exists() else None)
            if conflict is None:
                continue
            if conflict == target and _same_bytes(target, payload):
                unchanged.append(number)  # a re-run (e.g. after an interrupted import): nothing to write
                continue
            raise InputError(
                "IMPORT_CHAPTER_EXISTS",
                f"chapter {number} already exists with other content; novelmuse never overwrites an author's file",
                str(conflict),
                "import into a new directory, or move the existing chapter files away first",
            )
        kept = set(unchanged)
        conn = book.db  # opened (and created) before any chapter is written: a store error writes nothing
        written: list[Path] = []
        try:
            for i, ((number, *_, payload), target) in enumerate(zip(files, targets, strict=True), start=1):
                if number not in kept:
                    atomic_write_bytes(target, payload, expect_sha256="")  # "": the file must still not exist
                    written.append(target)
                if progress is not None:
                    progress(i, len(files))
            # read back what is on disk now (one read per file: Book.read_chapter lists the directory each time)
            chapters = [parse_chapter_file(f[0], p, p.read_bytes()) for f, p in zip(files, targets, strict=True)]
            records = [book.chapter_record(ch) for ch in chapters]
            register_chapters(conn, records, remove_others=False)
        except BaseException:
            for p in written:
                with contextlib.suppress(OSError):
                    p.unlink()
            raise
    except (MuseError, OSError) as exc:
        if initialised:
            _undo_init(into, created)
        if isinstance(exc, OSError):
            raise InputError(
                "BOOK_WRITE", f"cannot write the book ({exc.strerror or exc})", str(into), "check it is writable"
            ) from exc
        raise

    volume_of = {part.number: part.heading_line.heading.volume for part in split.chapters}
    inline_of = {part.number: part.heading_line.inline for part in split.chapters}
    out: list[ImportedChapter] = []
    for (number, ch_title, heading, line, payload), rec in zip(files, records, strict=True):
        out.append(
            ImportedChapter(
                number=number,
                title=ch_title,
                heading=heading,
                line=line,
                chars=rec.chars,
                paragraphs=rec.paragraphs,
                path=rec.path,
                sha256=sha256_hex(payload),
                volume=volume_of.get(number) if line else None,
                inline=inline_of.get(number) if line else None,
            )
        )
    prologue = out.pop(0) if has_prologue else None
    if unchanged:
        notes.append(f"{len(unchanged)} chapter file(s) were already there with identical content and were kept")
    notes.extend(_inline_notes(split))
    notes.extend(_length_notes(book, out))
    outliers = length_outliers(out)
    notes.extend(_outlier_note(o, split.unit) for o in outliers)
    return ImportReport(
        book=str(book.root),
        source=str(source),
        source_sha256=sha256_hex(data),
        encoding=decoded.encoding,
        line_ending=line_ending,
        unit=split.unit or "",
        initialised=initialised,
        prologue=prologue,
        chapters=out,
        unchanged=unchanged,
        length_outliers=outliers,
        gaps=gaps,
        volumes=[HeadingNote(line=v.line_no, text=v.heading.text) for v in split.volumes],
        other_headings=[HeadingNote(line=o.line_no, text=o.heading.text) for o in split.other_headings],
        notes=notes,
    )


def _refuse_oversized(files: list[tuple[int, str, str, int, bytes]], source: Path, unit: str | None) -> None:
    """IMPORT_CHAPTER_TOO_LARGE when a chapter file would be over `limits.MAX_FILE_BYTES`: no command could read
    it back, and a chapter that size is almost always many chapters under one missed heading."""
    for number, _title, _heading, line, payload in files:
        if len(payload) > MAX_FILE_BYTES:
            raise InputError(
                "IMPORT_CHAPTER_TOO_LARGE",
                f"{chapter_label(unit, number)} (line {line}) would be {len(payload):,} bytes, over the cap of "
                f"{MAX_FILE_BYTES:,} for a chapter file — its headings were probably not recognised",
                str(source),
                "put each chapter heading on a line of its own (第N章 标题) and retry",
            )


def _same_bytes(path: Path, payload: bytes) -> bool:
    try:
        return path.stat().st_size == len(payload) and path.read_bytes() == payload
    except OSError:
        return False


_RULE_WORDS = {
    "untitled": "this book's headings have no titles",
    "indent": "the paragraph indent after the title",
    "separator": "the space after the title (this book's titles all have that many parts)",
    "couplet": "the couplet title's second half is as long as its first",
    "author": "where --split said the text begins",
}


def _inline_notes(split: SplitText) -> list[str]:
    """One note per chapter whose heading ran into its text: where it was split and why."""
    notes = []
    for part in split.chapters:
        hl = part.heading_line
        if hl.inline is not None:
            notes.append(
                f"line {hl.line_no}: the heading of {chapter_label(split.unit, part.number)} and its text were on one "
                "line: split after "
                f"`{hl.heading.text}` ({_RULE_WORDS[hl.inline]}); the text begins `{_excerpt(part.body.strip(), 12)}`"
            )
    return notes


#: A chapter this many times longer than the median, or this many times shorter, is flagged at import.
OUTLIER_FACTOR = 5
#: Fewer chapters than this give no meaningful median.
OUTLIER_MIN_CHAPTERS = 5


def length_outliers(chapters: list[ImportedChapter]) -> list[LengthOutlier]:
    """Chapters over OUTLIER_FACTOR x the median length or under 1/OUTLIER_FACTOR of it: a heading missed
    inside a chapter (merged chapters) shows as a long one, a heading with no text (a stray table of contents)
    as a short one."""
    if len(chapters) < OUTLIER_MIN_CHAPTERS:
        return []
    median = statistics.median(c.chars for c in chapters)
    if median <= 0:
        return []
    return [
        LengthOutlier(number=c.number, chars=c.chars, median=median, ratio=round(c.chars / median, 2))
        for c in chapters
        if c.chars > OUTLIER_FACTOR * median or c.chars * OUTLIER_FACTOR < median
    ]


def _outlier_note(o: LengthOutlier, unit: str | None) -> str:
    label = chapter_label(unit, o.number)
    if o.ratio > 1:
        return (
            f"{label} has {o.chars:,} characters, {o.ratio:.1f}x the median ({o.median:,.0f}): a heading "
            "may be missing inside it (two chapters merged) — check the source around it"
        )
    return (
        f"{label} has only {o.chars:,} characters, under 1/{OUTLIER_FACTOR} of the median "
        f"({o.median:,.0f}): a heading without its text (a table of contents?) — check the source around it"
    )


def _length_notes(book: Book, chapters: list[ImportedChapter]) -> list[str]:
    """Tell the author at once when the book's length limits do not fit the imported chapters."""
    lo, hi = book.config.chapters.min_chars, book.config.chapters.max_chars
    outside = [c for c in chapters if (lo is not None and c.chars < lo) or (hi is not None and c.chars > hi)]
    if not outside:
        return []
    chars = [c.chars for c in chapters]
    return [
        f"{len(outside)} of {len(chapters)} imported chapters are outside the book's length limits "
        f"(min_chars={lo}, max_chars={hi}; the chapters have {min(chars)}–{max(chars)} characters): "
        "`muse check` will report them; change [chapters] in book.toml if those limits are not what you want"
    ]


def _undo_init(root: Path, created: list[str]) -> None:
    """Remove a book this import created (its store too), leaving the directory as it was."""
    state = root / ".muse"
    if state.is_dir():
        for p in sorted(state.rglob("*"), key=lambda q: len(q.parts), reverse=True):
            with contextlib.suppress(OSError):
                p.rmdir() if p.is_dir() else p.unlink()
        with contextlib.suppress(OSError):
            state.rmdir()
    remove_created(root, created)
