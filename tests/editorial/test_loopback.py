"""`muse review` over the real openai and anthropic providers against loopback servers (127.0.0.1 only)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from novelmuse.text import split_paragraphs

from ..llm.loopback import Reply, serving
from .helpers import as_json, body_of, db_rows, editor_output, issue, make_book, paragraph_of, unique_sentences

KEY = "sk-editorial-loopback-test-key-0123456789"


MODELS = {"openai": "gpt-4o-mini-2024-07-18", "anthropic": "claude-test-model-1"}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_review_over_loopback_server(tmp_path: Path, muse, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    monkeypatch.setenv("MUSE_TEST_EDITORIAL_KEY", KEY)
    body = body_of(tmp_path)
    quote = unique_sentences(body, 1, skip=8)[0]
    target = paragraph_of(body, quote)
    paras = split_paragraphs(body)
    replies = [
        Reply(status=500),  # a transient failure: resent, same input
        Reply(content={"issues": [issue(quote, "major")], "passed": False}),
        Reply(content={"paragraphs": [{"index": target, "text": paras[target].text.strip() + "(改)"}]}),
        Reply(content={"issues": [], "passed": True}),
        Reply(content=editor_output(body, overall=90)),
    ]
    model = MODELS[kind]
    with serving(kind, *replies) as srv:  # type: ignore[arg-type]
        book = make_book(
            tmp_path / "b",
            extra_toml=(
                f'[providers.p]\nkind = "{kind}"\nbase_url = "{srv.base_url}"\n'
                'api_key_env = "MUSE_TEST_EDITORIAL_KEY"\n'
                f'timeout_s = 5\n[roles]\ndefault = "p:{model}"\n'
                f'[prices."{model}"]\ninput = 0.15\noutput = 0.6\n'
            ),
        )
        r = muse("review", "1", "--yes", "--book", book, "--json")
        assert r.exit_code == 0, r.stderr
        assert srv.count == 5
    ch = as_json(r.stdout)["chapters"][0]
    assert ch["status"] == "finalized"
    assert [s["step"] for s in ch["steps"]] == [
        "rules",
        "consistency_review",
        "repair",
        "re_review",
        "editor_review",
        "facts",  # skipped(revision not applied): no extractor request reached the server
    ]
    usage = ch["usage"]
    assert usage["calls"] == 4 and usage["attempts"] == 5
    assert usage["cost"] is not None and usage["cost"] > 0
    assert usage["by_role"]["reviewer"]["attempts"] == 3
    assert KEY not in r.stdout and KEY not in r.stderr


def test_apply_refuses_a_file_the_author_edited_during_the_review(
    tmp_path: Path, muse, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`muse review 1 --apply`: the author saves the chapter while the writer is still answering. The revision
    is kept, the author's bytes are not overwritten, and the command says so in one line (exit 2)."""
    monkeypatch.setenv("MUSE_TEST_EDITORIAL_KEY", KEY)
    body = body_of(tmp_path)
    quote = unique_sentences(body, 1, skip=8)[0]
    target = paragraph_of(body, quote)
    paras = split_paragraphs(body)
    model = MODELS["openai"]
    replies = [
        Reply(content={"issues": [issue(quote, "major")], "passed": False}),
        Reply(content={"paragraphs": [{"index": target, "text": paras[target].text.strip() + "(改)"}]}, delay_s=1.5),
        Reply(content={"issues": [], "passed": True}),
        Reply(content=editor_output(body, overall=90)),
    ]
    with serving("openai", *replies) as srv:
        book = make_book(
            tmp_path / "b",
            extra_toml=(
                f'[providers.p]\nkind = "openai"\nbase_url = "{srv.base_url}"\n'
                f'api_key_env = "MUSE_TEST_EDITORIAL_KEY"\ntimeout_s = 10\n[roles]\ndefault = "p:{model}"\n'
            ),
        )
        path = book / "chapters" / "0001.md"
        edited = path.read_bytes() + "作者在审稿途中加的一句。\n".encode()

        def author_saves() -> None:  # once the writer's request is in, the author saves the file
            deadline = time.monotonic() + 10
            while srv.count < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            path.write_bytes(edited)

        t = threading.Thread(target=author_saves)
        t.start()
        r = muse("review", "1", "--apply", "--yes", "--book", book)
        t.join()
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert "error[FILE_CHANGED_ON_DISK]" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert path.read_bytes() == edited  # the author's edit is the source of truth
    (text,) = db_rows(book, "SELECT text FROM revisions")[0]  # the review's result is kept, not applied
    assert "(改)" in text and "作者在审稿途中加的一句" not in text


def test_a_refused_port_is_named_in_the_one_error_line(tmp_path: Path, muse, monkeypatch: pytest.MonkeyPatch) -> None:
    """A typo'd port reads as what it is — `connection refused at <base_url>` — not as a provider outage."""
    import socket

    monkeypatch.setenv("MUSE_TEST_EDITORIAL_KEY", KEY)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once the socket is closed
    url = f"http://127.0.0.1:{port}/v1"
    book = make_book(
        tmp_path / "b",
        extra_toml=(
            f'[providers.ds]\nkind = "openai"\nbase_url = "{url}"\napi_key_env = "MUSE_TEST_EDITORIAL_KEY"\n'
            '[roles]\ndefault = "ds:deepseek-chat"\n'
        ),
    )
    r = muse("review", "1", "--yes", "--book", book)
    assert r.exit_code == 3
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("error[MODEL_CONNECTION]: ") and f"connection refused at {url}" in line, line
    assert "[providers.ds]" in line
