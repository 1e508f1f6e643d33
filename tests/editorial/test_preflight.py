"""`muse review` agrees with `muse check` about length, and never sends what cannot be sent: a chapter over the
book's max length, or a request the model's context or the budget cannot hold, is refused before any request
(the loopback server counts 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from novelmuse.text import count_chars, split_paragraphs

from ..llm.loopback import Reply, serving
from .helpers import (
    as_json,
    body_of,
    editor_output,
    issue,
    make_book,
    paragraph_of,
    receipts_by_role,
    unique_sentences,
)

KEY = "sk-editorial-preflight-key-0123456789"
SENTENCE = "却说张飞拍马赶到关下，关上矢石如雨，不得进而回。"


def _chapter(chars: int) -> str:
    """A body of exactly `chars` counted characters (text.count_chars), in paragraphs of about 300."""
    out, para, n = [], "", 0
    while n < chars:
        ch = SENTENCE[n % len(SENTENCE)]
        para += ch
        n += 1
        if len(para) >= 300:
            out.append(para)
            para = ""
    out.append(para)
    body = "\n".join(p for p in out if p) + "\n"
    assert count_chars(body) == chars
    return body


def _book(root: Path, chars: int, *, toml: str = "", limits: str = "[chapters]\nmax_chars = 6000\n") -> Path:
    book = make_book(root, extra_toml=limits + toml)
    (book / "chapters" / "0001.md").write_text("# 第一回　长章\n" + _chapter(chars), encoding="utf-8")
    return book


def _served(url: str, model: str = "deepseek-chat") -> str:
    return (
        f'[providers.p]\nkind = "openai"\nbase_url = "{url}"\napi_key_env = "MUSE_TEST_PREFLIGHT_KEY"\ntimeout_s = 5\n'
        f'[roles]\ndefault = "p:{model}"\n'
    )


def test_review_reports_length_like_check(tmp_path: Path, muse) -> None:
    """check fails a chapter at 7,241 > 6,000 characters; review's rule step says the same (no model: nothing is
    sent, so nothing is refused), and the chapter's open issue makes it exit 1 like check."""
    book = _book(tmp_path / "b", 7241)
    check = muse("check", "--book", book, "--json")
    assert check.exit_code == 1
    length = json.loads(check.stdout)["chapters"][0]["length"]
    r = muse("review", "1", "--book", book, "--json")
    assert r.exit_code == 1, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    rules = next(s for s in ch["steps"] if s["step"] == "rules")
    assert rules["status"] == "failed" and "length 7241 > max_chars 6000" in rules["detail"], rules
    assert ch["rules"]["length"] == length  # the very same outcome as check's
    assert ch["open_issues"] == 1
    human = muse("review", "1", "--book", book)
    assert "length 7241 > max_chars 6000" in human.stdout


def test_a_chapter_within_its_limits_passes_the_rule_step_and_says_so(tmp_path: Path, muse) -> None:
    book = _book(tmp_path / "b", 5000)
    ch = as_json(muse("review", "1", "--book", book, "--json").stdout)["chapters"][0]
    rules = next(s for s in ch["steps"] if s["step"] == "rules")
    assert rules["status"] == "passed" and "length 5000 within max_chars 6000" in rules["detail"], rules
    assert ch["rules"]["length"]["outcome"] == "passed" and ch["open_issues"] == 0


