"""Terminal locations in the chapter files as they are now: ``chapters/0023.md:17`` (`Chapter.file_line`)."""

from __future__ import annotations

from ..book import Book, Chapter, read_chapter_file
from ..errors import MuseError


class ChapterLines:
    """Turns (chapter, offset) into ``path:line`` for offsets into a chapter file's current body — only when the
    file still holds what the offsets were computed on (its sha256, or the very text at the offset); otherwise
    None, and the offsets are shown alone. Each chapter is found without listing the folder and read once."""

    def __init__(self, book: Book):
        self.book = book
        self._read: dict[int, Chapter | None] = {}

    def _chapter(self, number: int) -> Chapter | None:
        if number not in self._read:
            try:
                path = self.book.probe_chapter_file(number)
                self._read[number] = None if path is None else read_chapter_file(number, path)
            except MuseError:
                self._read[number] = None
        return self._read[number]

    def at(self, number: int, start: int, *, sha256: str | None = None, text: str | None = None) -> str | None:
        """``chapters/0023.md:17`` for body offset `start` of chapter `number`, or None when the file changed."""
        chapter = self._chapter(number)
        if chapter is None or (sha256 is not None and chapter.sha256 != sha256):
            return None
        if text is not None and chapter.body[start : start + len(text)] != text:
            return None
        try:
            path = str(chapter.path.relative_to(self.book.root))
        except ValueError:
            path = str(chapter.path)
        return f"{path}:{chapter.file_line(start)}"
