"""Line numbers of character offsets: how a location is shown to a person (``chapters/0023.md:17``)."""

from __future__ import annotations

from bisect import bisect_right


class LineIndex:
    """The 1-based line of any character offset in one text, in O(log lines) after one pass over the text.

    `first_line` is the line the text starts on in its file: a chapter body starts on line 2 under its heading
    line. A line break belongs to the line it ends (``\\r\\n`` too); an offset at the very end is on the last line.
    """

    __slots__ = ("_starts", "first_line")

    def __init__(self, text: str, first_line: int = 1) -> None:
        starts = [0]
        pos = text.find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = text.find("\n", pos + 1)
        self._starts = starts
        self.first_line = first_line

    def line(self, offset: int) -> int:
        """The line holding character `offset` (counted from `first_line`)."""
        return self.first_line + bisect_right(self._starts, offset) - 1