def test_a_chapter_over_max_length_is_refused_before_any_request(
    tmp_path: Path, muse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSE_TEST_PREFLIGHT_KEY", KEY)
    with serving("openai") as srv:
        book = _book(tmp_path / "b", 30_000, toml=_served(srv.base_url))
        r = muse("review", "1", "--book", book)
        assert srv.count == 0
    assert r.exit_code == 2
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("error[CHAPTER_TOO_LONG]: ") and "30000 > max_chars 6000" in line, line
    assert "chapters/0001.md" in line and " — " in line
    assert not (book / ".muse" / "revisions").exists()


def test_a_range_names_every_chapter_that_cannot_be_sent_and_sends_nothing(
    tmp_path: Path, muse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSE_TEST_PREFLIGHT_KEY", KEY)
    with serving("openai") as srv:
        book = _book(tmp_path / "b", 3000, toml=_served(srv.base_url))
        for n, chars in ((2, 9000), (3, 4000), (4, 12_000)):
            (book / "chapters" / f"{n:04d}.md").write_text(f"# 第{n}回\n" + _chapter(chars), encoding="utf-8")
        r = muse("review", "--range", "1-4", "--book", book, "--json")
        assert srv.count == 0
    assert r.exit_code == 2
    err = json.loads(r.stdout)["error"]
    assert err["code"] == "CHAPTER_TOO_LONG" and "第2回" in err["what"] and "第4回" in err["what"], err


def test_a_request_over_the_models_context_is_refused_before_any_request(
    tmp_path: Path, muse, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No length limit; the endpoint's window (book.toml) cannot hold the chapter: refused up front, exit 3 like
    the policy's own refusal, naming the role, the model and the window."""
    monkeypatch.setenv("MUSE_TEST_PREFLIGHT_KEY", KEY)
    with serving("openai") as srv:
        toml = _served(srv.base_url) + '[context_windows]\n"p:deepseek-chat" = 16000\n'
        book = _book(tmp_path / "b", 8000, toml=toml, limits="")
        r = muse("review", "1", "--book", book)
        assert srv.count == 0
    assert r.exit_code == 3
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("error[MODEL_CONTEXT_EXCEEDED]: ") and "16,000-token context of deepseek-chat" in line
    assert "reviewer" in line and "第1回" in line, line


def test_a_request_the_budget_cannot_hold_is_refused_before_any_request(
    tmp_path: Path, muse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUSE_TEST_PREFLIGHT_KEY", KEY)
    with serving("openai") as srv:
        toml = _served(srv.base_url) + "[budget]\nmax_tokens = 20000\n"
        book = _book(tmp_path / "b", 5000, toml=toml)
        r = muse("review", "1", "--book", book)
        assert srv.count == 0
    assert r.exit_code == 3
    assert "error[BUDGET_EXCEEDED]: " in r.stderr and "max_tokens 20,000" in r.stderr, r.stderr


def test_the_plan_is_said_before_the_run_and_an_unknown_context_is_named(
    tmp_path: Path, muse, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What review will send is estimated up front (stderr, and the JSON's preflight): requests, an upper bound
    of their input tokens, the worst-case cost — and a model whose context window is unknown is said to be."""
    monkeypatch.setenv("MUSE_TEST_PREFLIGHT_KEY", KEY)
    body = body_of(tmp_path)
    facts = Reply(content={"events": [], "foreshadows": [], "relations": [], "states": []})
    replies = [Reply(content={"issues": [], "passed": True}), Reply(content=editor_output(body, overall=90))]
    with serving("openai", *replies, default=facts) as srv:
        toml = _served(srv.base_url, "my-local-model") + '[prices."my-local-model"]\ninput = 1.0\noutput = 2.0\n'
        book = make_book(tmp_path / "b", extra_toml=toml)
        r = muse("review", "1", "--yes", "--book", book, "--json")
        srv.queue(*replies)
        human = muse(
            "review", "1", "--yes", "--book", book, "--force"
        )  # the plan is said before the run, in the terminal
    assert r.exit_code == 0, r.stderr
    assert human.exit_code == 0, human.stderr
    plan = as_json(r.stdout)["preflight"]
    assert plan["chapters"] == [1] and plan["requests"] >= 2
    assert plan["input_tokens"] >= 2 * len(body.encode("utf-8"))  # reviewer and editor each carry the chapter
    assert plan["cost"] is not None and plan["cost"] > 0
    assert plan["unknown_context"] == ["p:my-local-model"]
    assert plan["notes"] == [
        "the context window of p:my-local-model is unknown: its requests are not checked against one"
        ' (add "p:my-local-model" = tokens under [context_windows] in book.toml)'
    ]
    assert human.stdout.startswith("review: 1 chapter(s) for the models; first 2 request(s)"), human.stdout
    assert "note: the context window of p:my-local-model is unknown" in human.stdout


def test_apply_on_a_chapter_edited_since_its_review_needs_rerun(tmp_path: Path, muse) -> None:
    """`--apply` means "apply what the review produced". After the author edited the chapter that review is for
    other bytes, and applying would first run a new, paid review: review says so and waits for --rerun."""
    body = body_of(tmp_path)
    quote = unique_sentences(body, 1, skip=8)[0]
    target = paragraph_of(body, quote)
    paras = split_paragraphs(body)
    edits = {"paragraphs": [{"index": target, "text": paras[target].text.strip() + "(改)"}]}
    clean = {"output": {"issues": [], "passed": True}}
    script = {
        "reviewer": [{"output": {"issues": [issue(quote, "major")], "passed": False}}, clean, clean],
        "writer": [{"output": edits}],
        "editor": [{"output": editor_output(body)}] * 2,
    }
    book = make_book(tmp_path / "b", script=script)
    assert muse("review", "1", "--book", book).exit_code == 0  # a revision is stored, not applied
    chapter = book / "chapters" / "0001.md"
    edited = chapter.read_text(encoding="utf-8").replace(quote, quote + "（作者补一句）")
    chapter.write_text(edited, encoding="utf-8")
    before = receipts_by_role(book)

    r = muse("review", "1", "--book", book, "--apply")
    assert r.exit_code == 2
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("error[CHAPTER_EDITED_SINCE_REVIEW]: 第1回 was edited since its review"), line
    assert "--rerun" in line and "chapters/0001.md" in line
    assert receipts_by_role(book) == before and chapter.read_text(encoding="utf-8") == edited  # nothing sent, kept
    doc = as_json(muse("review", "1", "--book", book, "--apply", "--json").stdout)
    assert doc["error"]["code"] == "CHAPTER_EDITED_SINCE_REVIEW"

    r = muse("review", "1", "--book", book, "--apply", "--rerun", "--json")  # asked for: reviewed again
    assert r.exit_code == 0, r.stderr
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["resumed"] is False and ch["status"] == "finalized", ch["steps"]
    assert ch["revision"]["applied"] is True and chapter.read_bytes() == (book / ch["revision"]["path"]).read_bytes()
    assert receipts_by_role(book)["reviewer"] > before["reviewer"]


def test_apply_without_an_earlier_review_or_with_a_current_one_needs_no_rerun(tmp_path: Path, muse) -> None:
    script = {
        "reviewer": [{"output": {"issues": [], "passed": True}}],
        "editor": [{"output": editor_output(body_of(tmp_path))}],
    }
    book = make_book(tmp_path / "b", script=script)
    assert muse("review", "1", "--book", book, "--apply").exit_code == 0  # the first review of the chapter
    assert muse("review", "1", "--book", book, "--apply").exit_code == 0  # resumed: nothing new is paid for
