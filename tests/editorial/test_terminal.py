"""What a person reads from `muse review` in the terminal: locations they can open (file:line), the book's own
chapter labels, a run summary that says what really happened, and a character-level --diff."""

from __future__ import annotations

from pathlib import Path

from novelmuse.text import split_paragraphs

from .helpers import as_json, body_of, editor_output, issue, make_book, paragraph_of, requests_of, unique_sentences


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


def _long_paragraph_book(root: Path, *, heading: str = "第一回　长段") -> tuple[Path, str, int]:
    """A chapter whose middle paragraph is 1,800 characters holding the forbidden 后宫 once; the scripted writer
    replaces those two characters (内廷) and nothing else."""
    sentences = "".join(f"第{i}句说的是城中旧事，无甚紧要。" for i in range(1, 200))
    para = (sentences[:890] + "后宫" + sentences[890:])[:1800]
    body = f"开篇一句。\n{para}\n末了一句。\n"
    edited = para.replace("后宫", "内廷")
    make_book(
        root,
        script={
            "reviewer": [{"output": {"issues": [], "passed": True}}] * 2,
            "writer": [{"output": {"paragraphs": [{"index": 1, "text": edited}]}}],
        },
        rules="禁止:后宫\n",
    )
    (root / "chapters" / "0001.md").write_text(f"# {heading}\n{body}", encoding="utf-8")
    return root, para, len(para)


def test_diff_shows_a_two_character_edit_inside_a_long_paragraph(tmp_path: Path, muse) -> None:
    book, _, size = _long_paragraph_book(tmp_path / "b")
    assert size == 1800
    r = muse("review", "1", "--book", book, "--no-editor", "--diff")
    assert r.exit_code == 0, r.stderr
    diff = r.stdout[r.stdout.index("--- ") :]
    assert "[-后宫-]{+内廷+}" in diff, diff  # the two characters, marked (colour aside)
    assert len(diff) < 600, diff  # the 1,800-character paragraph is not printed whole, let alone twice
    assert "后宫" not in diff.replace("[-后宫-]", "")
    assert ":3" in diff.splitlines()[2]  # the hunk names its file line (heading 1, 开篇 2, the paragraph 3)


def test_a_book_of_hui_says_hui_in_the_terminal_and_in_every_prompt(tmp_path: Path, muse) -> None:
    """三国演义's headings are 第N回: the review names chapter 1 第1回 on screen and in what the models read."""
    book, _, _ = _long_paragraph_book(tmp_path / "b")
    (book / "chapters" / "0002.md").write_text("无标题的一章。\n", encoding="utf-8")  # no heading line: the label
    r = muse("review", "--range", "1-2", "--book", book, "--no-editor", "--diff")
    assert r.exit_code == 0, r.stderr
    assert "第1回" in r.stdout and "第2回" in r.stdout and "章" not in r.stdout.replace("一章", ""), r.stdout
    prompts = [
        m["content"] for role in ("reviewer", "writer", "extractor") for req in requests_of(book, role) for m in req
    ]
    assert prompts and all("第 1 章" not in p and "第1章" not in p and "第2章" not in p for p in prompts)
    assert any("第1回" in p for p in prompts) and any("第2回" in p for p in prompts)


def test_a_range_without_a_model_says_nothing_was_reviewed(tmp_path: Path, muse) -> None:
    """`review --range` with no model runs the hard rules only: the summary says so — never "2 reviewed … 3 not
    reviewed" — and counts the chapters it left alone as unchanged, not as reviewed."""
    book = make_book(tmp_path / "b", chapters=3)
    assert muse("review", "1", "--book", book).exit_code == 4  # not evaluated: no model
    r = muse("review", "--range", "1-3", "--book", book)
    assert r.exit_code == 4, r.stderr
    summary = r.stdout.strip().splitlines()[-1]
    assert summary.startswith("3 chapter(s): none reviewed by a model (no model configured)"), summary
    assert "hard rules run on 2" in summary and "1 unchanged since its last run" in summary, summary
    assert "reviewed now" not in summary and " 2 reviewed" not in summary


def test_a_range_with_a_model_says_what_was_reviewed_now(tmp_path: Path, muse) -> None:
    bodies = [body_of(tmp_path, n) for n in (1, 2)]
    script = {
        "reviewer": [{"output": {"issues": [], "passed": True}, "match": f"【第{n}回 ·"} for n in (1, 2)],
        "editor": [{"output": editor_output(b), "match": f"【第{n}回 ·"} for n, b in zip((1, 2), bodies, strict=True)],
    }
    book = make_book(tmp_path / "b", chapters=2, script=script)
    assert muse("review", "1", "--book", book).exit_code == 0
    summary = muse("review", "--range", "1-2", "--book", book).stdout.strip().splitlines()[-1]
    assert summary.startswith("2 chapter(s): 1 reviewed now, 1 unchanged since its last run (not run again)"), summary
    assert "2 finalized" in summary, summary
