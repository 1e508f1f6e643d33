"""`muse export`: the book as one file — TXT (round trip: `muse import` of it gives the same chapter files),
Markdown, or EPUB 3 (table of contents, metadata from book.toml; written with EbookLib).

Chapter headings are written as imported (the file's ``# `` line) and the text exactly as in the chapter
files. The TXT export is checked before it is written: splitting it again with the importer's own rule must
give back every chapter's heading and body; where it cannot (a chapter without a heading line, a body that
does not end with a line break, a line inside a body that reads as a heading) the export says so.
"""

from __future__ import annotations

import io
import uuid
from importlib import resources
from pathlib import Path
from typing import Literal

from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import BaseModel

from ..book import Book, Chapter, atomic_write_bytes, read_chapter_file
from ..errors import InputError
from ..text import sha256_hex, split_chapters, split_paragraphs

Format = Literal["txt", "md", "epub"]
PROLOGUE_HEADING = "序"  # the importer's heading for text before the first chapter (chapter 0)


class ExportResult(BaseModel):
    """`muse export --json`."""

    schema_version: int = 1
    ok: bool = True
    format: str
    out: str
    chapters: list[int]
    bytes: int
    sha256: str
    round_trip: Literal["verified", "not_exact", "not_applicable"]  # txt: `muse import` gives these files back
    warnings: list[str]


def _is_prologue(ch: Chapter) -> bool:
    return ch.number == 0 and ch.heading == PROLOGUE_HEADING


def compose_txt(chapters: list[Chapter]) -> tuple[str, list[str]]:
    """The TXT of `chapters` and the reasons, if any, why importing it would not give the same files."""
    pieces: list[str] = []
    warnings: list[str] = []
    for k, ch in enumerate(chapters):
        if not _is_prologue(ch):
            if not ch.heading:
                warnings.append(f"chapter {ch.number} has no heading line: `{ch.title}` was written for it")
            newline = "\r\n" if "\r\n" in ch.body else "\n"  # a CRLF book keeps CRLF (the importer strips it)
            pieces.append(f"{ch.heading or ch.title}{newline}")
        pieces.append(ch.body)
        if k + 1 < len(chapters) and ch.body and not ch.body.endswith("\n"):
            pieces.append("\n")
            warnings.append(
                f"chapter {ch.number} does not end with a line break: one was added before the next heading"
            )
    text = "".join(pieces)
    warnings += _verify(text, chapters)
    return text, warnings


def _verify(text: str, chapters: list[Chapter]) -> list[str]:
    """Split `text` as `muse import` does and name every chapter that would not come back as it is."""
    split = split_chapters(text)
    expected = [c for c in chapters if not _is_prologue(c)]
    prologue = next((c.body for c in chapters if _is_prologue(c)), "")
    out: list[str] = []
    if split.prologue != prologue and (split.prologue.strip() or prologue.strip()):
        out.append("the text before the first heading would not be read back as the prologue")
    got = {p.number: p for p in split.chapters}
    if [p.number for p in split.chapters] != [c.number for c in expected]:
        extra = sorted(set(got) - {c.number for c in expected})
        if extra:
            out.append(f"lines inside the text read as chapter headings on import: 第{extra[0]}… ({len(extra)} in all)")
    for c in expected:
        part = got.get(c.number)
        if part is None:
            out.append(f"chapter {c.number}'s heading `{c.heading}` is not read as a chapter heading on import")
        elif part.heading_line.heading.text != c.heading or part.body != c.body:
            out.append(f"chapter {c.number} would not be read back byte for byte")
    return out


def _env() -> Environment:
    return Environment(
        loader=PackageLoader("novelmuse.reports.html", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def compose_md(book: Book, chapters: list[Chapter]) -> str:
    """Markdown: the book title as `#`, each chapter heading as `##`, paragraphs as in the files."""
    parts = [f"# {book.config.book.title}\n"]
    if book.config.book.author:
        parts.append(f"\n{book.config.book.author}\n")
    for ch in chapters:
        parts.append(f"\n## {ch.title}\n")
        parts.append(ch.body if ch.body.endswith("\n") or not ch.body else ch.body + "\n")
    return "".join(parts)


def compose_epub(book: Book, chapters: list[Chapter]) -> bytes:
    """EPUB 3 (the file's bytes) with a navigation document and an NCX, one XHTML file per chapter, metadata
    from book.toml."""
    from ebooklib import epub

    meta = book.config.book
    digest = sha256_hex("\0".join(f"{c.number}:{c.sha256}" for c in chapters) + meta.title)
    out = epub.EpubBook()
    out.set_identifier(f"urn:uuid:{uuid.UUID(digest[:32])}")
    out.set_title(meta.title)
    out.set_language(meta.language or "zh")
    if meta.author:
        out.add_author(meta.author)
    style = epub.EpubItem(
        uid="style",
        file_name="style.css",
        media_type="text/css",
        content=(resources.files("novelmuse.reports.html") / "templates" / "epub.css").read_bytes(),
    )
    out.add_item(style)
    template = _env().get_template("epub_chapter.xhtml")
    items = []
    for ch in chapters:
        item = epub.EpubHtml(title=ch.title, file_name=f"chapter-{ch.number:04d}.xhtml", lang=meta.language or "zh")
        paragraphs = [p.text.strip() for p in split_paragraphs(ch.body)]
        item.content = template.render(title=ch.title, paragraphs=paragraphs)
        item.add_item(style)
        out.add_item(item)
        items.append(item)
    out.toc = items
    out.add_item(epub.EpubNcx())
    out.add_item(epub.EpubNav())
    out.spine = ["nav", *items]
    buffer = io.BytesIO()
    epub.write_epub(buffer, out, {})
    return buffer.getvalue()


def export_book(
    book: Book,
    fmt: Format,
    out: Path | None = None,
    *,
    span: tuple[int, int] | None = None,
    force: bool = False,
) -> ExportResult:
    """Write the selected chapters as one file; an existing file is replaced only with `force`."""
    numbers = book.select_chapters(None, span)
    if not numbers:
        raise InputError("EXPORT_EMPTY", "the book has no chapters to export", str(book.chapters_dir), "add chapters")
    paths = book.chapter_paths()
    chapters = [read_chapter_file(n, paths[n]) for n in numbers]
    safe = "".join(ch for ch in book.config.book.title if ch not in '/\\:*?"<>|').strip() or "book"
    path = (out or Path.cwd() / f"{safe}.{fmt}").resolve()
    if path.is_dir():
        raise InputError("EXPORT_OUT", f"{path} is a folder", "--out", "name a file")
    if path.exists() and not force:
        raise InputError("EXPORT_EXISTS", f"{path} already exists", "--out", "choose another file or add --force")
    warnings: list[str] = []
    round_trip: Literal["verified", "not_exact", "not_applicable"] = "not_applicable"
    if fmt == "txt":
        text, warnings = compose_txt(chapters)
        round_trip = "not_exact" if warnings else "verified"
        data = text.encode("utf-8")
    elif fmt == "md":
        data = compose_md(book, chapters).encode("utf-8")
    else:
        data = compose_epub(book, chapters)
    atomic_write_bytes(path, data)
    return ExportResult(
        format=fmt,
        out=str(path),
        chapters=numbers,
        bytes=len(data),
        sha256=sha256_hex(data),
        round_trip=round_trip,
        warnings=warnings,
    )
