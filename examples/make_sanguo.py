#!/usr/bin/env python3
"""Regenerate examples/sanguo/chapters/ (0001.md…0010.md) from the public-domain corpus with `muse import`.

    .venv/bin/python examples/make_sanguo.py            # rewrite the chapter files
    .venv/bin/python examples/make_sanguo.py --check    # exit 1 if the committed files differ

The first ten chapters are the corpus text up to (not including) the line `第十一回…`. They are imported
by novelmuse's own importer into a scratch book, and the chapter files are copied from there, so the
sample book is exactly what `muse import` makes. book.toml and rules.txt are hand-written and not touched.
The corpus is the vendored corpus/sanguo_yanyi.txt.xz (see corpus/README.md).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from novelmuse.book import import_novel
from novelmuse.text import decode_text, find_headings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from corpus import SANGUO as CORPUS  # noqa: E402  (stdlib-only helper beside the package)

TARGET = ROOT / "examples" / "sanguo" / "chapters"
CHAPTERS = 10


def build(scratch: Path) -> dict[str, bytes]:
    """Import the first ten chapters into a scratch book; file name → bytes."""
    text = decode_text(CORPUS.read_bytes(), str(CORPUS)).text
    cut = next(hl.start for hl in find_headings(text) if hl.heading.number == CHAPTERS + 1)
    source = scratch / "三国演义前十回.txt"
    source.write_text(text[:cut], encoding="utf-8")
    report = import_novel(source, scratch / "book", title="三国演义（前十回）")
    assert [c.number for c in report.chapters] == list(range(1, CHAPTERS + 1)), report.chapters
    return {p.name: p.read_bytes() for p in sorted((scratch / "book" / "chapters").glob("*.md"))}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    with tempfile.TemporaryDirectory() as tmp:
        files = build(Path(tmp))
    present = {p.name: p.read_bytes() for p in TARGET.glob("*.md")} if TARGET.is_dir() else {}
    differ = sorted(name for name in files.keys() | present.keys() if files.get(name) != present.get(name))
    if check:
        for name in differ:
            print(f"differs: examples/sanguo/chapters/{name}", file=sys.stderr)
        return 1 if differ else 0
    TARGET.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (TARGET / name).write_bytes(data)
    for name in set(present) - set(files):
        (TARGET / name).unlink()
    print(f"wrote {len(files)} chapter files to {TARGET} ({len(differ)} changed)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
