"""What a person reads from `muse review` in the terminal: locations they can open (file:line), the book's own
chapter labels, a run summary that says what really happened, and a character-level --diff."""

from __future__ import annotations

from pathlib import Path

from novelmuse.text import split_paragraphs

from .helpers import as_json, body_of, editor_output, issue, make_book, paragraph_of, unique_sentences


def _line(body: str, offset: int) -> int:
    """The file line of a body offset under a `# heading` line (the naive count)."""
    return 2 + body.count("\n", 0, offset)


def test_issue_and_evidence_locations_name_the_file_that_holds_the_text(tmp_path: Path, muse) -> None:
    """A first review's issue is located in the chapter file; a re-review's in the revision file (the text it
    read), each as `path:line` beside ¶paragraph@offset; the JSON keeps the offsets."""
    body = body_of(tmp_path)
    quote = unique_sentences(body, 1, skip=8)[0]
    target = paragraph_of(body, quote)
    paras = split_paragraphs(body)
    new_text = paras[target].text.strip() + "(改)"
    repaired = body[: paras[target].start] + new_text + body[paras[target].end :]
    late = unique_sentences(repaired, 1, skip=20)[0]
    editor = editor_output(repaired)
    book = make_book(
        tmp_path / "b",
        script={
            "reviewer": [
                {"output": {"issues": [issue(quote, "major")], "passed": False}},
                {"output": {"issues": [issue(late, "minor")], "passed": True}},
            ],
            "writer": [{"output": {"paragraphs": [{"index": target, "text": new_text}]}}],
            "editor": [{"output": editor}],
        },
    )
    r = muse("review", "1", "--book", book)
    assert r.exit_code == 0, r.stderr
    rev = next(line.split()[1] for line in r.stdout.splitlines() if line.startswith("revision "))
    flat = " ".join(r.stdout.split())
    start = body.index(quote)
    assert f"chapters/0001.md:{_line(body, start)} ¶{target}@{start}-{start + len(quote)}" in flat, r.stdout
    late_at = repaired.index(late)
    assert f"{rev}:{_line(repaired, late_at)} ¶" in flat, r.stdout
    first_evidence = next(iter(editor["dims"].values()))["evidence"]
    assert f"{rev}:{_line(repaired, repaired.index(first_evidence))}" in flat, r.stdout
    doc = as_json(muse("review", "1", "--book", book, "--json").stdout)  # resumed: the same record
    assert "md:" not in str(doc["chapters"][0]["consistency"])  # offsets only in JSON
